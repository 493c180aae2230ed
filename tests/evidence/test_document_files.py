"""Documents from files in a library collection: added with their passages' places, a re-added file changes
nothing, an updated one replaces its passages, a document is listed and removed whole, a full text is
found again by PMCID, and the library source finds a body sentence's passage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from deepcritical.documents.reader import Limits, read_bytes, read_file
from deepcritical.evidence import EmbeddingService, chroma
from deepcritical.evidence.document_files import (
    WRITE_PASSAGES,
    add_file_documents,
    full_text_passages,
    list_documents,
    remove_document,
)
from deepcritical.evidence.documents import collection_name
from deepcritical.evidence.library import export
from deepcritical.models import Grade
from deepcritical.sources.library import LibraryTool
from helpers.stores import settings_for

pytestmark = pytest.mark.model
NOTES = (
    b"# Trial notes\n\n## Methods\n\nWe randomised 80 adults to drug X.\n\n## Results\n\nNausea in 5 of 40 on drug X."
)


def _grade(_: object) -> Grade:
    return Grade(design="randomized_controlled_trial", level=2, basis="publication_type")


@pytest.fixture
def connection(tmp_path: Path):  # type: ignore[no-untyped-def]
    connected = chroma.connect(settings_for(tmp_path))
    yield connected
    connected.close()


def test_re_adding_changes_nothing_and_an_update_replaces(connection, embeddings: EmbeddingService) -> None:  # type: ignore[no-untyped-def]
    first = read_bytes(NOTES, suffix=".md", limits=Limits(), source_path="/notes/trial.md")
    assert add_file_documents(connection, embeddings, "documents", first, _grade) == {first[0].id: "added"}
    assert add_file_documents(connection, embeddings, "documents", first, _grade) == {first[0].id: "unchanged"}
    (listed,) = list_documents(connection, "documents")
    assert (listed.id, listed.passages, listed.source_path) == (first[0].id, len(first[0].passages), "/notes/trial.md")

    # A document with a PMID keeps its id wherever it comes from, and has its passages replaced.
    ris = b"TY  - JOUR\nTI  - Drug X trial\nN1  - PMID: 30000001\nAB  - Nausea was rare.\nER  - \n"
    before = read_bytes(ris, suffix=".ris", limits=Limits())
    after = read_bytes(ris.replace(b"rare", b"common in 5 of 40"), suffix=".ris", limits=Limits())
    add_file_documents(connection, embeddings, "documents", before, _grade)
    assert add_file_documents(connection, embeddings, "documents", after, _grade) == {"pmid:30000001": "replaced"}
    stored = {document.id: document for document in list_documents(connection, "documents")}
    assert stored["pmid:30000001"].content_hash == after[0].content_hash
    assert stored["pmid:30000001"].passages == len(after[0].passages)

    assert remove_document(connection, "documents", "pmid:30000001") == len(after[0].passages)
    assert [document.id for document in list_documents(connection, "documents")] == [first[0].id]
    assert remove_document(connection, "documents", "pmid:30000001") == 0


def test_a_full_text_is_found_by_pmcid(connection, embeddings: EmbeddingService, fulltext_data: Path) -> None:  # type: ignore[no-untyped-def]
    path = sorted((fulltext_data / "jats").glob("*.nxml"))[0]
    (document,) = read_bytes(path.read_bytes(), suffix=".nxml", limits=Limits())
    assert document.meta.pmcid is not None
    assert full_text_passages(connection, "documents", document.meta.pmcid) == []
    add_file_documents(connection, embeddings, "documents", [document], _grade)
    passages = full_text_passages(connection, "documents", document.meta.pmcid)
    assert [item.content for item in passages] == [passage.text for passage in document.passages]
    assert all(item.grade.level == 2 for item in passages)
    assert passages[0].citation.pmcid == document.meta.pmcid


async def test_the_library_source_finds_a_body_sentence_with_its_section(  # type: ignore[no-untyped-def]
    tmp_path: Path, connection, embeddings: EmbeddingService, fulltext_data: Path
) -> None:
    documents = [
        document
        for path in sorted((fulltext_data / "jats").glob("*.nxml"))[:2]  # two: each other's distractors
        for document in read_bytes(path.read_bytes(), suffix=".nxml", limits=Limits())
    ]
    for document in documents:
        add_file_documents(connection, embeddings, "documents", [document], _grade)
    connection.close()
    target = next(p for p in documents[1].passages if p.section not in ("Title", "Abstract") and len(p.text) > 300)
    sentence = target.text.split(". ")[1]
    tool = LibraryTool(settings_for(tmp_path), embeddings=embeddings)
    found = await tool.search(sentence, 3)
    places = [
        (item.passage.document_id, item.passage.passage_id, item.passage.section) for item in found if item.passage
    ]
    assert (documents[1].id, str(target.index), target.section) in places


def test_an_edited_file_without_identifiers_replaces_its_passages(  # type: ignore[no-untyped-def]
    connection, embeddings: EmbeddingService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A note with no PMID, DOI or PMCID was identified by its content, so the edited note became a second
    document and the stale passages were searched and cited beside the corrected ones. It is identified by
    its path within the collection (however the path is written); a record an export no longer gives goes."""
    note = tmp_path / "note.md"
    note.write_bytes(NOTES)
    first = read_file(note, Limits())
    assert add_file_documents(connection, embeddings, "documents", first.documents, _grade) == {
        first.documents[0].id: "added"
    }
    note.write_bytes(NOTES.replace(b"Nausea in 5 of 40", b"Nausea in 19 of 40"))
    monkeypatch.chdir(tmp_path)
    edited = read_file(Path("./note.md"), Limits())  # the same file, named another way
    assert [document.id for document in edited.documents] == [document.id for document in first.documents]
    assert add_file_documents(connection, embeddings, "documents", edited.documents, _grade) == {
        edited.documents[0].id: "replaced"
    }
    (listed,) = list_documents(connection, "documents")
    assert listed.content_hash == edited.content_hash
    texts = [item.content for item in export(connection, collection_name("documents"))]
    assert any("19 of 40" in text for text in texts)
    assert not any("5 of 40" in text for text in texts)

    export_file = tmp_path / "export.ris"
    record = "TY  - JOUR\nTI  - {title}\nAB  - {text}\nER  - \n"
    export_file.write_text(record.format(title="Drug X", text="Rare.") + record.format(title="Drug Y", text="None."))
    add_file_documents(connection, embeddings, "documents", read_file(export_file, Limits()).documents, _grade)
    export_file.write_text(record.format(title="Drug X", text="Common.") + record.format(title="Drug Y", text="None."))
    add_file_documents(connection, embeddings, "documents", read_file(export_file, Limits()).documents, _grade)
    titles = sorted(document.title for document in list_documents(connection, "documents") if document.format == "ris")
    assert titles == ["Drug X", "Drug Y"]


