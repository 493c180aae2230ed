"""``deepcritical research --demo-sources`` with a live model behind the OpenAI-compatible wire format: the
exit code and the one-line messages for a model that works, one that refuses ``json_schema``, servers that
answer HTML, broken JSON, JSON of the wrong shape or prose, nothing listening, and a model and sources that
both fail. In process (the command's own code, the run's client on a local transport), plus one run as a
user runs it: a subprocess against a real local HTTP server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from typer.testing import CliRunner

from deepcritical.cli.app import EXIT_DEGRADED, EXIT_FAILED, EXIT_OK, EXIT_USAGE, app
from deepcritical.demo.transport import StandInRouter
from deepcritical.run import setup
from deepcritical.sources.factory import make_http_client
from helpers.llm_server import LlmServer
from helpers.llm_wires import OPENAI
from helpers.research_fakes import QUESTION
from helpers.servers import free_port, stop

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("plain_logs")]

SERVER_SCRIPT = Path(__file__).parent / "helpers" / "openai_server.py"
Handler = Callable[[httpx2.Request], httpx2.Response]


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    """A clean environment (no keys, no .env) and the settings of a local model behind a compatible server."""
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_BASE_URL")) or name.startswith(("DEEPCRITICAL_", "DEMO_", "SEARXNG_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return {
        "DEEPCRITICAL_HOME": str(tmp_path / "home"),
        "DEEPCRITICAL_MODEL": "openai:local-model",
        "DEEPCRITICAL_OPENAI_BASE_URL": "http://llm.local/v1",
        "DEEPCRITICAL_SOURCES": "pubmed,searxng,you",
        "DEEPCRITICAL_MAX_ITERATIONS": "2",
        "COLUMNS": "500",  # progress lines are not wrapped, so each is one line of output
        "NO_COLOR": "1",
    }


def research(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], llm: Handler, stand_ins: Handler | None = None
) -> tuple[int, list[str], dict[str, Any] | None]:
    """Run the command in process; the run's client reaches ``llm`` for the model (and ``stand_ins``, if
    given, for the sources). Returns the exit code, the lines on stderr and run.json (if written)."""

    def client(settings: Any, network: Any = None) -> httpx2.AsyncClient:
        if stand_ins is None:
            return setup_http_client(settings, network=httpx2.MockTransport(llm))
        return make_http_client(StandInRouter(httpx2.MockTransport(llm), httpx2.MockTransport(stand_ins)))

    setup_http_client = setup.http_client
    monkeypatch.setattr(setup, "http_client", client)
    out = Path(env["DEEPCRITICAL_HOME"]).parent / "out"
    result = CliRunner().invoke(app, ["research", QUESTION, "--demo-sources", "--out", str(out)], env=env)
    record = json.loads((out / "run.json").read_text(encoding="utf-8")) if (out / "run.json").exists() else None
    return result.exit_code, [line for line in result.stderr.splitlines() if line.strip()], record


def completion(content: str) -> httpx2.Response:
    return httpx2.Response(
        200,
        json={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1_760_000_000,
            "model": "local-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        },
    )


def answering(chat: Callable[[httpx2.Request], httpx2.Response]) -> Handler:
    """A server that lists its models (so the start-up check passes) and answers chat requests with ``chat``."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        if request.method == "GET" and request.url.path == "/v1/models":
            return httpx2.Response(200, json={"object": "list", "data": [{"id": "local-model", "object": "model"}]})
        return chat(request)

    return handle


BROKEN_SERVERS: dict[str, Handler] = {
    "html": answering(lambda _: httpx2.Response(200, text="<html><body>It works!</body></html>")),
    "broken-json": answering(
        lambda _: httpx2.Response(200, text='{"id": "x", "choices": [', headers={"Content-Type": "application/json"})
    ),
    "wrong-shape": answering(lambda _: httpx2.Response(200, json={"hello": "world"})),
    "prose": answering(lambda _: completion("Metformin might help. More research is needed.")),
    "html-502": answering(lambda _: httpx2.Response(502, text="<html>\n<body>Bad gateway</body>\n</html>")),
}


@pytest.mark.parametrize("name", list(BROKEN_SERVERS))
def test_a_server_answering_garbage_ends_in_a_report_built_in_code_and_exit_3(
    name: str, monkeypatch: pytest.MonkeyPatch, environment: dict[str, str]
) -> None:
    code, lines, record = research(monkeypatch, environment, BROKEN_SERVERS[name])
    assert code == EXIT_DEGRADED, lines
    assert record is not None
    assert record["degraded"]
    assert record["evidence"]  # the stand-in sources answered; code did the model's work
    assert record["report_fallback_reason"] == "report_failed"
    # Every failure is one short line, in the progress output and in run.json.
    assert record["errors"]
    for message in record["errors"]:
        assert "\n" not in message
        assert len(message) < 300, message
        assert any(line.strip() == f"warning {message}" for line in lines), (message, lines)
    assert "validation error" not in json.dumps(record)
    assert lines[-1].startswith("warning: part of the model's work was done in code")
    # The requests the server failed are counted as sent.
    assert record["llm_usage"]["requests"] >= 3


