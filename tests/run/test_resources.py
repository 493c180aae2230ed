"""Resources built once per process and passed down: a run's path builds its redactor, its embedding service and
its store connection once; runs on the process's resources share them and leave the connection open for the
next run; the watch re-checks retractions through a port, not the PubMed source."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from deepcritical.config import Settings
from deepcritical.evidence import chroma
from deepcritical.evidence.embeddings import EmbeddingService
from deepcritical.evidence.resources import Resources
from deepcritical.redaction import Redactor
from deepcritical.run import setup
from deepcritical.run.execute import run_to_folder
from deepcritical.run.request import RunRequest

SRC = Path(__file__).resolve().parents[2] / "src" / "deepcritical"


def settings_for(tmp_path: Path) -> Settings:
    values = {"DEMO_MODE": True, "DEEPCRITICAL_HOME": str(tmp_path / "home"), "DEEPCRITICAL_SOURCES": "pubmed"}
    return Settings(_env_file=None, **values).demo_preset()  # type: ignore[arg-type]


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times each resource was built."""
    counts = {"redactor": 0, "embeddings": 0, "connection": 0}

    def counting(kind: str, build: object) -> object:
        def wrapper(*args: object, **kwargs: object) -> object:
            counts[kind] += 1
            return build(*args, **kwargs)  # type: ignore[operator]

        return wrapper

    monkeypatch.setattr(Redactor, "for_settings", counting("redactor", Redactor.for_settings))
    monkeypatch.setattr(EmbeddingService, "for_settings", counting("embeddings", EmbeddingService.for_settings))
    monkeypatch.setattr(chroma, "connect", counting("connection", chroma.connect))
    return counts


async def test_a_run_builds_its_redactor_embedder_and_connection_once(tmp_path: Path, built: dict[str, int]) -> None:
    # The run folder's redactor and the orchestrator's were two (one path, two builds); the store's connection
    # is the run's one, closed when the run ends.
    settings = settings_for(tmp_path)
    request = RunRequest(question="Do statins reduce mortality in sepsis?", max_iterations=1, no_llm=True)
    done = await run_to_folder(request.question, settings.with_values(no_llm=True), request=request)
    assert done.outcome.error is None
    assert built == {"redactor": 1, "embeddings": 1, "connection": 1}


async def test_runs_on_the_process_resources_share_them_and_leave_the_connection_open(
    tmp_path: Path, built: dict[str, int]
) -> None:
    settings = settings_for(tmp_path).with_values(no_llm=True)
    with Resources(settings) as process:
        for number in range(2):
            question = f"Do statins reduce mortality in sepsis? ({number})"
            done = await run_to_folder(question, settings, request=RunRequest(question=question), resources=process)
            assert done.outcome.error is None
        connection = process.connection()
        # Still open after both runs: the next run (or a library command) uses it as it is.
        with connection.session(touches=(), writes=False):
            pass
    assert built == {"redactor": 1, "embeddings": 1, "connection": 1}
    assert connection._closed  # type: ignore[attr-defined]  # closed with the process's resources


async def test_a_store_on_the_process_connection_leaves_it_open(tmp_path: Path, built: dict[str, int]) -> None:
    settings = settings_for(tmp_path)
    process = Resources(settings)
    open_store = setup.store_opener(process)
    first = await open_store(settings, "run-1", "Do statins help?")
    await first.close()
    second = await open_store(settings, "run-2", "Do statins help?")
    await second.close()
    assert built["connection"] == 1
    assert not process.connection()._closed  # type: ignore[attr-defined]
    process.close()
    process.close()  # closing twice is harmless
    assert built["connection"] == 1


def test_the_watch_asks_a_port_for_retraction_checks_and_imports_no_source() -> None:
    tree = ast.parse((SRC / "service" / "watch_run.py").read_text(encoding="utf-8"))
    imported = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not {module for module in imported if module.startswith("deepcritical.sources")}
    assert "record_checker" in {
        node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
    }


def test_no_front_end_connects_to_the_store_itself() -> None:
    # The CLI, the API and MCP take the connection of the resources their entry point built.
    front_ends = [path for part in ("cli", "web", "mcp") for path in (SRC / part).rglob("*.py")]
    connecting = [str(path.relative_to(SRC)) for path in front_ends if "chroma.connect" in path.read_text("utf-8")]
    assert connecting == []
