"""Fixtures for the evidence store: the real model (loaded once per session), stores on both backends,
and a real `chroma run` server (tests/conftest.py) started per test so every test has its own library
collection."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from deepcritical.config import Settings
from deepcritical.evidence import EmbeddingService, EvidenceStore
from helpers.stores import OpenStore, settings_for


@pytest.fixture(scope="session")
def embeddings() -> EmbeddingService:
    """The bundled model, loaded once for the whole session (the service shares it process-wide)."""
    service = EmbeddingService()
    assert service.dimension > 0
    return service


@pytest.fixture(params=["embedded", pytest.param("server", marks=pytest.mark.chroma_server)])
def store_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Settings for an embedded store under a temporary home, or for a fresh Chroma server."""
    if request.param == "server":
        host, port = request.getfixturevalue("chroma_server")
        return settings_for(tmp_path / "home", host, port)
    return settings_for(tmp_path / "home")


@pytest.fixture
async def open_store(store_settings: Settings, embeddings: EmbeddingService) -> AsyncIterator[OpenStore]:
    """Opens stores on the test's backend (``run_id`` defaults to "run-1") and closes them afterwards."""
    opened: list[EvidenceStore] = []

    async def _open(run_id: str = "run-1", settings: Settings | None = None) -> EvidenceStore:
        store = await EvidenceStore.open(settings or store_settings, embeddings, run_id)
        opened.append(store)
        return store

    yield _open
    for store in opened:
        await store.close()
