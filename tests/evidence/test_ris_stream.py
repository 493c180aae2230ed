"""A large RIS export is stored as it is read: parts of records parsed in the worker and stored one after
another, progress as they go, and an add that stops keeps every part it stored (a re-add finishes it)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from deepcritical.documents import reader, references
from deepcritical.documents.model import Document, ParsedDocument
from deepcritical.documents.reader import Limits, read_bytes, read_file, stream_file
from deepcritical.errors import DocumentError, EmbeddingError
from deepcritical.evidence import chroma, document_files
from deepcritical.evidence.document_files import DOCUMENT_KEY, PATH_KEY, add_file_documents, list_documents
from deepcritical.evidence.documents import collection_name
from deepcritical.evidence.resources import Resources
from deepcritical.models import Grade
from deepcritical.service import library_add
from helpers.stores import settings_for

RECORD = "TY  - JOUR\nTI  - Record {n} on drug X\nAB  - Nausea in {n} of 4000 adults on drug X.\nER  - \n\n"


def _export(records: int, newline: str = "\n") -> str:
    return "".join(RECORD.format(n=n) for n in range(records)).replace("\n", newline)


def _titles(parsed: list[ParsedDocument]) -> list[str]:
    return [record.meta.title for record in parsed]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("part", [1, 2, 3, 7, 100])
def test_the_parts_of_a_ris_file_give_exactly_its_records(part: int, newline: str) -> None:
    data = ("\ufeff" + _export(10, newline) + "TY  - JOUR\nTI  - unfinished, no end tag\n").encode()
    whole = references.parse_ris(data)
    spans = references.ris_parts(data, part)
    assert len(spans) == -(-10 // part)
    assert spans[0][0] == 0
    assert spans[-1][1] == len(data)
    assert all(end == start for (_, end), (start, _) in itertools.pairwise(spans))
    assert [title for start, end in spans for title in _titles(references.parse_ris(data[start:end]))] == _titles(whole)
    assert len(whole) == 10 == references.ris_records(data)


class CountingEmbeddings:
    """Stands in for the embedding model: counts its calls; fails on call ``fail_on`` (a crash mid-add)."""

    model_name = "counting-embeddings-for-tests"
    dimension = 16

    def __init__(self, fail_on: int | None = None) -> None:
        self.calls: list[int] = []
        self.fail_on = fail_on

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        if len(self.calls) == self.fail_on:
            raise EmbeddingError("the embedding model stopped (a test's crash)")
        rows = np.random.default_rng(len(self.calls)).standard_normal((len(texts), 16)).astype(np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_a_large_export_is_stored_part_by_part_with_progress_and_a_stopped_add_keeps_its_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 20,000-record RIS was parsed whole (near the 60 s parse limit) and held whole before the first record
    was stored. Now each part of ``RIS_PART_RECORDS`` is stored before the next is taken: progress follows
    the records, and an add that stops in the third part keeps the two parts before it, which a re-add
    finds unchanged. (Embedded as stored, ``embed="now"``; by default so large an export is embedded behind,
    ``test_pending.py``.)"""
    monkeypatch.setattr(reader, "RIS_PART_RECORDS", 25)
    export = tmp_path / "library.ris"
    export.write_text(_export(60))
    settings = settings_for(tmp_path / "home")
    crashing = CountingEmbeddings(fail_on=3)
    connection = chroma.connect(settings)
    try:
        progress: list[tuple[int, int]] = []
        with pytest.raises(EmbeddingError):
            library_add.add_paths(
                [export],
                Resources(settings, embeddings=crashing, connection=connection),  # type: ignore[arg-type]
                "documents",
                on_records=lambda _p, done, total: progress.append((done, total)),
                embed="now",
            )
        assert crashing.calls == [25, 25, 10]  # one embedding call per part, every part its own
        assert progress == [(25, 60), (50, 60)]
        assert len(list_documents(connection, "documents")) == 50  # what was stored before the crash

        working = CountingEmbeddings()
        progress.clear()
        summary = library_add.add_paths(
            [export],
            Resources(settings, embeddings=working, connection=connection),  # type: ignore[arg-type]
            "documents",
            on_records=lambda _p, done, total: progress.append((done, total)),
            embed="now",
        )
        stored = list_documents(connection, "documents")
    finally:
        connection.close()
    assert (summary.added, summary.unchanged, summary.passages, summary.failures) == (10, 50, 10, [])
    assert progress == [(25, 60), (50, 60), (60, 60)]
    assert working.calls == [10]  # only the records the crash left unstored
    assert sorted(document.title for document in stored) == sorted(f"Record {n} on drug X" for n in range(60))


