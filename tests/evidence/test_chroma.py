"""Collection naming and the Chroma collection settings (no model)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from deepcritical.evidence import chroma
from deepcritical.models import Grade
from helpers.stores import make_evidence, settings_for

CHROMA_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]{1,61}[a-zA-Z0-9]$")
RUN_IDS = [
    "run-1",
    "2024-05-01T10:00:00Z",
    "metformin & alzheimer's?",
    "ümlaut-run",
    "x" * 200,
    "-leading-and-trailing-",
    "a",
    "!!!",
    "run..dots",
]


@pytest.mark.parametrize("run_id", RUN_IDS)
def test_run_collection_names_follow_chroma_rules(run_id: str) -> None:
    name = chroma.run_collection_name(run_id)
    assert CHROMA_NAME.match(name), name
    assert ".." not in name
    assert name != chroma.LIBRARY_COLLECTION


def test_different_run_ids_get_different_collections() -> None:
    names = {chroma.run_collection_name(run_id) for run_id in [*RUN_IDS, "run/1", "run 1", "run:1", "x" * 201]}
    assert len(names) == len(RUN_IDS) + 4


def test_a_clean_run_id_is_kept_readable() -> None:
    assert chroma.run_collection_name("2024-05-01_metformin") == "run-2024-05-01_metformin"


def test_blank_run_id_is_rejected() -> None:
    with pytest.raises(ValueError, match="run_id"):
        chroma.run_collection_name("  ")


def test_collections_are_cosine_without_an_embedding_function(tmp_path: Path) -> None:
    connection = chroma.connect(settings_for(tmp_path))
    try:
        names = [chroma.run_collection_name(run_id) for run_id in RUN_IDS]
        for name in names:
            chroma.open_collection(connection, name, "some-model")
        chroma.open_collection(connection, names[0], "some-model")
        with connection.session(touches=names[:1], writes=True) as session:
            collection = session.collection(names[0])
            assert collection.configuration_json["hnsw"]["space"] == "cosine"
            assert collection.configuration_json["embedding_function"] == {"type": "legacy"}
            # Documents without vectors must be refused, not embedded by a default (downloading) model.
            document, metadata = chroma.encode(make_evidence("1", "text"))
            with pytest.raises(ValueError, match=r"(?i)embedding"):
                collection.add(ids=["pmid:1"], documents=[document], metadatas=[metadata])
    finally:
        connection.close()


def test_records_round_trip_through_their_document() -> None:
    item = make_evidence("7", "Résumé: ¬ ASCII — ✓", title="Ein Titel")
    document, metadata = chroma.encode(item)
    assert chroma.decode(document) == item
    assert metadata == {
        "source": "pubmed",
        "title": "Ein Titel",
        "design": "unknown",
        "population": "unknown",
        "grade_basis": "none",
        "retracted": False,
        "expression_of_concern": False,
    }


def test_grade_and_retraction_round_trip_and_are_filterable_metadata(tmp_path: Path) -> None:
    grade = Grade(
        design="randomized_controlled_trial",
        level=2,
        population="humans",
        basis="publication_type",
        phase="2/3",
        sample_size=80,
    )
    trial = make_evidence("8", "A trial.").model_copy(update={"grade": grade, "retracted": True})
    web = make_evidence("9", "A page.", pmid=False).model_copy(update={"grade": Grade(design="web", basis="source")})
    document, metadata = chroma.encode(trial)
    assert chroma.decode(document) == trial
    assert chroma.decode(document).grade.label == "randomised controlled trial (phase 2/3), humans, n = 80"
    assert metadata["design"] == "randomized_controlled_trial"
    assert metadata["level"] == 2
    assert metadata["retracted"] is True
    assert "level" not in chroma.encode(web)[1]  # outside the scale: Chroma takes no None
    connection = chroma.connect(settings_for(tmp_path))
    try:
        chroma.open_collection(connection, "run-grades", "some-model")
        with connection.session(touches=["run-grades"], writes=True) as session:
            collection = session.collection("run-grades")
            chroma.upsert(collection, 10, [trial, web], np.ones((2, 4), dtype=np.float32))
            found = collection.get(where={"level": {"$lte": 2}}, include=["documents"])
            assert found["ids"] == [trial.id]
            assert collection.get(where={"retracted": True})["ids"] == [trial.id]
            assert collection.get(where={"design": "web"})["ids"] == [web.id]
    finally:
        connection.close()
