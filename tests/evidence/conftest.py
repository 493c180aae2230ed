"""Fixtures for the evidence store: the real model (loaded once per session), stores on both backends,
and a real `chroma run` server started per test so every test has its own library collection."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
import pytest
from evidence_factory import OpenStore, settings_for

from deepcritical.config import Settings
from deepcritical.evidence import EmbeddingService, EvidenceStore

SERVER_START_DEADLINE = 60.0


@pytest.fixture(scope="session")
def embeddings() -> EmbeddingService:
    """The bundled model, loaded once for the whole session (the service shares it process-wide)."""
    service = EmbeddingService()
    assert service.dimension > 0
    return service


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=15)


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """A real Chroma server on 127.0.0.1 and a free port, answering its heartbeat; stopped by pid after."""
    executable = Path(sys.executable).parent / "chroma"
    if not executable.exists():
        pytest.fail(f"the `chroma` console script is missing at {executable}: install chromadb into this venv")
    port = _free_port()
    log_path = tmp_path / "chroma-server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(executable), "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(tmp_path / "server")],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )
    try:
        deadline = time.monotonic() + SERVER_START_DEADLINE
        while True:
            try:
                httpx2.get(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1.0).raise_for_status()
                break
            except httpx2.HTTPError:
                if time.monotonic() > deadline:
                    pytest.fail(f"chroma run did not answer within {SERVER_START_DEADLINE}s: {log_path.read_text()}")
            # Waiting on the process doubles as the poll interval and notices an early exit.
            try:
                process.wait(timeout=0.05)
                pytest.fail(f"chroma run exited with {process.returncode}: {log_path.read_text()}")
            except subprocess.TimeoutExpired:
                pass
        yield "127.0.0.1", port
    finally:
        _stop(process)


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
