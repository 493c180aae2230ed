"""The HTTP API over an ASGI transport, with the real app and run manager and a scripted run source."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from deepcritical.errors import ConfigError
from deepcritical.run.checkpoint import Checkpoint, write_checkpoint
from deepcritical.run.store import RunInfo
from deepcritical.text import MAX_QUESTION_CHARS
from helpers.web_fakes import (
    APP_SCRIPT,
    KINDS,
    TOKEN,
    ScriptedRuns,
    app_for,
    client_of,
    events_of,
    serving,
)

QUESTION = "Can metformin be repurposed for Alzheimer's disease?"


def client_app(client: httpx2.AsyncClient) -> Any:
    transport = client._transport
    assert isinstance(transport, httpx2.ASGITransport)
    return transport.app


async def start(client: httpx2.AsyncClient, question: str = QUESTION, **options: Any) -> dict[str, Any]:
    response = await client.post("/api/runs", json={"question": question, **options})
    assert response.status_code == 202, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_a_run_goes_from_request_to_report_and_its_events_stream_in_order(tmp_path: Path) -> None:
    script = ScriptedRuns()
    async with serving(app_for(tmp_path, script)) as client:
        created = await start(client, sources=["pubmed", "web"], max_iterations=2)
        run_id = created["run_id"]
        events = await events_of(client, run_id)
        assert [kind for _, kind, _ in events] == KINDS
        assert [event_id for event_id, _, _ in events] == list(range(1, len(KINDS) + 1))
        assert all(data["kind"] == kind for _, kind, data in events)
        ended = events[-1][2]
        assert ended["status"] == "finished"
        assert ended["summary"]["references"] == 1

        view = (await client.get(f"/api/runs/{run_id}")).json()
        assert view["status"] == "finished"
        assert view["sources"] == ["pubmed", "web"]
        assert view["max_iterations"] == 2
        assert {"report.md", "run.json"} <= set(view["files"])
        report = await client.get(view["links"]["report.md"])
        assert report.status_code == 200
        assert report.headers["content-type"].startswith("text/markdown")
        assert report.text.startswith(f"# {QUESTION}")
        record = (await client.get(view["links"]["run.json"])).json()
        assert record["run_id"] == run_id
        html = (await client.get(view["links"]["report.html"])).text
        assert 'href="#ref-1"' in html
        assert 'id="ref-1"' in html
        assert "report.json" in view["files"]  # the report's document, which the page's HTML is written from

        listed = (await client.get("/api/runs")).json()
        assert [run["run_id"] for run in listed] == [run_id]


async def test_the_page_shows_the_report_document_and_an_older_folder_how_to_upgrade(tmp_path: Path) -> None:
    """The HTML is written from report.json (not report.md parsed back); a folder written before report
    documents, or with one this version cannot read, says how to upgrade it and shows nothing of report.md."""
    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        run_id = (await start(client))["run_id"]
        await events_of(client, run_id)
        folder = tmp_path / "runs" / run_id
        (folder / "report.md").write_text("# Edited <b>by hand</b>\n", encoding="utf-8")
        html = (await client.get(f"/api/runs/{run_id}/report.html")).text
        assert html.startswith("<h1>Can metformin be repurposed for Alzheimer&#39;s disease?</h1>")
        assert '<li id="ref-1">' in html
        (folder / "report.json").write_text('{"blocks": [{"kind": "video"}]}', encoding="utf-8")
        unreadable = (await client.get(f"/api/runs/{run_id}/report.html")).text
        assert "deepcritical runs upgrade" in unreadable
        assert "by hand" not in unreadable
        (folder / "report.json").unlink()
        assert (await client.get(f"/api/runs/{run_id}/report.html")).text == unreadable
        (folder / "report.md").unlink()
        assert (await client.get(f"/api/runs/{run_id}/report.html")).status_code == 404


async def test_last_event_id_resumes_with_nothing_lost_and_an_ended_run_replays(tmp_path: Path) -> None:
    script = ScriptedRuns()
    async with serving(app_for(tmp_path, script)) as client:
        run_id = (await start(client))["run_id"]
        everything = await events_of(client, run_id)
        resumed = await events_of(client, run_id, **{"Last-Event-ID": "2"})
        assert resumed == everything[2:]
        assert await events_of(client, run_id) == everything  # the replay of an ended run
        assert await events_of(client, run_id, **{"Last-Event-ID": str(len(everything))}) == []


async def test_a_run_goes_on_when_its_event_stream_is_dropped(tmp_path: Path) -> None:
    script = ScriptedRuns(hold=True)
    async with serving(app_for(tmp_path, script)) as client:
        manager = client_app(client).state.manager
        streaming = asyncio.Event()
        follow = manager.follow

        async def watched_follow(run_id: str, after: int = 0) -> AsyncIterator[Any]:
            async for event in follow(run_id, after):
                streaming.set()
                yield event

        manager.follow = watched_follow
        run_id = (await start(client))["run_id"]
        await script.reached_hold(run_id).wait()
        watcher = asyncio.create_task(client.get(f"/api/runs/{run_id}/events"))
        await streaming.wait()  # the browser is reading the stream...
        watcher.cancel()  # ...and goes away
        with pytest.raises(asyncio.CancelledError):
            await watcher
        script.release.set()
        events = await events_of(client, run_id)
        assert events[-1][2]["status"] == "finished"
        assert (await client.get(f"/api/runs/{run_id}")).json()["status"] == "finished"


async def test_delete_cancels_a_running_run_and_its_stream_ends_with_the_reason(tmp_path: Path) -> None:
    script = ScriptedRuns(hold=True)
    async with serving(app_for(tmp_path, script)) as client:
        run_id = (await start(client))["run_id"]
        await script.reached_hold(run_id).wait()
        assert (await client.get(f"/api/runs/{run_id}")).json()["status"] == "running"
        cancelled = await client.delete(f"/api/runs/{run_id}")
        assert cancelled.status_code == 200
        assert cancelled.json()["status"] == "cancelled"
        assert script.closed == [run_id]  # the orchestrator's generator was closed, not left running
        events = await events_of(client, run_id)
        ended = {"kind": "run_ended", "status": "cancelled", "error": "cancelled by the user", "summary": None}
        # Stored with its one line, which the page shows as it is.
        assert events[-1][2] == {**ended, "line": "run ended: cancelled (cancelled by the user)"}
        again = await client.delete(f"/api/runs/{run_id}")
        assert again.status_code == 409
        assert "ended already" in again.json()["error"]


async def test_runs_beyond_the_limit_wait_in_a_queue_that_shows_their_position(tmp_path: Path) -> None:
    script = ScriptedRuns(hold=True)
    async with serving(app_for(tmp_path, script, max_concurrent_runs=1)) as client:
        first = (await start(client, "first question"))["run_id"]
        await script.reached_hold(first).wait()
        second = await start(client, "second question")
        third = await start(client, "third question")
        assert (second["status"], second["position"]) == ("queued", 1)
        assert (third["status"], third["position"]) == ("queued", 2)
        assert script.log == [("start", first)]

        cancelled_queued = await start(client, "fourth question")
        assert (await client.delete(f"/api/runs/{cancelled_queued['run_id']}")).json()["status"] == "cancelled"

        script.release.set()
        third_events = await events_of(client, third["run_id"])
        second_events = await events_of(client, second["run_id"])
        assert [data["position"] for _, kind, data in third_events if kind == "queued"] == [2, 1]
        assert [data["position"] for _, kind, data in second_events if kind == "queued"] == [1]
        assert third_events[-1][2]["status"] == "finished"
        ids = [first, second["run_id"], third["run_id"]]
        assert script.log == [(step, run_id) for run_id in ids for step in ("start", "finish")]
        assert ("start", cancelled_queued["run_id"]) not in script.log


async def test_a_restart_marks_unfinished_runs_interrupted_never_lost(tmp_path: Path) -> None:
    script = ScriptedRuns(hold=True)
    async with serving(app_for(tmp_path, script, max_concurrent_runs=1)) as client:
        running = (await start(client, "running when the server stops"))["run_id"]
        await script.reached_hold(running).wait()
        queued = (await start(client, "queued when the server stops"))["run_id"]
    # A server killed outright leaves "running" in status.json: write what it would leave behind.
    killed = "research-20240101-000000-abcdef"
    folder = tmp_path / "runs" / killed
    folder.mkdir(parents=True)
    info = RunInfo(
        run_id=killed,
        question="running when the server was killed",
        status="running",
        demo=True,
        max_iterations=1,
        sources=["pubmed"],
        created_at="2024-01-01T00:00:00+00:00",
    )
    (folder / "status.json").write_text(info.model_dump_json())
    (folder / "events.jsonl").write_text(json.dumps({"id": 1, "data": {"kind": "iteration_started"}}) + "\n")

    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        listed = {run["run_id"]: run for run in (await client.get("/api/runs")).json()}
        assert {running, queued, killed} == set(listed)
        assert list(listed)[-1] == killed  # newest first
        assert all(run["status"] == "interrupted" for run in listed.values())
        assert listed[killed]["error"] == "the server stopped before the run ended"
        killed_events = await events_of(client, killed)
        assert [kind for _, kind, _ in killed_events] == ["iteration_started", "run_ended"]
        assert [event_id for event_id, _, _ in killed_events] == [1, 2]
        running_events = await events_of(client, running)
        assert [kind for _, kind, _ in running_events] == ["run_started", "iteration_started", "run_ended"]


async def test_an_interrupted_run_is_resumed_from_its_checkpoint_or_its_request(tmp_path: Path) -> None:
    script = ScriptedRuns(hold=True)
    async with serving(app_for(tmp_path, script, max_concurrent_runs=1)) as client:
        held = (await start(client, "interrupted after a checkpoint"))["run_id"]
        await script.reached_hold(held).wait()
        early = (await start(client, "interrupted before any checkpoint"))["run_id"]
    checkpoint = Checkpoint(
        run_id=held,
        question="interrupted after a checkpoint",
        started_at="2026-01-01T00:00:00+00:00",
        written_at="2026-01-01T00:00:01+00:00",
        stage="plan",
        iteration=1,
        elapsed_seconds=1.0,
        loop_seconds_left=100.0,
        report_seconds_left=120.0,
        state={"question": "interrupted after a checkpoint"},
        usage={},
        evidence=[],
    )
    write_checkpoint(tmp_path / "runs" / held, checkpoint)
    script = ScriptedRuns()
    async with serving(app_for(tmp_path, script)) as client:
        before = await events_of(client, held)
        resumed = await client.post(f"/api/runs/{held}/resume")
        assert resumed.status_code == 202
        events = await events_of(client, held, **{"Last-Event-ID": str(before[-1][0])})
        assert events[-1][2]["status"] == "finished"
        assert [event_id for event_id, _, _ in events] == list(
            range(before[-1][0] + 1, before[-1][0] + 1 + len(events))
        )
        assert script.log[0] == ("resume", held)
        again = await client.post(f"/api/runs/{held}/resume")
        assert again.status_code == 409  # finished now
        # Stopped before its first checkpoint: it starts over, in its folder, from the request it recorded.
        assert (await client.post(f"/api/runs/{early}/resume")).status_code == 202
        assert (await events_of(client, early))[-1][2]["status"] == "finished"
        assert script.log[-2:] == [("start", early), ("finish", early)]


async def test_a_failed_run_keeps_its_report_and_says_why(tmp_path: Path) -> None:
    script = ScriptedRuns(fail_with="no evidence was collected: no source answered any search")
    async with serving(app_for(tmp_path, script)) as client:
        run_id = (await start(client))["run_id"]
        events = await events_of(client, run_id)
        view = (await client.get(f"/api/runs/{run_id}")).json()
        assert events[-1][2]["status"] == view["status"] == "failed"
        assert view["error"] == "no evidence was collected: no source answered any search"
        assert "report.md" in view["files"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "question"),
        ({"question": ""}, "question"),
        ({"question": "   "}, "question"),
        ({"question": "x" * (MAX_QUESTION_CHARS + 1)}, "question"),
        ({"question": "?????"}, "question"),
        ({"question": QUESTION, "max_iterations": 0}, "max_iterations"),
        ({"question": QUESTION, "max_iterations": 3}, "max_iterations"),  # above this server's limit of 2
        ({"question": QUESTION, "sources": ["pubmed", "scholar"]}, "sources"),
        ({"question": QUESTION, "sources": []}, "sources"),
        ({"question": QUESTION, "sources": ["you"]}, "sources"),  # known, but not enabled here
        ({"question": QUESTION, "colour": "blue"}, "colour"),
        ({"question": QUESTION, "reader": "bert"}, "reader"),
    ],
)
async def test_bad_requests_get_a_4xx_naming_the_field(tmp_path: Path, body: dict[str, Any], field: str) -> None:
    app = app_for(tmp_path, ScriptedRuns(), max_iterations=2, sources="pubmed,web")
    async with serving(app) as client:
        response = await client.post("/api/runs", json=body)
        assert response.status_code == 422
        error = response.json()
        assert error["field"] == field
        assert error["error"].startswith(f"{field}: ")
        assert "\n" not in error["error"]
        assert (await client.get("/api/runs")).json() == []


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"question": ""}, {"question": "   "}),
        ({"question": QUESTION, "max_iterations": 0}, {"question": QUESTION, "max_iterations": 25}),
        ({"question": QUESTION, "max_iterations": 3}, {"question": QUESTION, "max_iterations": 25}),
        ({"question": "x" * (MAX_QUESTION_CHARS + 1)}, {"question": " " + "x" * (MAX_QUESTION_CHARS + 1)}),
    ],
)
async def test_one_mistake_gets_one_message(tmp_path: Path, first: dict[str, Any], second: dict[str, Any]) -> None:
    app = app_for(tmp_path, ScriptedRuns(), max_iterations=2)
    async with serving(app) as client:
        one = await client.post("/api/runs", json=first)
        other = await client.post("/api/runs", json=second)
    assert one.status_code == other.status_code == 422
    field = "max_iterations" if "max_iterations" in first else "question"
    assert one.json()["field"] == other.json()["field"] == field
    assert one.json()["error"] == other.json()["error"]


async def test_malformed_input_and_unknown_runs_get_json_errors(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        broken = await client.post("/api/runs", content=b"{not json", headers={"Content-Type": "application/json"})
        assert broken.status_code == 422
        assert broken.json()["field"] == "body"
        missing = await client.get("/api/runs/research-20240101-000000-abcdef")
        assert missing.status_code == 404
        assert "no run has the id" in missing.json()["error"]
        assert (await client.get("/api/runs/..%2F..%2Fetc")).status_code == 404
        run_id = (await start(client))["run_id"]
        await events_of(client, run_id)
        bad_resume = await client.get(f"/api/runs/{run_id}/events", headers={"Last-Event-ID": "soon"})
        assert bad_resume.status_code == 422
        assert bad_resume.json()["field"] == "Last-Event-ID"
        huge_resume = await client.get(f"/api/runs/{run_id}/events", headers={"Last-Event-ID": "9" * 40})
        assert huge_resume.status_code == 422
        assert huge_resume.json()["field"] == "Last-Event-ID"
        assert "9" * 20 not in huge_resume.text
        for name in ("status.json", "events.jsonl", "..%2Fstatus.json", "report.ris"):
            assert (await client.get(f"/api/runs/{run_id}/{name}")).status_code == 404


async def test_run_creation_is_rate_limited_per_client(tmp_path: Path) -> None:
    app = app_for(tmp_path, ScriptedRuns(), runs_per_minute=2)
    async with serving(app) as client, client_of(app, "127.0.0.2") as other:
        await client.post("/api/runs", json={"question": ""})  # refused requests do not count
        await start(client)
        await start(client)
        limited = await client.post("/api/runs", json={"question": QUESTION})
        assert limited.status_code == 429
        assert "at most 2 a minute" in limited.json()["error"]
        assert int(limited.headers["Retry-After"]) >= 1
        await start(other)  # another client has its own allowance


def test_listening_beyond_loopback_needs_a_token(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="DEEPCRITICAL_API_TOKEN"):
        app_for(tmp_path, ScriptedRuns(), bind_host="0.0.0.0")


async def test_with_a_token_the_api_and_mcp_need_it(tmp_path: Path) -> None:
    app = app_for(tmp_path, ScriptedRuns(), bind_host="0.0.0.0", api_token=TOKEN)
    async with serving(app) as client:
        assert (await client.get("/api/info")).json()["token_required"] is True
        assert (await client.get("/")).status_code == 200  # the page holds no run data
        for headers in ({}, {"Authorization": "Bearer wrong-token-wrong-token"}, {"Authorization": TOKEN}):
            denied = await client.get("/api/runs", headers=headers)
            assert denied.status_code == 401
            assert denied.headers["WWW-Authenticate"] == "Bearer"
            assert "DEEPCRITICAL_API_TOKEN" in denied.json()["error"]
        assert (await client.post("/api/runs", json={"question": QUESTION})).status_code == 401
        assert (await client.post("/mcp", json={})).status_code == 401
        granted = {"Authorization": f"Bearer {TOKEN}"}
        assert (await client.get("/api/runs", headers=granted)).status_code == 200
        created = await client.post("/api/runs", json={"question": QUESTION}, headers=granted)
        assert created.status_code == 202


async def test_cross_site_requests_and_rebound_host_names_are_refused(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        cross = await client.post("/api/runs", json={"question": QUESTION}, headers={"Origin": "http://evil.example"})
        assert cross.status_code == 403
        mcp = await client.post("/mcp", json={}, headers={"Origin": "http://evil.example"})
        assert mcp.status_code == 403
        rebound = await client.get("/api/runs", headers={"Host": "evil.example:8000"})
        assert rebound.status_code == 400
        same = await client.post("/api/runs", json={"question": QUESTION}, headers={"Origin": BASE_ORIGIN})
        assert same.status_code == 202


BASE_ORIGIN = "http://127.0.0.1:8000"


async def test_the_page_ships_its_own_files_under_a_strict_csp(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        page = await client.get("/")
        assert page.status_code == 200
        csp = page.headers["Content-Security-Policy"]
        assert "script-src 'self';" in csp
        assert "'unsafe-inline'" not in csp
        assert "default-src 'none'" in csp
        assert page.headers["X-Content-Type-Options"] == "nosniff"
        html = page.text
        assert "<script>" not in html  # every script has a src: no inline script at all
        assert re.search(r"\son[a-z]+\s*=", html) is None  # no inline event handler either
        assert "://" not in html  # nothing from elsewhere, no CDN
        for asset in ("/static/app.js", "/static/app.css", "/static/favicon.svg"):
            assert (await client.get(asset)).status_code == 200
        docs = await client.get("/docs")
        assert docs.status_code == 200
        assert "/docs-assets/swagger-ui-bundle.js" in docs.text
        assert "'sha256-" in docs.headers["Content-Security-Policy"]
        assert (await client.get("/docs-assets/swagger-ui-bundle.js")).status_code == 200
        schema = (await client.get("/openapi.json")).json()
        assert {"/api/runs", "/api/runs/{run_id}", "/api/runs/{run_id}/events"} <= set(schema["paths"])


async def test_info_gives_each_source_the_name_a_person_knows(tmp_path: Path) -> None:
    """The page's checkboxes showed internal names ("you", "searxng")."""
    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        info = (await client.get("/api/info")).json()
    assert info["source_labels"]["you"] == "You.com"
    assert info["source_labels"]["clinicaltrials"] == "ClinicalTrials.gov"
    assert info["source_labels"]["europepmc"] == "Europe PMC"
    assert set(info["source_labels"]) == set(info["sources"])
    assert "info.source_labels" in APP_SCRIPT


