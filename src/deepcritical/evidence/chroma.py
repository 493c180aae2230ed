"""Chroma plumbing: connecting (embedded or server), naming and opening collections, record encoding.

Everything here is synchronous; the store calls it through ``asyncio.to_thread``.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import chromadb
import numpy as np
from chromadb.config import Settings as ChromaSettings

from deepcritical.config import Settings
from deepcritical.errors import StoreError
from deepcritical.evidence.embeddings import Vectors
from deepcritical.models import Evidence

LIBRARY_COLLECTION = "library"
# Synthetic demo evidence must never be recalled into a real run's report.
DEMO_LIBRARY_COLLECTION = "library-demo"


def library_name(settings: Settings) -> str:
    return DEMO_LIBRARY_COLLECTION if settings.demo_mode else LIBRARY_COLLECTION


MODEL_KEY = "deepcritical_embedding_model"
_MAX_NAME = 63  # Chroma: 3-63 characters, alphanumeric at both ends, [a-zA-Z0-9._-] inside
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]+")


@dataclass(frozen=True)
class Connection:
    client: Any  # chromadb.api.ClientAPI (chromadb is untyped for mypy here)
    where: str  # for error messages: the directory or the server address


def connect(settings: Settings) -> Connection:
    """A Chroma client: a server when ``CHROMA_HOST`` is set, else an embedded store under the home."""
    # No telemetry: DeepCritical makes no network calls it does not need.
    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if settings.chroma_host:
        where = f"the Chroma server at {settings.chroma_host}:{settings.chroma_port}"
        try:
            client = chromadb.HttpClient(host=settings.chroma_host, port=settings.chroma_port, settings=chroma_settings)
        except Exception as error:  # connection refused, DNS, TLS, HTTP errors: all "unreachable"
            raise StoreError(
                f"cannot reach {where}: {error}. Fix: start it (`chroma run --host {settings.chroma_host} "
                f"--port {settings.chroma_port} --path DIR`) or unset CHROMA_HOST to use the embedded store "
                "under DEEPCRITICAL_HOME."
            ) from error
        return Connection(client, where)
    path = settings.home / "chroma"
    where = f"the evidence store directory {path}"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StoreError(
            f"cannot create {where}: {error.strerror or error}. Fix: set DEEPCRITICAL_HOME to a writable directory."
        ) from error
    if not os.access(path, os.W_OK | os.X_OK):
        raise StoreError(f"{where} is not writable. Fix: set DEEPCRITICAL_HOME to a writable directory.")
    try:
        client = chromadb.PersistentClient(path=str(path), settings=chroma_settings)
    except Exception as error:  # sqlite, Rust bindings and settings errors all mean "cannot open"
        raise StoreError(
            f"cannot open {where}: {error}. Fix: check the directory, or set DEEPCRITICAL_HOME elsewhere."
        ) from error
    return Connection(client, where)


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


def open_collection(connection: Connection, name: str, model_name: str) -> Any:
    """Get or create a cosine collection with no embedding function, labelled with the model that
    fills it. Vectors from another model are not comparable, so a mismatch is an error."""
    try:
        collection = connection.client.get_or_create_collection(
            name=name,
            configuration={"hnsw": {"space": "cosine"}},
            metadata={MODEL_KEY: model_name},
            # None, not the default: Chroma's default function would download a model.
            embedding_function=None,
        )
    except Exception as error:  # client-side validation and server errors
        raise StoreError(f"cannot open collection {name!r} in {connection.where}: {error}") from error
    stored_model = (collection.metadata or {}).get(MODEL_KEY)
    if stored_model is not None and stored_model != model_name:
        raise StoreError(
            f"collection {name!r} in {connection.where} holds vectors from the embedding model {stored_model!r}, "
            f"but this process uses {model_name!r}. Fix: set DEEPCRITICAL_EMBEDDING_MODEL back, or use another "
            "DEEPCRITICAL_HOME (or Chroma server) for the new model."
        )
    return collection


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
