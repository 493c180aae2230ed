"""A large export is stored first and embedded behind (``evidence.pending``): the add never waits for the
embedding model, every record is findable by its words at once, ``library embed`` gives each passage the
vector of its own text, a stopped embed keeps what it did, and a search never ranks a passage by a
placeholder vector."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from deepcritical.documents import reader
from deepcritical.errors import EmbeddingError, StoreError
from deepcritical.evidence import chroma, pending
from deepcritical.evidence.document_files import add_file_documents, list_documents
from deepcritical.evidence.documents import EMBEDDED_KEY, collection_name, load_index
from deepcritical.evidence.embeddings import passage_text
from deepcritical.evidence.resources import Resources
from deepcritical.evidence.retrieval import HybridIndex
from deepcritical.models import Grade
from deepcritical.service import library_add
from deepcritical.service.library import Library
from helpers.stores import settings_for

RECORD = "TY  - JOUR\nTI  - Record {n} on drug X\nAB  - Nausea in {n} of 4000 adults on drug X.\nER  - \n\n"
DIMENSION = 16


def _vector(text: str) -> np.ndarray:
    """A unit vector that depends on the text alone, so a stored vector can be checked against its text."""
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))
    row = rng.standard_normal(DIMENSION).astype(np.float32)
    return row / np.linalg.norm(row)


class TextEmbeddings:
    """Stands in for the embedding model: each text's own vector; counts calls; fails on call ``fail_on``;
    runs ``during`` inside call ``during_call`` (another process writing while an embed is under way)."""

    model_name = "text-embeddings-for-tests"
    dimension = DIMENSION

    def __init__(
        self, fail_on: int | None = None, during: Callable[[], None] | None = None, during_call: int = 1
    ) -> None:
        self.calls: list[int] = []
        self.fail_on = fail_on
        self.during = during
        self.during_call = during_call

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        if len(self.calls) == self.fail_on:
            raise EmbeddingError("the embedding model stopped (a test's crash)")
        if self.during is not None and len(self.calls) == self.during_call:
            self.during()
        return np.stack([_vector(text) for text in texts])


def _export(path: Path, records: int, start: int = 0) -> Path:
    path.write_text("".join(RECORD.format(n=n) for n in range(start, start + records)))
    return path


def _stored(connection: chroma.Connection) -> dict[str, tuple[str, np.ndarray, bool]]:
    """Every passage: its embedded text, its stored vector and whether it is still pending."""
    target = collection_name("documents")
    with connection.session(touches=(target,), writes=False) as session:
        found = session.collection(target).get(include=["documents", "embeddings", "metadatas"])
    rows = zip(found["ids"], found["documents"], found["embeddings"], found["metadatas"], strict=True)
    result = {}
    for item_id, document, vector, meta in rows:
        item = chroma.decode(document)
        text = passage_text(item.citation.title, item.content)
        result[item_id] = (text, np.asarray(vector, dtype=np.float32), meta.get(EMBEDDED_KEY) is False)
    return result


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> chroma.Connection:
    monkeypatch.setattr(reader, "RIS_PART_RECORDS", 25)
    connection = chroma.connect(settings_for(tmp_path / "home"))
    yield connection  # type: ignore[misc]
    connection.close()


def _add(
    tmp_path: Path,
    connection: chroma.Connection,
    monkeypatch: pytest.MonkeyPatch,
    model: TextEmbeddings,
    path: Path,
    **options: object,
) -> library_add.AddSummary:
    resources = Resources(settings_for(tmp_path / "home"), embeddings=model, connection=connection)  # type: ignore[arg-type]
    return library_add.add_paths([path], resources, "documents", **options)  # type: ignore[arg-type]


def test_a_large_export_is_stored_without_the_model_then_embedded_behind_and_a_stopped_embed_resumes(
    tmp_path: Path, store: chroma.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    export = _export(tmp_path / "library.ris", 60)  # more records than one part: a large export
    model = TextEmbeddings()
    summary = _add(tmp_path, store, monkeypatch, model, export)
    assert model.calls == []  # the add never waited for the model
    assert (summary.added, summary.passages, summary.pending) == (60, 60, 60)
    assert summary.line.endswith("; 60 passage(s) written; 60 passage(s) not embedded yet")
    assert len(list_documents(store, "documents")) == 60
    assert pending.count_pending(store, "documents") == 60
    assert all(np.all(vector == 0) for _, vector, _ in _stored(store).values())

    monkeypatch.setattr(pending, "EMBED_PART", 25)
    progress: list[tuple[int, int]] = []
    with pytest.raises(EmbeddingError):
        pending.embed_pending(
            store,
            TextEmbeddings(fail_on=2),
            "documents",
            on_progress=lambda done, total: progress.append((done, total)),  # type: ignore[arg-type]
        )
    assert progress == [(25, 60)]
    assert pending.count_pending(store, "documents") == 35  # the first part is kept

    finishing = TextEmbeddings()
    assert pending.embed_pending(store, finishing, "documents") == 35  # type: ignore[arg-type]
    assert finishing.calls == [25, 10]  # only what the stopped embed left
    stored = _stored(store)
    assert pending.count_pending(store, "documents") == 0
    for text, vector, waiting in stored.values():
        assert not waiting
        np.testing.assert_allclose(vector, _vector(text), atol=1e-6)  # each passage has its own text's vector

    again = TextEmbeddings()
    summary = _add(tmp_path, store, monkeypatch, again, export)
    assert (summary.unchanged, summary.pending, again.calls) == (60, 0, [])  # re-adding embeds nothing


def test_a_small_file_is_embedded_as_it_is_stored(
    tmp_path: Path, store: chroma.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = TextEmbeddings()
    summary = _add(tmp_path, store, monkeypatch, model, _export(tmp_path / "few.ris", 10))
    assert (summary.added, summary.pending, model.calls) == (10, 0, [10])
    assert pending.count_pending(store, "documents") == 0


def test_embed_now_waits_for_the_model_and_finishes_what_an_earlier_add_left(
    tmp_path: Path, store: chroma.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    export = _export(tmp_path / "library.ris", 30)
    later = _add(tmp_path, store, monkeypatch, TextEmbeddings(), export, embed="later")
    assert later.pending == 30
    model = TextEmbeddings()
    embedded: list[tuple[int, int]] = []
    summary = _add(
        tmp_path, store, monkeypatch, model, export, embed="now", on_embedded=lambda d, t: embedded.append((d, t))
    )
    assert (summary.unchanged, summary.pending) == (30, 0)
    assert embedded == [(30, 30)]
    assert pending.count_pending(store, "documents") == 0


def test_a_passage_replaced_while_it_is_embedded_gets_the_vector_of_its_new_text(
    tmp_path: Path, store: chroma.Connection
) -> None:
    """Another add replaces a record between the embed's read and its write: the old text's vector is not
    written over the new text; the new version is embedded in its turn."""
    source = str(tmp_path / "library.ris")
    first = reader.read_bytes(
        _export(tmp_path / "a.ris", 3).read_bytes(), suffix=".ris", limits=reader.Limits(), source_path=source
    )
    edited = [
        first[0].model_copy(
            update={
                "content_hash": "edited",
                "passages": (
                    first[0].passages[0].model_copy(update={"text": "Vomiting in 7 of 4000 adults on drug X."}),
                ),
            }
        )
    ]
    grade = Grade(design="randomized_controlled_trial", level=2, basis="publication_type")
    placeholder = TextEmbeddings()
    add_file_documents(store, placeholder, "documents", first, lambda _d: grade, embed=False)  # type: ignore[arg-type]

    def replace() -> None:
        add_file_documents(store, placeholder, "documents", edited, lambda _d: grade, whole_file=False, embed=False)  # type: ignore[arg-type]

    model = TextEmbeddings(during=replace)
    assert pending.embed_pending(store, model, "documents") == 3  # type: ignore[arg-type]
    assert model.calls == [3, 1]
    stored = _stored(store)
    assert any("Vomiting" in text for text, _, _ in stored.values())
    for text, vector, waiting in stored.values():
        assert not waiting
        np.testing.assert_allclose(vector, _vector(text), atol=1e-6)


def test_a_pending_passage_is_found_by_its_words_never_by_its_placeholder_vector() -> None:
    vectors = np.array([[1.0, 0.0], [0.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    texts = ["metformin and dementia", "zanubrutinib in lymphoma", "statins in sepsis"]
    pending_flags = np.array([False, True, False])
    query = np.array([-1.0, 0.0], dtype=np.float32)  # every embedded passage scores below a zero vector's 0.0
    honest = HybridIndex(texts, vectors, pending=pending_flags)
    naive = HybridIndex(texts, vectors)
    assert naive.top("heart failure", query, 1, "dense")[0][0] == 1  # the placeholder would win by meaning
    assert [i for i, _ in honest.top("heart failure", query, 3, "dense")][-1] == 1
    assert honest.scores("heart failure", query)[1] == 0.0  # no word and no meaning: no rank at all
    assert honest.top("zanubrutinib", query, 1)[0][0] == 1  # its words find it


def test_a_collection_read_for_searching_knows_its_pending_passages(
    tmp_path: Path, store: chroma.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    _add(tmp_path, store, monkeypatch, TextEmbeddings(), _export(tmp_path / "a.ris", 5, start=40), embed="later")
    _add(tmp_path, store, monkeypatch, TextEmbeddings(), _export(tmp_path / "b.ris", 3, start=100), embed="now")
    index = load_index(store, "documents")
    assert (len(index), index.pending) == (8, 5)
    texts, vectors = index.embedded()  # what a search may remember as known vectors: never a placeholder
    expected = [f"Record {n} on drug X (Abstract)\nNausea in {n} of 4000 adults on drug X." for n in (100, 101, 102)]
    assert sorted(texts) == expected
    assert all(np.linalg.norm(row) > 0.99 for row in vectors)
    # Its words rank a pending record above the other pending ones (embedded passages that match by words and by
    # meaning still come before it: by words alone it has one of the two ranks fused).
    hits = [item.citation.title for item, _ in index.search("record 42", _vector("anything"), 8)]
    pending_hits = [title for title in hits if not title.startswith(("Record 100 ", "Record 101 ", "Record 102 "))]
    assert pending_hits[0].startswith("Record 42 on drug X")


def test_an_embed_refuses_another_models_collection_and_a_missing_one(
    tmp_path: Path, store: chroma.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    _add(tmp_path, store, monkeypatch, TextEmbeddings(), _export(tmp_path / "a.ris", 3), embed="later")
    other = TextEmbeddings()
    other.model_name = "another-model"
    with pytest.raises(StoreError, match="holds vectors from the embedding model 'text-embeddings-for-tests'"):
        pending.embed_pending(store, other, "documents")  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="no document collection 'elsewhere'"):
        pending.embed_pending(store, TextEmbeddings(), "elsewhere")  # type: ignore[arg-type]
    assert other.calls == []
    assert pending.count_pending(store, "documents") == 3


def test_an_add_after_a_stopped_one_counts_the_passages_still_waiting(
    tmp_path: Path, store: chroma.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records stored by an earlier add and not embedded since are unchanged for the next add, which still
    says they wait (and ``now`` embeds them)."""
    export = _export(tmp_path / "library.ris", 60)
    _add(tmp_path, store, monkeypatch, TextEmbeddings(), export)
    again = _add(tmp_path, store, monkeypatch, TextEmbeddings(), export)
    assert (again.unchanged, again.passages, again.pending) == (60, 0, 60)
    assert again.line.endswith("; 0 passage(s) written; 60 passage(s) not embedded yet")