async def test_a_run_with_a_damaged_checkpoint_or_request_is_refused_at_resume_in_one_line(tmp_path: Path) -> None:
    script = ScriptedRuns(hold=True)
    async with serving(app_for(tmp_path, script, max_concurrent_runs=1)) as client:
        tampered = (await start(client, "a checkpoint edited by hand"))["run_id"]
        await script.reached_hold(tampered).wait()
        garbled = (await start(client, "a request that is not JSON"))["run_id"]
    folder = tmp_path / "runs" / tampered
    checkpoint = {
        "run_id": tampered, "question": "q", "started_at": "2026-01-01T00:00:00+00:00",
        "written_at": "2026-01-01T00:00:01+00:00", "stage": "plan", "iteration": 1, "elapsed_seconds": 1.0,
        "loop_seconds_left": 100.0, "report_seconds_left": 120.0, "state": {"iteration": "many"}, "usage": {},
        "evidence": [],
    }  # fmt: skip
    (folder / "checkpoint.json").write_text(json.dumps(checkpoint))
    (tmp_path / "runs" / garbled / "request.json").write_text("{not json")
    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        for run_id, reason in [(tampered, "checkpoint.json cannot be read (state"), (garbled, "request.json")]:
            refused = await client.post(f"/api/runs/{run_id}/resume")
            assert refused.status_code == 409, refused.text
            assert reason in refused.json()["error"]
            assert str(tmp_path) not in refused.text
            assert "--resume" not in refused.text
        assert (await client.get("/api/runs")).status_code == 200