def test_a_part_that_cannot_be_read_ends_its_file_naming_how_far_it_got(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "RIS_PART_RECORDS", 4)
    export = tmp_path / "library.ris"
    export.write_text(_export(10))
    parse = references.parse_ris
    parts: list[int] = []

    def second_part_broken(data: bytes) -> list[ParsedDocument]:
        parts.append(1)
        if len(parts) == 2:
            raise DocumentError("not a readable RIS file (a broken record)")
        return parse(data)

    monkeypatch.setattr(references, "parse_ris", second_part_broken)
    taken: list[list[Document]] = []
    result = stream_file(export, Limits(), None, taken.append)
    assert result.error == "stopped after 4 records: not a readable RIS file (a broken record)"
    assert [len(part) for part in taken] == [4]  # the part before is handed over; nothing after
    parts.clear()
    whole = read_file(export, Limits())
    assert whole.documents == []
    assert whole.error is not None


def test_a_whole_collection_is_read_a_page_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench's 20,000-record export (36,000 passages) was stored, then the last step read every passage of
    the file in one get: Chroma failed with "too many SQL variables". Listing and dropping what an edited
    export no longer gives read a page at a time; here pages of 7 over 20 records."""
    monkeypatch.setattr(document_files, "GET_PAGE", 7)
    source = str(tmp_path / "library.ris")
    records = read_bytes(_export(20).encode(), suffix=".ris", limits=Limits(), source_path=source)
    edited = [record for record in records if record.meta.title not in {"Record 3 on drug X", "Record 15 on drug X"}]
    connection = chroma.connect(settings_for(tmp_path / "home"))
    try:
        add_file_documents(connection, CountingEmbeddings(), "documents", records, _grade)  # type: ignore[arg-type]
        listed = list_documents(connection, "documents")
        add_file_documents(connection, CountingEmbeddings(), "documents", edited, _grade)  # type: ignore[arg-type]
        after = list_documents(connection, "documents")
    finally:
        connection.close()
    assert sorted(document.title for document in listed) == sorted(record.meta.title for record in records)
    assert sorted(document.title for document in after) == sorted(record.meta.title for record in edited)
    assert len(after) == 18


def _grade(_: object) -> Grade:
    return Grade(design="randomized_controlled_trial", level=2, basis="publication_type")


@pytest.mark.slow
def test_dropping_what_a_large_export_no_longer_gives_works_past_the_stores_sql_limit(tmp_path: Path) -> None:
    """At the size that failed: 33,000 passages of one file (SQLite takes 32,766 variables in a statement)."""
    passages = 33_000
    target = collection_name("documents")
    connection = chroma.connect(settings_for(tmp_path / "home"))
    try:
        chroma.open_collection(connection, target, "counting-embeddings-for-tests")
        with connection.session(touches=(target,), writes=True) as session:
            collection = session.collection(target)
            for start in range(0, passages, connection.max_batch):
                ids = range(start, min(passages, start + connection.max_batch))
                collection.upsert(
                    ids=[f"passage-{n}" for n in ids],
                    embeddings=np.ones((len(ids), 4), dtype=np.float32),
                    documents=["text"] * len(ids),
                    metadatas=[{DOCUMENT_KEY: f"record-{n // 2}", PATH_KEY: "/exports/library.ris"} for n in ids],
                )
        kept = [f"record-{n}" for n in range(passages // 2 - 10)]  # the export without its last 10 records
        dropped = document_files.drop_stale(connection, "documents", "/exports/library.ris", kept)
        with connection.session(touches=(target,), writes=False) as session:
            left = session.collection(target).count()
    finally:
        connection.close()
    assert dropped == 20
    assert left == passages - 20
