"""One contract, three stores: the loop's tests use ``FakeStore``, runs use ``EvidenceStore``, an evaluation
``MemoryStore``. Every test here runs against each, so no store can drift from what the real store does (add,
merge of a better record, de-duplication, selection for the judge)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from deepcritical.config import Settings
from deepcritical.evidence import EmbeddingService, EvidenceStore
from deepcritical.evidence.memory import MemoryStore
from deepcritical.models import Evidence, Grade
from deepcritical.stages.ports import EvidenceStoreLike
from helpers.builders import evidence
from helpers.research_fakes import FakeStore


def item(
    key: str, content: str, title: str, *, source: str = "pubmed", pmid: str | None = None, **more: object
) -> Evidence:
    return evidence(content, pmid=pmid, source=source, title=title, url=f"https://example.org/{key}", **more)  # type: ignore[arg-type]


METFORMIN = item(
    "101", "Metformin reduces the risk of Alzheimer's disease in type 2 diabetes.", "Metformin and AD", pmid="101"
)
STATINS = item("103", "Statin therapy lowers LDL cholesterol and cardiovascular events.", "Statins and LDL", pmid="103")
# The same text under another identity: a copy of the study's abstract on a web page.
METFORMIN_COPY = item("copy", METFORMIN.content, "Metformin and AD (copy)", source="web")
# A web page at a study's DOI, and the graded PubMed record of that study.
PAGE = item(
    "page", "News: exercise improves memory in older adults.", "Exercise and memory", source="web", doi="10.5555/ex.1"
)
RECORD = item(
    "record",
    "Randomised trial: aerobic exercise improved memory in 120 older adults.",
    "Exercise trial",
    pmid="555",
    doi="10.5555/ex.1",
).model_copy(update={"grade": Grade(design="randomized_controlled_trial", level=2, basis="publication_type")})


@pytest.fixture(
    params=["fake", pytest.param("real", marks=pytest.mark.model), pytest.param("memory", marks=pytest.mark.model)]
)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[EvidenceStoreLike]:
    if request.param == "fake":
        yield FakeStore()
        return
    if request.param == "memory":  # the store an evaluation gives each question
        memory = MemoryStore(EmbeddingService())
        yield memory
        await memory.close()
        return
    settings = Settings(DEEPCRITICAL_HOME=str(tmp_path), CHROMA_HOST=None)  # type: ignore[call-arg]
    real = await EvidenceStore.open(settings, EmbeddingService(), "run-contract")
    try:
        yield real
    finally:
        await real.close()


async def test_add_counts_new_items_once(store: EvidenceStoreLike) -> None:
    assert await store.add([METFORMIN, STATINS]) == 2
    assert await store.add([METFORMIN, STATINS]) == 0
    assert [found.id for found in await store.get([STATINS.id, "pmid:nope", METFORMIN.id])] == [
        STATINS.id,
        METFORMIN.id,
    ]


async def test_a_better_record_of_a_stored_item_merges_with_it(store: EvidenceStoreLike) -> None:
    assert await store.add([PAGE]) == 1
    assert await store.add([RECORD]) == 0  # the same study, under a better identity
    (stored,) = await store.get([RECORD.id])
    assert stored.content == RECORD.content
    assert stored.grade == RECORD.grade
    assert set(stored.found_by) == {"web", "pubmed"}
    assert await store.get([PAGE.id]) == []  # the record it replaced is gone, not kept beside it


async def test_a_copy_under_another_identity_is_a_duplicate_and_nothing_is_added(store: EvidenceStoreLike) -> None:
    await store.add([METFORMIN])
    result = await store.deduplicate([METFORMIN_COPY, STATINS])
    assert [kept.id for kept in result.kept] == [STATINS.id]
    assert result.duplicates == {METFORMIN_COPY.id: METFORMIN.id}
    assert await store.get([STATINS.id]) == []


async def test_selection_for_the_judge_is_bounded_and_most_relevant_first(store: EvidenceStoreLike) -> None:
    await store.add([METFORMIN, STATINS, RECORD])
    chosen = await store.select_for_judge("statin LDL cholesterol", k=2)
    assert len(chosen) == 2
    assert chosen[0].id == STATINS.id