def test_a_working_local_model_exits_0(monkeypatch: pytest.MonkeyPatch, environment: dict[str, str]) -> None:
    server = LlmServer(OPENAI)
    code, lines, record = research(monkeypatch, environment, server)
    assert code == EXIT_OK, lines
    assert record is not None
    assert not record["degraded"]
    assert record["output_mode"] == "native"
    assert lines[0].startswith("DEMO SOURCES: the sources are local stand-ins")
    assert lines[1] == "model openai:local-model"
    assert " · output native · " in lines[2]


def test_a_server_that_refuses_json_schema_says_so_once_and_exits_0(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str]
) -> None:
    code, lines, record = research(monkeypatch, environment, LlmServer(OPENAI, refuse_json_schema=True))
    assert code == EXIT_OK, lines
    assert record is not None
    assert record["output_mode"] == "prompted (JSON mode)"
    refusals = [line for line in lines if "refused native output" in line]
    assert len(refusals) == 1
    assert "HTTP 500: 1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format'" in refusals[0]


def test_nothing_listening_is_exit_2_naming_the_url_and_the_variable(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str]
) -> None:
    searched: list[str] = []

    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("[Errno 111] Connection refused", request=request)

    def stand_ins(request: httpx2.Request) -> httpx2.Response:
        searched.append(str(request.url))
        return httpx2.Response(500)

    code, lines, record = research(monkeypatch, environment, refuse, stand_ins)
    assert code == EXIT_USAGE
    assert lines[-1] == (
        "error: the model server at http://llm.local/v1/models does not answer ([Errno 111] Connection refused): "
        "start it, or set DEEPCRITICAL_OPENAI_BASE_URL (or OPENAI_BASE_URL)"
    )
    assert searched == []  # no search ran
    assert record is None


def test_a_failing_model_and_failing_sources_are_both_named_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str]
) -> None:
    def down(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(503, text="Service Unavailable")

    llm = answering(lambda _: httpx2.Response(401, json={"error": {"message": "invalid key"}}))
    code, lines, record = research(monkeypatch, environment, llm, down)
    assert code == EXIT_FAILED
    assert record is not None
    failure = lines[-1]
    # The failed sources first, by name (the model's message can be long enough to push them out of the line).
    assert failure.startswith("error: the run failed (no evidence was collected: no source answered any search: ")
    first_source = failure.split("no source answered any search: ")[1].split(":")[0]
    assert first_source in {"pubmed", "europepmc", "openalex", "clinicaltrials", "searxng", "you", "web", "library"}
    assert "the language model failed" in record["error"]
    assert "HTTP 401" in record["error"]
    # One line under 300 characters (it was 444: every source's error), the error whole in run.json.
    assert len(failure) <= 300
    assert failure.endswith(
        f"the whole error and what it collected: {Path(environment['DEEPCRITICAL_HOME']).parent / 'out' / 'run.json'}"
    )
    assert "you: HTTP 503 after 3 attempt(s): Service Unavailable" in record["error"]


@pytest.fixture
def openai_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A real HTTP server on a free loopback port speaking the OpenAI wire format (tests/helpers/openai_server.py);
    its log of requests is a JSON line per request."""
    port, log = free_port(), tmp_path / "requests.jsonl"
    process = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), "--port", str(port), "--log", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
        yield f"http://127.0.0.1:{port}/v1", log
    finally:
        stop(process)


def test_the_command_runs_a_local_model_over_http_with_stand_in_sources(
    openai_server: tuple[str, Path], environment: dict[str, str], tmp_path: Path
) -> None:
    base_url, log = openai_server
    env = {key: value for key, value in os.environ.items() if key in ("PATH", "HOME", "LANG", "HF_HOME")}
    env |= environment | {"DEEPCRITICAL_OPENAI_BASE_URL": base_url, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "deepcritical", "research", QUESTION, "--demo-sources", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
        check=False,
    )
    assert result.returncode == EXIT_OK, result.stderr
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert record["demo"]
    assert not record["degraded"]
    assert record["output_mode"] == "prompted (JSON mode)"  # the server refuses json_schema, as llama.cpp's does
    requests = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert requests[0]["path"] == "/v1/models"  # checked before anything else
    chats = [request for request in requests if request["path"] == "/v1/chat/completions"]
    assert chats[0]["response_format"]["type"] == "json_schema"
    assert all(request["response_format"]["type"] == "json_object" for request in chats[1:])
    assert all(request["max_tokens"] for request in chats)
    assert record["llm_usage"]["requests"] == len(chats)
    assert "DEMO MODE: SYNTHETIC SOURCES" in (out / "report.md").read_text(encoding="utf-8")
