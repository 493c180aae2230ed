"""Limits that cannot be stepped around: a capped request body (declared or streamed), capped echoes,
strict types, the one JSON error shape for a bad Host, and MCP's research under the same per-client limit
as the API, refusing arguments it does not take."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import TextContent

from deepcritical.config import load_settings
from deepcritical.errors import DeepCriticalError
from deepcritical.mcp import server as mcp_server
from deepcritical.mcp.server import build_mcp_server
from deepcritical.service.admission import RunRateLimit
from deepcritical.service.manager import RunManager
from deepcritical.web.app import create_app
from deepcritical.web.security import MAX_BODY_BYTES
from helpers.web_fakes import ScriptedRuns, offline_client, serving, sse_events

QUESTION = "Can metformin be repurposed for Alzheimer's disease?"


def app_for(home: Path, **overrides: Any) -> Any:
    settings = load_settings(demo_mode=True, home=home, **overrides)
    return create_app(settings, client_factory=offline_client, run_source=ScriptedRuns())


@pytest.mark.parametrize("value", [True, "2", 2.0, [2]])
async def test_max_iterations_must_be_a_json_integer(tmp_path: Path, value: object) -> None:
    async with serving(app_for(tmp_path)) as client:
        response = await client.post("/api/runs", json={"question": QUESTION, "max_iterations": value})
        assert response.status_code == 422
        assert response.json()["field"] == "max_iterations"
        assert (await client.get("/api/runs")).json() == []


async def test_a_question_must_be_text(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path)) as client:
        response = await client.post("/api/runs", json={"question": 12345})
        assert response.status_code == 422
        assert response.json()["field"] == "question"


async def test_a_body_over_the_cap_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    huge = json.dumps({"question": QUESTION, "padding": "x" * (MAX_BODY_BYTES * 3)}).encode()

    async def in_chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as it arrives
        for start in range(0, len(huge), 8192):
            yield huge[start : start + 8192]

    async with serving(app_for(tmp_path)) as client:
        declared = await client.post("/api/runs", content=huge, headers={"Content-Type": "application/json"})
        streamed = await client.post("/api/runs", content=in_chunks(), headers={"Content-Type": "application/json"})
        to_mcp = await client.post("/mcp", content=in_chunks(), headers={"Content-Type": "application/json"})
        for response in (declared, streamed, to_mcp):
            assert response.status_code == 413
            assert response.json() == {"error": f"the request body is over {MAX_BODY_BYTES:,} bytes", "field": None}
        assert (await client.get("/api/runs")).json() == []
        ordinary = await client.post("/api/runs", json={"question": QUESTION})
        assert ordinary.status_code == 202


async def test_a_huge_run_id_is_never_echoed_back(tmp_path: Path) -> None:
    long_id = "r" * 60_000  # near the longest URL an HTTP client sends
    async with serving(app_for(tmp_path)) as client:
        for path in (f"/api/runs/{long_id}", f"/api/runs/{long_id}/events", f"/api/runs/{long_id}/report.md"):
            response = await client.get(path)
            assert response.status_code == 422
            assert len(response.content) < 1000
            assert response.json()["field"] == "run_id"
        deleted = await client.delete(f"/api/runs/{long_id}")
        assert deleted.status_code == 422
        assert len(deleted.content) < 1000


async def test_mcp_never_echoes_a_huge_run_id(tmp_path: Path) -> None:
    async with mcp_client(tmp_path) as client:
        result = await client.call_tool("get_run", {"run_id": "r" * 1_000_000})
    assert result.is_error
    assert "run_id" in text_of(result)
    assert len(text_of(result)) < 1000


async def test_a_bad_host_gets_the_json_error_shape(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path)) as client:
        for host in ("evil.example:8000", "evil.example", "127.0.0.1.evil.example"):
            response = await client.get("/api/runs", headers={"Host": host})
            assert response.status_code == 400
            assert response.headers["content-type"] == "application/json"
            assert "loopback host name" in response.json()["error"]
        for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000", "localhost"):
            assert (await client.get("/api/info", headers={"Host": host})).status_code == 200


async def test_a_loopback_host_name_in_any_case_is_accepted(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path)) as client:
        for host in ("LOCALHOST", "LocalHost:8000", "localhost.:8000"):
            assert (await client.get("/api/info", headers={"Host": host})).status_code == 200, host


async def test_the_resume_route_caps_the_run_id_and_never_echoes_it(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path)) as client:
        response = await client.post(f"/api/runs/{'r' * 300}/resume")
    assert response.status_code == 422
    assert response.json()["field"] == "run_id"
    assert "r" * 65 not in response.text


@asynccontextmanager
async def mcp_client(tmp_path: Path, rate_limit: RunRateLimit | None = None, **overrides: Any) -> AsyncIterator[Client]:
    settings = load_settings(demo_mode=True, home=tmp_path, max_iterations=2, **overrides)
    manager = RunManager(settings, client_factory=offline_client, run_source=ScriptedRuns())
    async with manager, Client(build_mcp_server(manager, settings, rate_limit)) as client:
        yield client


def text_of(result: object) -> str:
    return "".join(block.text for block in getattr(result, "content", []) if isinstance(block, TextContent))


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("research", {"question": QUESTION, "max_iteration": 1}, "'max_iteration'"),
        ("get_run", {"run_id": "x", "verbose": True}, "'verbose'"),
        ("search_literature", {"query": "metformin", "limit": 3}, "'limit'"),
    ],
)
async def test_mcp_refuses_arguments_a_tool_does_not_take(
    tmp_path: Path, tool: str, arguments: dict[str, Any], named: str
) -> None:
    async with mcp_client(tmp_path) as client:
        listed = {item.name: item for item in (await client.list_tools()).tools}
        result = await client.call_tool(tool, arguments)
    assert listed[tool].input_schema["additionalProperties"] is False
    assert result.is_error
    assert f"{tool}: unknown argument {named}; it takes " in text_of(result)


@pytest.mark.parametrize("value", [True, "true", 1.5])
async def test_mcp_max_iterations_must_be_an_integer(tmp_path: Path, value: object) -> None:
    async with mcp_client(tmp_path) as client:
        result = await client.call_tool("research", {"question": QUESTION, "max_iterations": value})
    assert result.is_error
    assert "max_iterations" in text_of(result)


async def test_mcp_research_is_rate_limited_like_the_api(tmp_path: Path) -> None:
    async with mcp_client(tmp_path, runs_per_minute=2) as client:
        results = [await client.call_tool("research", {"question": QUESTION}) for _ in range(3)]
    assert [result.is_error for result in results] == [False, False, True]
    assert "too many runs started from stdio: at most 2 a minute" in text_of(results[2])


async def test_mcp_and_the_api_share_one_limit(tmp_path: Path) -> None:
    shared = RunRateLimit(1)
    assert await shared.retry_after("stdio") is None  # the client's one run this minute, started elsewhere
    async with mcp_client(tmp_path, rate_limit=shared) as client:
        result = await client.call_tool("research", {"question": QUESTION})
    assert result.is_error
    assert "too many runs" in text_of(result)


async def test_mcp_search_literature_counts_against_the_limit_research_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 searches in 36 s were all answered: a search calls every source as a run does."""
    searched: list[str] = []

    async def no_source_answers(query: str, *args: Any, **kwargs: Any) -> Any:
        searched.append(query)
        raise DeepCriticalError("no source answered")

    monkeypatch.setattr(mcp_server, "run_search", no_source_answers)
    shared = RunRateLimit(2)
    async with mcp_client(tmp_path, rate_limit=shared) as client:
        first = await client.call_tool("search_literature", {"query": "metformin"})
        run = await client.call_tool("research", {"question": QUESTION})
        refused_search = await client.call_tool("search_literature", {"query": "metformin dementia"})
        refused_run = await client.call_tool("research", {"question": QUESTION})
    assert first.is_error  # searched (and its source failed): it counted all the same
    assert not run.is_error
    assert searched == ["metformin"]
    assert "too many searches and runs from stdio: at most 2 a minute" in text_of(refused_search)
    assert "too many runs started from stdio" in text_of(refused_run)


