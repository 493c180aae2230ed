"""Documents read from files (``documents/``: PDF, JATS, BioC, RIS/BibTeX/CSL-JSON, Markdown, HTML) and PMC full
text, kept in a document collection of the library (``evidence/documents.py``), one evidence item per passage.

Each passage record also carries, in its Chroma metadata, the document's id, the SHA-256 of what it was
read from, the file it came from and its PMCID. So adding the same file again changes nothing (same
document, same hash), adding an updated file replaces the document's passages (same document, another
hash), a run finds an article's full text by PMCID instead of fetching it again, and the collection can
list and remove whole documents. Nothing is kept anywhere but the collection.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from chromadb.errors import NotFoundError

from deepcritical.documents.model import Document as FileDocument
from deepcritical.evidence import chroma
from deepcritical.evidence.documents import (
    EMBEDDED_KEY,
    Document,
    PassageText,
    collection_name,
    passage_evidence,
)
from deepcritical.evidence.embeddings import EmbeddingService, passage_text
from deepcritical.models import Evidence, Grade

DOCUMENT_KEY = "document_id"
HASH_KEY = "content_hash"
PATH_KEY = "source_path"
FORMAT_KEY = "format"
PMCID_KEY = "pmcid"
FULL_TEXT_KEY = "full_text"
Added = Literal["added", "unchanged", "replaced"]
DocumentGrader = Callable[[FileDocument], Grade]


def library_document(document: FileDocument) -> Document:
    """A file's document in the collection's terms: its passages with section, page and offsets."""
    meta = document.meta
    metadata: dict[str, Any] = {
        "date": meta.date,
        "authors": list(meta.authors),
        "journal": meta.journal,
        "doi": meta.doi,
        "pmid": meta.pmid,
        "publication_types": list(meta.publication_types),
    }
    passages = [
        PassageText(
            text=passage.text,
            passage_id=str(passage.index),
            section=passage.section,
            subsection=passage.subsection,
            page=passage.page,
            start=passage.start,
            end=passage.end,
        )
        for passage in document.passages
    ]
    title = meta.title or (document.source_path or document.id)
    return Document(id=document.id, title=title, passages=passages, metadata=metadata)


def passage_items(name: str, document: FileDocument, grade: Grade) -> list[Evidence]:
    """The evidence items of a document's passages, every one with the document's grade (set once from its
    metadata and abstract, as for a PubMed item, not passage by passage) and its PMCID."""
    converted = library_document(document)
    items = []
    for passage in converted.passages:
        item = passage_evidence(name, converted, passage, lambda *_: grade)
        if document.meta.pmcid:
            item = item.model_copy(update={"citation": item.citation.model_copy(update={"pmcid": document.meta.pmcid})})
        items.append(item)
    return items


def _extra(document: FileDocument) -> dict[str, str | int | bool]:
    extra: dict[str, str | int | bool] = {
        DOCUMENT_KEY: document.id,
        HASH_KEY: document.content_hash,
        FORMAT_KEY: document.format,
        FULL_TEXT_KEY: document.full_text,
    }
    if document.source_path:
        extra[PATH_KEY] = document.source_path
    if document.meta.pmcid:
        extra[PMCID_KEY] = document.meta.pmcid
    return extra


def stored_hashes(connection: chroma.Connection, name: str, document_ids: Sequence[str]) -> dict[str, str]:
    """The content hash stored for each of ``document_ids`` that the collection holds."""
    target = collection_name(name)
    if not document_ids:
        return {}
    with connection.session(touches=(target,), writes=False) as session:
        return _hashes(session.collection(target), document_ids)


def _hashes(collection: Any, document_ids: Sequence[str]) -> dict[str, str]:
    found = collection.get(where={DOCUMENT_KEY: {"$in": list(document_ids)}}, include=["metadatas"])
    return {str(meta[DOCUMENT_KEY]): str(meta.get(HASH_KEY, "")) for meta in found["metadatas"] or []}


def add_file_documents(
    connection: chroma.Connection,
    embeddings: EmbeddingService,
    name: str,
    documents: Sequence[FileDocument],
    grade: DocumentGrader,
    *,
    whole_file: bool = True,
    embed: bool = True,
) -> dict[str, Added]:
    """Store ``documents`` (one file's) in the collection ``name``: a document already there with the same
    hash is left alone, one with another hash has its passages replaced. Returns what happened to each.
    With ``whole_file`` (the default), what the file gave before and gives no more goes too (``drop_stale``);
    a file stored part by part calls that once, after its last part.

    Documents go in batches of about ``WRITE_PASSAGES`` passages, each embedded in one call and written in
    one store session: a RIS export of 20,000 records took one embedding call and one Chroma write per
    record (9 records/s). A batch written is kept if a later one fails. With ``embed`` False the passages are
    stored with a placeholder vector, marked pending (``documents.EMBEDDED_KEY``), for ``pending.embed_pending``
    to fill in: storing then runs at the parser's and the store's speed, not the embedding model's."""
    target = collection_name(name)
    chroma.open_collection(connection, target, embeddings.model_name)
    latest = {document.id: document for document in documents}  # a record given twice: its last version
    outcome: dict[str, Added] = {}
    for batch in _batches(list(latest.values())):
        known = stored_hashes(connection, name, [document.id for document in batch])
        changed = [document for document in batch if known.get(document.id) != document.content_hash]
        outcome.update(
            {document.id: "unchanged" for document in batch if known.get(document.id) == document.content_hash}
        )
        if changed:
            # What the write found when it held the store (another add may have stored the same documents since
            # ``known`` was read): the counts are the store's, not this add's guess.
            outcome.update(_write(connection, embeddings, name, changed, grade, embed=embed))
    paths = {document.source_path for document in documents if document.source_path}
    if whole_file and len(paths) == 1:
        drop_stale(connection, name, paths.pop(), [document.id for document in documents])
    return {document.id: outcome[document.id] for document in documents}


# Passages embedded and written together: large enough that a call's fixed cost is spread, small enough
# that a batch's vectors take little memory and a long add shows its progress in the store.
WRITE_PASSAGES = 512


def _batches(documents: Sequence[FileDocument]) -> list[list[FileDocument]]:
    batches: list[list[FileDocument]] = [[]]
    passages = 0
    for document in documents:
        if batches[-1] and passages + len(document.passages) > WRITE_PASSAGES:
            batches.append([])
            passages = 0
        batches[-1].append(document)
        passages += len(document.passages)
    return [batch for batch in batches if batch]


def _write(
    connection: chroma.Connection,
    embeddings: EmbeddingService,
    name: str,
    documents: Sequence[FileDocument],
    grade: DocumentGrader,
    *,
    embed: bool,
) -> dict[str, Added]:
    """One batch of documents' passages embedded in one call (or marked pending) and written in one session.
    Which documents are new, changed or unchanged is decided in that session, holding the store: of two adds
    of one file at once, one adds and the other finds the documents unchanged (each counted once)."""
    target = collection_name(name)
    items: list[Evidence] = []
    metadata: list[dict[str, str | int | bool]] = []
    owner: list[str] = []  # the document of each item
    for document in documents:
        found = passage_items(name, document, grade(document))
        items += found
        metadata += [_extra(document) | ({} if embed else {EMBEDDED_KEY: False})] * len(found)
        owner += [document.id] * len(found)
    if embed:
        vectors = embeddings.embed([passage_text(item.citation.title, item.content) for item in items])
    else:  # a placeholder of the model's size (Chroma holds one size per collection), replaced when embedded
        vectors = np.zeros((len(items), embeddings.dimension), dtype=np.float32)
    with connection.session(touches=(target,), writes=True) as session:
        collection = session.collection(target)
        known = _hashes(collection, [document.id for document in documents])
        outcome: dict[str, Added] = {
            document.id: "unchanged"
            if known.get(document.id) == document.content_hash
            else "replaced"
            if document.id in known
            else "added"
            for document in documents
        }
        if replacing := [document_id for document_id, kind in outcome.items() if kind == "replaced"]:
            collection.delete(where={DOCUMENT_KEY: {"$in": replacing}})
        keep = [index for index, document_id in enumerate(owner) if outcome[document_id] != "unchanged"]
        for start in range(0, len(keep), connection.max_batch):
            chunk = keep[start : start + connection.max_batch]
            encoded = [chroma.encode(items[index]) for index in chunk]
            collection.upsert(
                ids=[items[index].id for index in chunk],
                embeddings=vectors[chunk],
                documents=[text for text, _ in encoded],
                metadatas=[{**meta, **metadata[index]} for (_, meta), index in zip(encoded, chunk, strict=True)],
            )
    return outcome


# Chroma reads a get's rows with one SQL variable each: a collection of 20,000 records (36,000 passages) read in
# one get failed with "too many SQL variables". Reads that may cover a whole collection go a page at a time.
GET_PAGE = 2_000


def _pages(
    connection: chroma.Connection, target: str, include: list[Any], where: dict[str, Any] | None = None
) -> Iterator[dict[str, Any]]:
    """The rows of ``target`` (those ``where`` selects), ``GET_PAGE`` at a time."""
    offset = 0
    while True:
        with connection.session(touches=(target,), writes=False) as session:
            page = session.collection(target).get(where=where, include=include, limit=GET_PAGE, offset=offset)
        yield dict(page)
        if len(page["ids"]) < GET_PAGE:
            return
        offset += GET_PAGE


def holds_file(connection: chroma.Connection, name: str, source_path: str) -> bool:
    """Whether the collection holds any passage read from ``source_path`` (one row read, not the file's all)."""
    target = collection_name(name)
    with connection.session(touches=(target,), writes=False) as session:
        try:
            collection = session.collection(target)
        except NotFoundError:
            return False
        return bool(collection.get(where={PATH_KEY: source_path}, limit=1, include=[])["ids"])


def drop_stale(connection: chroma.Connection, name: str, source_path: str, current: Iterable[str]) -> int:
    """What a file gave before and gives no more (a record edited in a RIS export, a file that now names its
    PMID) goes: a file's documents replace everything that file added, never sit beside its old text.
    ``current`` is every document the file gives now (20,000 for a large export: compared here, not sent to
    the store as one filter). Returns how many passages went."""
    target = collection_name(name)
    keep = set(current)
    stale = [
        passage_id
        for page in _pages(connection, target, ["metadatas"], {PATH_KEY: source_path})
        for passage_id, meta in zip(page["ids"], page["metadatas"] or [], strict=True)
        if str(meta.get(DOCUMENT_KEY)) not in keep
    ]
    with connection.session(touches=(target,), writes=True) as session:
        collection = session.collection(target)
        for start in range(0, len(stale), connection.max_batch):
            collection.delete(ids=stale[start : start + connection.max_batch])
    return len(stale)


@dataclass(frozen=True)
class StoredDocument:
    """A document of a collection as the store holds it."""

    id: str
    title: str
    format: str
    passages: int
    source_path: str | None
    pmcid: str | None
    full_text: bool
    content_hash: str
    not_embedded: int = 0  # passages stored before their vectors (``evidence.pending``)


def list_documents(connection: chroma.Connection, name: str) -> list[StoredDocument]:
    """Every document of the collection, with its passage count (passages added from JSON Lines, which carry
    no document key, are listed by the document their address names)."""
    target = collection_name(name)
    rows = (
        (text, meta)
        for page in _pages(connection, target, ["metadatas", "documents"])
        for text, meta in zip(page["documents"] or [], page["metadatas"] or [], strict=True)
    )
    grouped: dict[str, dict[str, Any]] = {}
    for text, meta in rows:
        item = chroma.decode(text)
        document_id = str(meta.get(DOCUMENT_KEY) or (item.passage.document_id if item.passage else item.id))
        title = item.citation.title
        if item.passage is not None and item.passage.section and title.endswith(f" ({item.passage.section})"):
            title = title.removesuffix(f" ({item.passage.section})")
        entry = grouped.setdefault(document_id, {"meta": meta, "title": title, "passages": 0, "waiting": 0})
        entry["passages"] += 1
        entry["waiting"] += meta.get(EMBEDDED_KEY) is False
    return sorted(
        (
            StoredDocument(
                id=document_id,
                title=entry["title"],
                format=str(entry["meta"].get(FORMAT_KEY, "jsonl")),
                passages=entry["passages"],
                source_path=entry["meta"].get(PATH_KEY),
                pmcid=entry["meta"].get(PMCID_KEY),
                full_text=bool(entry["meta"].get(FULL_TEXT_KEY, False)),
                content_hash=str(entry["meta"].get(HASH_KEY, "")),
                not_embedded=entry["waiting"],
            )
            for document_id, entry in grouped.items()
        ),
        key=lambda document: document.id,
    )


def remove_document(connection: chroma.Connection, name: str, document_id: str) -> int:
    """Remove a document's passages; returns how many there were (0: no such document)."""
    target = collection_name(name)
    with connection.session(touches=(target,), writes=True) as session:
        collection = session.collection(target)
        found = collection.get(where={DOCUMENT_KEY: document_id}, include=[])
        if found["ids"]:
            collection.delete(ids=found["ids"])
        return len(found["ids"])


def full_text_passages(connection: chroma.Connection, name: str, pmcid: str) -> list[Evidence]:
    """The passages of the full-text article with this PMCID, in document order; empty when not kept."""
    target = collection_name(name)
    with connection.session(touches=(target,), writes=False) as session:
        try:  # by name: listing every collection cost a run time in proportion to the store's size
            collection = session.collection(target)
        except NotFoundError:
            return []
        found = collection.get(where={"$and": [{PMCID_KEY: pmcid}, {FULL_TEXT_KEY: True}]}, include=["documents"])
    items = [chroma.decode(text) for text in found["documents"] or []]
    return sorted(items, key=lambda item: int(item.passage.passage_id) if item.passage else 0)


class LibraryFullText:
    """The library's side of a run's full-text reading (``sources.fulltext.FullTextCache``): an article's
    passages found by PMCID, and a fetched article kept in the collection ``name`` (embedded, so
    ``search --sources library`` finds it too)."""

    def __init__(
        self, connection: chroma.Connection, embeddings: EmbeddingService, name: str, grade: DocumentGrader
    ) -> None:
        self._connection = connection
        self._embeddings = embeddings
        self._name = name
        self._grade = grade

    async def full_text(self, pmcid: str) -> list[Evidence]:
        return await asyncio.to_thread(full_text_passages, self._connection, self._name, pmcid)

    async def keep_full_text(self, document: FileDocument) -> list[Evidence]:
        await asyncio.to_thread(
            add_file_documents, self._connection, self._embeddings, self._name, [document], self._grade
        )
        return passage_items(self._name, document, self._grade(document))
