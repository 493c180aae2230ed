"""Stores for tests: settings from explicit values, and the embedded store with a deterministic fake embedder
(vectors from a hash), so only the store is under test and no model is loaded."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path

import numpy as np

from deepcritical.config import Settings
from deepcritical.evidence import EvidenceStore, chroma, library
from deepcritical.evidence.embeddings import Vectors
from deepcritical.models import Evidence, SourceName
from helpers import builders

OpenStore = Callable[..., Awaitable[EvidenceStore]]


def make_evidence(
    key: str,
    content: str,
    *,
    title: str | None = None,
    source: SourceName = "pubmed",
    pmid: bool = True,
) -> Evidence:
    """An item with id ``pmid:<key>`` (or ``url:https://example.org/<key>`` when ``pmid`` is False)."""
    url = f"https://pubmed.ncbi.nlm.nih.gov/{key}/" if pmid else f"https://example.org/{key}"
    return builders.evidence(content, pmid=key if pmid else None, source=source, title=title or f"Study {key}", url=url)


def settings_for(home: Path, host: str | None = None, port: int = 8000, **extra: object) -> Settings:
    """Settings from explicit values, so a developer's CHROMA_HOST or DEEPCRITICAL_HOME cannot leak in."""
    values: dict[str, object] = {"DEEPCRITICAL_HOME": str(home), "CHROMA_HOST": host, "CHROMA_PORT": port}
    values.update(extra)
    return Settings(**values)  # type: ignore[arg-type]


# Random directions in 64 dimensions are nearly orthogonal: distinct texts are never near-duplicates.
FAKE_DIMENSION = 64


class HashEmbeddings:
    """Stands in for EmbeddingService: the same text always gets the same unit vector."""

    model_name = "hash-embeddings-for-tests"

    async def aembed(self, texts: list[str]) -> Vectors:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            vector = np.random.default_rng(seed).standard_normal(FAKE_DIMENSION)
            rows.append(vector / np.linalg.norm(vector))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), FAKE_DIMENSION)


async def open_hash_store(home: Path, run_id: str, **extra: object) -> EvidenceStore:
    return await EvidenceStore.open(settings_for(home, **extra), HashEmbeddings(), run_id)  # type: ignore[arg-type]


def make_collection(home: Path, name: str, *, created: datetime | None) -> None:
    """A run collection as an earlier version (no creation time) or an earlier run left it."""
    connection = chroma.connect(settings_for(home))
    metadata = {chroma.MODEL_KEY: HashEmbeddings.model_name}
    if created is not None:
        metadata[chroma.CREATED_KEY] = created.isoformat()
    try:
        with connection.session(touches=(name,), writes=True) as session:
            session.client.get_or_create_collection(name, metadata=metadata, embedding_function=None)
    finally:
        connection.close()


def names(home: Path) -> set[str]:
    connection = chroma.connect(settings_for(home))
    try:
        return {info.name for info in library.collections(connection)}
    finally:
        connection.close()