def test_the_mcp_descriptions_name_every_source(tmp_path: Path) -> None:
    settings = load_settings(demo_mode=True, home=tmp_path)
    server = build_mcp_server(RunManager(settings), settings)
    instructions = server.instructions or ""
    for name in ("PubMed", "ClinicalTrials.gov", "Europe PMC", "SearXNG", "You.com"):
        assert name in instructions


async def test_an_unwritable_home_gets_the_json_error_shape_without_the_servers_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``POST /api/runs`` answered a plain-text 500 when the runs folder could not be written."""
    app = app_for(tmp_path)
    async with serving(app) as client:

        def refuse(self: Path, *args: object, **kwargs: object) -> None:
            raise PermissionError(13, "Permission denied", str(self))

        monkeypatch.setattr(Path, "mkdir", refuse)
        response = await client.post("/api/runs", json={"question": QUESTION})
        monkeypatch.undo()
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["error"].startswith("the server cannot write its runs folder (Permission denied)")
    assert str(tmp_path) not in response.text


async def test_a_run_whose_folder_turns_unwritable_ends_failed_and_its_stream_still_ends(tmp_path: Path) -> None:
    """Its status stayed ``running``, its error showed the server's path, and its event stream ended without
    ``run_ended``. (Directories where the files go stand in for a read-only folder: root may write anyway.)"""
    script = ScriptedRuns(hold=True)
    settings = load_settings(demo_mode=True, home=tmp_path)
    app = create_app(settings, client_factory=offline_client, run_source=script)
    async with serving(app) as client:
        run_id = (await client.post("/api/runs", json={"question": QUESTION})).json()["run_id"]
        await script.reached_hold(run_id).wait()
        folder = tmp_path / "runs" / run_id
        for name in ("events.jsonl", "status.json"):
            (folder / name).unlink()
        for name in ("events.jsonl", ".status.json.partial", "report.md"):
            (folder / name).mkdir()
        script.release.set()
        response = await client.get(f"/api/runs/{run_id}/events")
        events = sse_events(response.text)
        info = (await client.get(f"/api/runs/{run_id}")).json()
    assert events[-1][1] == "run_ended"
    assert events[-1][2]["status"] == "failed"
    assert info["status"] == "failed"
    assert info["error"].startswith("cannot write the report")
    assert str(tmp_path) not in response.text + json.dumps(info)
