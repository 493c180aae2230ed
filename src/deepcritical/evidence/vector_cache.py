"""Vectors kept by content hash, once per user: a text embedded by one evaluation is not embedded again by
the next, whatever its ``--out`` folder (``deepcritical eval`` spent 45 s of a 60-76 s set-up re-embedding
the same PubMedQA pool for every folder).

A vector is keyed by the SHA-256 of the encoder's identity (model, backend, ONNX Runtime version: what
decides the numbers) and the text, so vectors of another model or runtime are never returned. The file is
SQLite (one writer at a time, readers never blocked), beside the built ONNX graphs.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import structlog

from deepcritical.evidence.embeddings import EmbeddingService, Vectors, default_cache_dir

FILE_NAME = "vectors.sqlite3"
_CHUNK = 500  # keys per query: below SQLite's limit on bound parameters
_TIMEOUT_SECONDS = 30.0
log = structlog.get_logger(__name__)


def default_path() -> Path:
    return default_cache_dir() / FILE_NAME


def encoder_identity(embeddings: EmbeddingService) -> str:
    """What decides an encoder's numbers: the model, the backend in use, and its runtime's version."""
    import onnxruntime

    return f"{embeddings.model_name}|{embeddings.backend}|onnxruntime {onnxruntime.__version__}"


class VectorCache:
    """Vectors by (encoder, text) in the SQLite file ``path``."""

    def __init__(self, path: Path, identity: str) -> None:
        self.path = path
        self._identity = identity

    def _key(self, text: str) -> bytes:
        return hashlib.sha256(f"{self._identity}\x00{text}".encode()).digest()

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=_TIMEOUT_SECONDS)
        connection.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)")
        return connection

    def get(self, texts: Sequence[str]) -> dict[str, Vectors]:
        """The cached vectors of ``texts``, by text (texts not cached are absent)."""
        keys = {self._key(text): text for text in dict.fromkeys(texts)}
        found: dict[str, Vectors] = {}
        ordered = list(keys)
        with self._connect() as connection:
            for start in range(0, len(ordered), _CHUNK):
                chunk = ordered[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                for key, blob in connection.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk):
                    found[keys[key]] = np.frombuffer(blob, dtype=np.float32).copy()
        return found

    def put(self, texts: Sequence[str], vectors: Vectors) -> None:
        rows = [
            (self._key(text), np.asarray(vector, dtype=np.float32).tobytes())
            for text, vector in zip(texts, vectors, strict=True)
        ]
        with self._connect() as connection:
            connection.executemany("INSERT OR IGNORE INTO vectors (key, vector) VALUES (?, ?)", rows)


def embed_through(cache: VectorCache, embeddings: EmbeddingService, texts: Sequence[str]) -> int:
    """Make ``embeddings`` know the vectors of ``texts``: cached ones are read, the rest embedded (one
    call) and cached. Returns how many were embedded. A cache that cannot be read or written costs its
    speed only: the texts are embedded as without it."""
    unique = list(dict.fromkeys(texts))
    try:
        found = cache.get(unique)
    except (sqlite3.Error, OSError) as error:
        log.warning("vector cache not read", path=str(cache.path), error=str(error))
        found = {}
    missing = [text for text in unique if text not in found]
    if found:
        embeddings.remember(list(found), np.stack(list(found.values())))
    if not missing:
        return 0
    vectors = embeddings.embed(missing)
    embeddings.remember(missing, vectors)
    try:
        cache.put(missing, vectors)
    except (sqlite3.Error, OSError) as error:  # a read-only cache: the next evaluation embeds them again
        log.warning("vector cache not written", path=str(cache.path), error=str(error))
    return len(missing)
