"""Vectors kept by content hash, once per user: a text embedded once is not embedded again, by a later
evaluation whatever its ``--out`` folder (``deepcritical eval`` spent 45 s of a 60-76 s set-up re-embedding
the same PubMedQA pool for every folder), or by a later run (a warm run whose texts are all known does not
load the model at all: 0.27 CPU s of ONNX Runtime's import and session).

A vector is keyed by the SHA-256 of the encoder's identity (``embedding_models.identity``: the model, the
backend, the runtimes' versions, what decides the numbers) and the text, so vectors of another model or
runtime are never returned. The file is SQLite in write-ahead mode (one writer at a time, readers never
blocked), beside the built ONNX graphs.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

import numpy as np

from deepcritical.evidence.embedding_models import Vectors, default_cache_dir

FILE_NAME = "vectors.sqlite3"
_CHUNK = 500  # keys per query: below SQLite's limit on bound parameters
_TIMEOUT_SECONDS = 30.0


def default_path() -> Path:
    return default_cache_dir() / FILE_NAME


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
        # Write-ahead, synced at checkpoints only: a run writes after each batch it embeds, and a cache
        # that loses its last writes in a power cut only embeds them again.
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)")
        return connection

    def get(self, texts: Sequence[str]) -> dict[str, Vectors]:
        """The cached vectors of ``texts``, by text (texts not cached are absent)."""
        keys = {self._key(text): text for text in dict.fromkeys(texts)}
        found: dict[str, Vectors] = {}
        ordered = list(keys)
        if not keys or not self.path.is_file():
            return found
        with closing(self._connect()) as connection:
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
        if not rows:
            return
        with closing(self._connect()) as connection, connection:
            connection.executemany("INSERT OR IGNORE INTO vectors (key, vector) VALUES (?, ?)", rows)