def test_a_plain_add_of_a_large_export_stores_it_first_then_embeds_it_in_the_same_command(
    tmp_path: Path, store: chroma.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ``auto``: the export is stored before any vector is made (a stop then loses nothing), and the command
    # ends with every passage embedded, as a small add does; ``later`` leaves them for ``library embed``.
    from io import StringIO

    from rich.console import Console

    from deepcritical.cli import library_files

    resources = Resources(settings_for(tmp_path / "home"), embeddings=TextEmbeddings(), connection=store)  # type: ignore[arg-type]
    out, err = StringIO(), StringIO()
    export = _export(tmp_path / "big.ris", 30)
    failed = library_files.add_files([export], Library(resources), "documents", Console(file=out), Console(file=err))
    assert failed == 0
    stored = _stored(store)
    assert len(stored) == 30
    assert not any(waiting for _, _, waiting in stored.values())
    assert all(np.allclose(vector, _vector(text), atol=1e-6) for text, vector, _ in stored.values())
    assert "30 passage(s) stored; embedding them now" in " ".join(err.getvalue().split())
    assert "30 passage(s) of the collection documents embedded" in " ".join(out.getvalue().split())

    later = _export(tmp_path / "later.ris", 30, start=100)
    library_files.add_files([later], Library(resources), "documents", Console(file=out), Console(file=err), "later")
    assert sum(waiting for _, _, waiting in _stored(store).values()) == 30


def test_a_stopped_embed_names_the_collection_to_finish(
    tmp_path: Path, store: chroma.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    from io import StringIO

    import typer
    from rich.console import Console

    from deepcritical.cli import library_files

    _add(tmp_path, store, monkeypatch, TextEmbeddings(), _export(tmp_path / "a.ris", 30), embed="later")

    class Interrupted(TextEmbeddings):
        def embed(self, texts: list[str]) -> np.ndarray:
            raise KeyboardInterrupt  # the user's Ctrl+C during the first part

    resources = Resources(settings_for(tmp_path / "home"), embeddings=Interrupted(), connection=store)  # type: ignore[arg-type]
    err = StringIO()
    with pytest.raises(typer.Exit) as stopped:
        library_files.embed_collection(Library(resources), "documents", Console(file=StringIO()), Console(file=err))
    assert stopped.value.exit_code == 130
    assert "run `deepcritical library embed --collection documents` again" in " ".join(err.getvalue().split())
    assert sum(waiting for _, _, waiting in _stored(store).values()) == 30
