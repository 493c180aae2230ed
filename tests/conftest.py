"""Shared fixtures. Real reference data lives beside the project in ../shared/data (never copied in)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import structlog

from helpers import servers

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


# Set by .ci/run: there the data is present, so a test that needs it fails instead of skipping when it is not
# (a pinned figure must not pass by being skipped).
REQUIRE_DATA = "DEEPCRITICAL_REQUIRE_DATA"

# The fast subset is ``pytest -m "not slow"`` (README). Besides the tests marked ``slow`` by hand (a child process
# of the command), a test is slow when it loads the real model or starts a real server.
SLOW_MARKERS = ("model", "chroma_server")
SLOW_FIXTURES = frozenset({"chroma_server", "redis_url", "embeddings"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        uses = set(getattr(item, "fixturenames", ()))
        if any(item.get_closest_marker(name) for name in SLOW_MARKERS) or uses & SLOW_FIXTURES:
            item.add_marker(pytest.mark.slow)


def shared_folder(name: str) -> Path:
    """``../shared/data/<name>``, or a skip naming exactly what is missing: a user's clone has no
    ``../shared``, and a partial copy may lack one folder while holding the others. With
    ``DEEPCRITICAL_REQUIRE_DATA=1`` (CI) a missing folder is a failure."""
    folder = SHARED_DATA / name
    if not folder.is_dir():
        reason = f"real reference data not found at {folder} (it sits beside the clone when CI runs .ci/run)"
        if os.environ.get(REQUIRE_DATA) == "1":
            pytest.fail(f"{reason}; {REQUIRE_DATA}=1 requires it")
        pytest.skip(reason)
    return folder


@pytest.fixture
def shared_data() -> Callable[[str], Path]:
    """``shared_folder`` for tests that need several folders of ../shared/data (each skips on its own)."""
    return shared_folder


@pytest.fixture
def ncbi_data() -> Path:
    """Real NCBI E-utilities responses (../shared/data/ncbi)."""
    return shared_folder("ncbi")


@pytest.fixture
def ddg_data() -> Path:
    """Real DuckDuckGo text-search results (../shared/data/ddg)."""
    return shared_folder("ddg")


@pytest.fixture
def fulltext_data() -> Path:
    """Real PMC JATS articles and real PDFs (../shared/data/fulltext)."""
    return shared_folder("fulltext")


@pytest.fixture(scope="session", autouse=True)
def _model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Built ONNX graphs and cached vectors in one folder for the session (commands run as subprocesses
    included), never in the developer's own cache."""
    before = os.environ.get("DEEPCRITICAL_MODEL_CACHE")
    os.environ["DEEPCRITICAL_MODEL_CACHE"] = str(tmp_path_factory.mktemp("model-cache"))
    yield
    if before is None:
        os.environ.pop("DEEPCRITICAL_MODEL_CACHE", None)
    else:
        os.environ["DEEPCRITICAL_MODEL_CACHE"] = before


@pytest.fixture(autouse=True)
def _fresh_structlog() -> Iterator[None]:
    """A command run in process (CliRunner) configures structlog for the process, its level filter included;
    without a reset, a later test's ``capture_logs`` would see nothing below that level."""
    yield
    structlog.reset_defaults()


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A real ``redis-server`` on 127.0.0.1 and a free port, nothing saved to disk; stopped by pid after."""
    with servers.redis_server(tmp_path) as url:
        yield url


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """A real ``chroma run`` on 127.0.0.1 and a free port, answering its heartbeat; stopped by pid after."""
    with servers.chroma_server(tmp_path) as address:
        yield address


@pytest.fixture
def plain_logs() -> Iterator[None]:
    """Plain-text logs with plain tracebacks: structlog's default renders every local of every frame
    of a traceback with rich, which takes minutes for a crash deep inside a run."""
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback),
        ]
    )
    yield
    structlog.reset_defaults()
