"""Local document collections: a user's own documents, loaded with ``deepcritical library add`` and searched
by the ``library`` source with the same hybrid retrieval (BM25 + dense, fused by reciprocal rank) as a run.

A collection ``NAME`` is the Chroma collection ``docs-NAME``. A document is one or more passages; each
passage is stored as its own evidence item (``Evidence.passage`` says which collection, document and
passage, and where in the document when known: section, page, character span), so a full-text article
split into sections is many items citing one document. BEIR/SciFact JSON Lines (``_id``, ``title``,
``text``, optional ``metadata``) give one passage per document; other readers (PDF, JATS) give more.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from chromadb.errors import NotFoundError

from deepcritical.documents.passages import text_passages
from deepcritical.errors import ConfigError, StoreError
from deepcritical.evidence import chroma
from deepcritical.evidence.embeddings import EmbeddingService, Vectors, passage_text
from deepcritical.evidence.retrieval import HybridIndex
from deepcritical.jsonl import jsonl_file
from deepcritical.models import Citation, Evidence, Grade, Passage, passage_url
from deepcritical.text import collapse_whitespace

PREFIX = "docs-"
TITLE_CHARS = 500
# Documents embedded and written per batch while adding (bounds memory; shows progress).
ADD_BATCH = 256
# In a passage's metadata, False while its stored vector is a placeholder: a large export is stored first and
# embedded behind (``evidence.pending``). Absent (every passage stored before this key existed) means embedded.
EMBEDDED_KEY = "embedded"
PENDING: dict[str, Any] = {EMBEDDED_KEY: False}


def collection_name(name: str) -> str:
    """The Chroma collection that holds the document collection ``name``."""
    return f"{PREFIX}{name}"


@dataclass(frozen=True)
class PassageText:
    """One passage of a document and where it sits in it (all optional but the text)."""

    text: str
    passage_id: str = "0"
    section: str | None = None
    subsection: str | None = None
    page: int | None = None
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class Document:
    """A document to add: its id, title, passages and metadata (``year``/``date``, ``authors``, ``journal``,
    ``doi``, ``pmid``, ``publication_types``, ``mesh``: each optional)."""

    id: str
    title: str
    passages: list[PassageText]
    metadata: dict[str, Any] = field(default_factory=dict)


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,) if value.strip() else ()
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value if str(v).strip())
    return ()


def _optional(value: Any) -> str | None:
    return str(value).strip() or None if value not in (None, "") else None


def read_jsonl(path: Path) -> Iterator[Document]:
    """Documents from a BEIR-style JSON Lines file: ``{"_id", "title", "text", "metadata"?}`` per line (``id``
    is accepted for ``_id``), each record one passage (an evaluation's corpus of abstracts). A line that is not
    such an object is a ConfigError naming the file and line."""
    for number, record in jsonl_file(path):
        yield corpus_record(record, path, number)


def corpus_record(record: dict[str, Any], path: Path, number: int, *, max_chars: int | None = None) -> Document:
    """The document of one line's object of a corpus (``read_jsonl``): one passage, or with ``max_chars`` its
    text cut into passages as every other document's is (``documents.passages``), each with its offsets."""
    document_id = record.get("_id", record.get("id"))
    text = record.get("text")
    if document_id is None or not str(document_id).strip():
        raise ConfigError(f"{path}, line {number}: no _id")
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{path}, line {number}: document {str(document_id)[:100]}: no text")
    metadata = record.get("metadata")
    if max_chars is None:
        passages = [PassageText(text=text)]
    else:
        passages = [
            PassageText(text=text[start:end], passage_id=str(index), start=start, end=end)
            for index, (start, end) in enumerate(text_passages(text, max_chars))
        ]
    return Document(
        id=str(document_id).strip(),
        title=str(record.get("title") or "").strip(),
        passages=passages,
        metadata=metadata if isinstance(metadata, dict) else {},
    )


Grader = Callable[[str, str, Sequence[str], Sequence[str]], Grade]


def passage_evidence(collection: str, document: Document, passage: PassageText, grader: Grader | None) -> Evidence:
    """The evidence item of one passage: it cites the document, and ``passage`` says where it sits."""
    meta = document.metadata
    title = collapse_whitespace(document.title)[:TITLE_CHARS] or f"{collection} document {document.id}"
    if passage.section:
        title = f"{title} ({passage.section})"[:TITLE_CHARS]
    where = Passage(
        collection=collection,
        document_id=document.id,
        passage_id=passage.passage_id,
        section=passage.section,
        subsection=passage.subsection,
        page=passage.page,
        start=passage.start,
        end=passage.end,
    )
    types, mesh = _strings(meta.get("publication_types")), _strings(meta.get("mesh"))
    date = _optional(meta.get("date") or meta.get("year")) or "Unknown"
    citation = Citation(
        source="library",
        title=title,
        url=passage_url(where),
        date=date,
        authors=_strings(meta.get("authors")),
        journal=_optional(meta.get("journal")),
        doi=_optional(meta.get("doi")),
        pmid=_optional(meta.get("pmid")),
        publication_types=types,
        mesh_headings=mesh,
    )
    grade = grader(title, passage.text, types, mesh) if grader is not None else Grade()
    return Evidence(content=passage.text, citation=citation, relevance=0.0, grade=grade, passage=where)


def add_documents(
    connection: chroma.Connection,
    embeddings: EmbeddingService,
    name: str,
    documents: Iterable[Document],
    *,
    grader: Grader | None = None,
    progress: Callable[[int], None] = lambda _count: None,
) -> int:
    """Embed and store every passage of ``documents`` in the collection ``name`` (created if new). Adding a
    document again replaces its passages' records (the id is the passage's address). Returns the number
    of passages written."""
    target = collection_name(name)
    chroma.open_collection(connection, target, embeddings.model_name)
    written = 0
    batch: list[Evidence] = []

    def flush() -> None:
        nonlocal written, batch
        if not batch:
            return
        vectors = embeddings.embed([passage_text(item.citation.title, item.content) for item in batch])
        with connection.session(touches=(target,), writes=True) as session:
            chroma.upsert(session.collection(target), connection.max_batch, batch, vectors)
        written += len(batch)
        progress(written)
        batch = []

    for document in documents:
        for passage in document.passages:
            batch.append(passage_evidence(name, document, passage, grader))
        if len(batch) >= ADD_BATCH:
            flush()
    flush()
    return written


def exists(connection: chroma.Connection, name: str) -> bool:
    """Looked up by name, not by listing the store: a store with a month of run collections answers as
    fast as a new one."""
    target = collection_name(name)
    with connection.session(touches=(target,), writes=False) as session:
        try:
            session.client.get_collection(target, embedding_function=None)
        except NotFoundError:
            return False
    return True


@dataclass
class DocumentIndex:
    """A collection held in memory for searching: its passages, their stored vectors, and a hybrid index."""

    name: str
    items: list[Evidence]
    vectors: Vectors
    index: HybridIndex

    def __len__(self) -> int:
        return len(self.items)

    @property
    def pending(self) -> int:
        """Passages stored but not embedded yet: found by their words only until ``library embed`` runs."""
        return int(self.index.pending.sum())

    def embedded(self) -> tuple[list[str], Vectors]:
        """The texts and vectors of the passages that have their real vector."""
        keep = ~self.index.pending
        return [text for text, kept in zip(self.texts(), keep, strict=True) if kept], self.vectors[keep]

    def texts(self) -> list[str]:
        return [passage_text(item.citation.title, item.content) for item in self.items]

    def search(self, query: str, query_vector: Vectors, n: int) -> list[tuple[Evidence, float]]:
        """The best ``n`` passages by hybrid retrieval, each with its cosine similarity to the query."""
        if not self.items:
            return []
        dense = self.index.dense_scores(query_vector)
        return [(self.items[i], float(dense[i])) for i, _ in self.index.top(query, query_vector, n, "hybrid")]


def load_index(connection: chroma.Connection, name: str) -> DocumentIndex:
    """Read the collection ``name`` whole (passages and vectors) and index it. StoreError when it is absent."""
    target = collection_name(name)
    if not exists(connection, name):
        raise StoreError(
            f"no document collection {name!r} in {connection.where}. Fix: `deepcritical library add FILE.jsonl "
            f"--collection {name}`, or set DEEPCRITICAL_LIBRARY_COLLECTION to a collection that "
            "`deepcritical library list` shows (as docs-NAME)"
        )
    with connection.session(touches=(target,), writes=False) as session:
        collection = session.collection(target)
        found = chroma.fetch(collection, None, vectors=True)
        waiting = set(collection.get(where=PENDING, include=[])["ids"])
    ordered = sorted(found.values(), key=lambda record: record.evidence.id)  # a stable order: stable ties
    items = [record.evidence for record in ordered]
    vectors = np.stack([record.vector for record in ordered]) if ordered else np.zeros((0, 0), dtype=np.float32)
    texts = [passage_text(item.citation.title, item.content) for item in items]
    pending = np.array([item.id in waiting for item in items], dtype=bool)
    return DocumentIndex(name, items, vectors, HybridIndex(texts, vectors, pending=pending))
