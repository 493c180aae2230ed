"""Chroma plumbing: naming, opening and closing collections, record encoding, reads and writes.
Connecting (embedded or server, and the embedded store's sessions) is ``chroma_connection``.

Everything here is synchronous; the store calls it through ``asyncio.to_thread``.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from deepcritical.config import Settings
from deepcritical.errors import StoreError
from deepcritical.evidence import run_index
from deepcritical.evidence.chroma_connection import (
    EVERY_COLLECTION,
    Connection,
    Session,
    connect,
    store_directory,
)
from deepcritical.evidence.embedding_models import Vectors
from deepcritical.models import Evidence

# Connecting lives in ``chroma_connection``; the rest of the project reaches it through this module.
__all__ = [
    "EVERY_COLLECTION",
    "Connection",
    "Session",
    "connect",
    "store_directory",
]

LIBRARY_COLLECTION = "library"
# Synthetic demo evidence must never be recalled into a real run's report.
DEMO_LIBRARY_COLLECTION = "library-demo"


def library_name(settings: Settings) -> str:
    return DEMO_LIBRARY_COLLECTION if settings.demo_mode else LIBRARY_COLLECTION


MODEL_KEY = "deepcritical_embedding_model"
CREATED_KEY = "deepcritical_created"
# A run collection is open while its run goes on: ``OPEN_BY_KEY`` names the process writing to it
# (``host:pid``) from its creation, ``CLOSED_KEY`` is set when the run closes its store. Pruning never
# removes an open collection whose process still lives (``evidence.library.is_open``).
OPEN_BY_KEY = "deepcritical_open_by"
CLOSED_KEY = "deepcritical_closed"
_MAX_NAME = 63  # Chroma: 3-63 characters, alphanumeric at both ends, [a-zA-Z0-9._-] inside
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]+")


def run_collection_name(run_id: str) -> str:
    """A valid, stable Chroma name for a run. Ids that had to be altered get a hash suffix so two
    different run ids never share a collection."""
    if not run_id.strip():
        raise ValueError("run_id must not be empty")
    slug = _UNSAFE.sub("-", run_id).strip("-_")
    name = f"run-{slug}"
    if slug == run_id and len(name) <= _MAX_NAME and name[-1].isalnum():
        return name
    digest = hashlib.sha256(run_id.encode()).hexdigest()[:12]
    return f"run-{slug[: _MAX_NAME - 18].strip('-_')}-{digest}".replace("--", "-")


def this_process() -> str:
    """``host:pid``: who holds a run collection open."""
    return f"{socket.gethostname()}:{os.getpid()}"


def open_collection(connection: Connection, name: str, model_name: str, *, run: bool = False) -> None:
    """Get or create a cosine collection with no embedding function, labelled with the model that
    fills it and the time it was created (for retention); a ``run`` collection also with the process
    that holds it open (and so in ``run_index``). Vectors from another model are not comparable, so a
    mismatch is an error."""
    now = datetime.now(UTC)
    metadata = {MODEL_KEY: model_name, CREATED_KEY: now.isoformat(timespec="seconds")}
    if run:
        metadata[OPEN_BY_KEY] = this_process()
    try:
        with connection.session(touches=(name,), writes=True) as session:
            collection = session.client.get_or_create_collection(
                name=name,
                configuration={"hnsw": {"space": "cosine"}},
                metadata=metadata,
                # None, not the default: Chroma's default function would download a model.
                embedding_function=None,
            )
            if run:
                _claim(collection, metadata[OPEN_BY_KEY])
    except StoreError:
        raise
    except Exception as error:  # client-side validation and server errors
        raise StoreError(f"cannot open collection {name!r} in {connection.where}: {error}") from error
    stored_model = (collection.metadata or {}).get(MODEL_KEY)
    if stored_model is not None and stored_model != model_name:
        raise StoreError(
            f"collection {name!r} in {connection.where} holds vectors from the embedding model {stored_model!r}, "
            f"but this process uses {model_name!r}. Fix: set DEEPCRITICAL_EMBEDDING_MODEL back, or use another "
            "DEEPCRITICAL_HOME (or Chroma server) for the new model."
        )
    if run:
        run_index.opened(connection.index_path, name, this_process(), now)


def _claim(collection: Any, owner: str) -> None:
    """Name this process as the holder of a run collection that already existed (a resumed run's):
    ``get_or_create_collection`` keeps an existing collection's metadata, which would still name the
    killed process (or say closed), and a prune would take the collection from under the resumed run."""
    stored = dict(collection.metadata or {})
    if stored.get(OPEN_BY_KEY) != owner or CLOSED_KEY in stored:
        stored[OPEN_BY_KEY] = owner
        stored.pop(CLOSED_KEY, None)
        collection.modify(metadata=stored)


def close_run_collection(connection: Connection, name: str) -> None:
    """Mark a run collection closed: its run is over, so pruning may take it once it is old enough."""
    now = datetime.now(UTC)
    with connection.session(touches=(name,), writes=True) as session:
        collection = session.collection(name)
        metadata = dict(collection.metadata or {})
        metadata[CLOSED_KEY] = now.isoformat(timespec="seconds")
        collection.modify(metadata=metadata)
    run_index.closed(connection.index_path, name, now)


def encode(evidence: Evidence) -> tuple[str, dict[str, str | int | bool]]:
    """The document (the full Evidence as JSON, so it round-trips exactly) and a small metadata dict that
    a ``where`` filter can use: source, title, grade (design, population, level when on the scale) and
    whether the item is retracted or under an expression of concern. Chroma takes no None values, so an
    item outside the OCEBM scale has no ``level`` key."""
    grade = evidence.grade
    metadata: dict[str, str | int | bool] = {
        "source": evidence.citation.source,
        "title": evidence.citation.title,
        "design": grade.design,
        "population": grade.population,
        "grade_basis": grade.basis or "none",
        "retracted": evidence.retracted,
        "expression_of_concern": evidence.expression_of_concern,
    }
    if grade.level is not None:
        metadata["level"] = grade.level
    return evidence.model_dump_json(), metadata


def decode(document: str) -> Evidence:
    return Evidence.model_validate_json(document)


@dataclass(frozen=True)
class Stored:
    evidence: Evidence
    vector: Vectors


def fetch(collection: Any, ids: Sequence[str] | None, *, vectors: bool) -> dict[str, Stored]:
    """Stored records by id (all of them when ``ids`` is None), in the order Chroma returns them."""
    if ids is not None and not ids:
        return {}
    include = ["documents", "embeddings"] if vectors else ["documents"]
    result = collection.get(ids=list(ids) if ids is not None else None, include=include)
    embeddings = result.get("embeddings") if vectors else None
    records: dict[str, Stored] = {}
    for position, (item_id, document) in enumerate(zip(result["ids"], result["documents"], strict=True)):
        vector = (
            np.asarray(embeddings[position], dtype=np.float32)
            if embeddings is not None
            else np.zeros(0, dtype=np.float32)
        )
        records[item_id] = Stored(decode(document), vector)
    return records


def upsert(collection: Any, max_batch: int, items: Sequence[Evidence], vectors: Vectors) -> None:
    """Write records in chunks the backend accepts."""
    for start in range(0, len(items), max_batch):
        chunk = items[start : start + max_batch]
        documents, metadatas = zip(*(encode(item) for item in chunk), strict=True)
        collection.upsert(
            ids=[item.id for item in chunk],
            embeddings=vectors[start : start + max_batch],
            documents=list(documents),
            metadatas=list(metadatas),
        )


def nearest(collection: Any, vectors: Vectors, n: int) -> list[list[tuple[str, float, str]]]:
    """For each query vector, up to ``n`` stored (id, cosine similarity, document), best first."""
    available = collection.count()
    if available == 0 or len(vectors) == 0:
        return [[] for _ in range(len(vectors))]
    result = collection.query(query_embeddings=vectors, n_results=min(n, available), include=["documents", "distances"])
    return [
        [(item_id, 1.0 - float(distance), document) for item_id, distance, document in zip(*row, strict=True)]
        for row in zip(result["ids"], result["distances"], result["documents"], strict=True)
    ]