class CountingEmbeddings:
    """Stands in for the embedding model: counts its calls, gives each text a fixed unit vector."""

    model_name = "counting-embeddings-for-tests"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        rows = np.random.default_rng(len(self.calls)).standard_normal((len(texts), 16)).astype(np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_a_large_export_is_embedded_and_written_in_batches_not_record_by_record(tmp_path: Path) -> None:
    """A 20,000-record RIS stored 8 records a second: one embedding call and one store write per record."""
    records = 1_200
    ris = "".join(
        f"TY  - JOUR\nTI  - Record {n} on drug X\nAB  - Nausea in {n} of 4000 adults on drug X.\nER  - \n\n"
        for n in range(records)
    )
    documents = read_bytes(ris.encode(), suffix=".ris", limits=Limits(), source_path=str(tmp_path / "export.ris"))
    embeddings = CountingEmbeddings()
    connection = chroma.connect(settings_for(tmp_path))
    try:
        added = add_file_documents(connection, embeddings, "documents", documents, _grade)  # type: ignore[arg-type]
        again = add_file_documents(connection, embeddings, "documents", documents, _grade)  # type: ignore[arg-type]
        stored = list_documents(connection, "documents")
    finally:
        connection.close()
    assert list(added.values()) == ["added"] * records
    assert list(again.values()) == ["unchanged"] * records
    assert len(stored) == records
    assert sum(embeddings.calls) == records  # one passage each, each embedded once
    assert len(embeddings.calls) <= -(-records // WRITE_PASSAGES)


def test_two_adds_at_once_count_each_document_once(
    connection, embeddings: EmbeddingService, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """Two adds of one file at once both read the store before either wrote, and both reported the documents
    "added" (the counts summed past the documents there are). The write decides, holding the store."""
    from deepcritical.evidence import document_files

    first = read_bytes(NOTES, suffix=".md", limits=Limits(), source_path="/notes/trial.md")
    assert add_file_documents(connection, embeddings, "documents", first, _grade) == {first[0].id: "added"}
    # The second add's first look was taken before the first add wrote: it saw nothing stored.
    monkeypatch.setattr(document_files, "stored_hashes", lambda *_args: {})
    assert add_file_documents(connection, embeddings, "documents", first, _grade) == {first[0].id: "unchanged"}
    edited = read_bytes(NOTES + b" More.", suffix=".md", limits=Limits(), source_path="/notes/trial.md")
    assert add_file_documents(connection, embeddings, "documents", edited, _grade) == {first[0].id: "replaced"}
    (listed,) = list_documents(connection, "documents")
    assert (listed.content_hash, listed.passages) == (edited[0].content_hash, len(edited[0].passages))
