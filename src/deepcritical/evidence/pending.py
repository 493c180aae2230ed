"""Passages stored before their vectors, and their vectors filled in behind.

On this 2-core machine the embedding model (all-MiniLM-L6-v2, int8 ONNX Runtime) embeds 30 to 60 records
with abstracts a second, however it is batched or tuned (phases/14_trust.md), while parsing and storing run at
several hundred. So ``library add`` of a large export stores every passage at once with a placeholder vector,
marked pending (``documents.EMBEDDED_KEY``): it is found by its identifiers, metadata and words right away,
and by meaning once ``embed_pending`` (``deepcritical library embed``) has given it its vector. Embedding goes
a part at a time, each part written before the next is embedded, so an embed that stops keeps what it did
and the next one takes only the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from deepcritical.errors import StoreError
from deepcritical.evidence import chroma
from deepcritical.evidence.document_files import PATH_KEY
from deepcritical.evidence.documents import EMBEDDED_KEY, PENDING, collection_name, exists
from deepcritical.evidence.embeddings import EmbeddingService, passage_text

# Passages embedded and written together: one embedding call's fixed cost spread, a part's progress shown.
EMBED_PART = 512


def _where(source_paths: Sequence[str] | None) -> dict[str, Any]:
    if source_paths is None:
        return PENDING
    return {"$and": [PENDING, {PATH_KEY: {"$in": list(source_paths)}}]}


def count_pending(connection: chroma.Connection, name: str, source_paths: Sequence[str] | None = None) -> int:
    """Passages of the collection ``name`` (of the files ``source_paths``, when given) not embedded yet."""
    target = collection_name(name)
    if not exists(connection, name):
        return 0
    with connection.session(touches=(target,), writes=False) as session:
        return len(session.collection(target).get(where=_where(source_paths), include=[])["ids"])


def embed_pending(
    connection: chroma.Connection,
    embeddings: EmbeddingService,
    name: str,
    *,
    source_paths: Sequence[str] | None = None,
    on_progress: Callable[[int, int], None] = lambda _done, _total: None,
    stop: Callable[[], bool] = lambda: False,
) -> int:
    """Give every pending passage of the collection ``name`` (of ``source_paths`` only, when given) its vector,
    ``EMBED_PART`` at a time; ``on_progress(done, total)`` after each part; before each part, ``stop()`` ends it
    (a server shutting down). Returns how many were embedded.

    A part is read, embedded outside any store session (other processes keep using the store meanwhile),
    then written only for the passages still there with the text that was embedded: one replaced or removed
    in between is left to its new version."""
    target = collection_name(name)
    if not exists(connection, name):
        raise StoreError(
            f"no document collection {name!r} in {connection.where}. Fix: `deepcritical library list` shows the "
            "collections (as docs-NAME); name one with --collection"
        )
    chroma.open_collection(connection, target, embeddings.model_name)  # another model's vectors would not compare
    where = _where(source_paths)
    total = count_pending(connection, name, source_paths)
    done = 0
    while not stop():
        with connection.session(touches=(target,), writes=False) as session:
            page = session.collection(target).get(where=where, limit=EMBED_PART, include=["documents"])
        if not page["ids"]:
            return done
        texts = {item_id: document for item_id, document in zip(page["ids"], page["documents"] or [], strict=True)}
        items = [chroma.decode(document) for document in texts.values()]
        vectors = embeddings.embed([passage_text(item.citation.title, item.content) for item in items])
        by_id = dict(zip(texts, vectors, strict=True))
        with connection.session(touches=(target,), writes=True) as session:
            collection = session.collection(target)
            now = collection.get(ids=list(texts), include=["documents", "metadatas"])
            rows = zip(now["ids"], now["documents"] or [], now["metadatas"] or [], strict=True)
            same = [
                (item_id, meta)
                for item_id, document, meta in rows
                if document == texts[item_id] and meta.get(EMBEDDED_KEY) is False
            ]
            for start in range(0, len(same), connection.max_batch):
                chunk = same[start : start + connection.max_batch]
                collection.update(
                    ids=[item_id for item_id, _ in chunk],
                    embeddings=[by_id[item_id] for item_id, _ in chunk],
                    metadatas=[{**meta, EMBEDDED_KEY: True} for _, meta in chunk],
                )
        done += len(same)
        on_progress(done, max(total, done))
    return done
