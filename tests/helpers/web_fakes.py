"""Stand-ins under the real run manager: a scripted run source (no store, no model), the app and the MCP server
over it, and a serving helper that drives the app's lifespan and talks to it over httpx2's ASGI transport."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
from fastapi import FastAPI
from mcp import Client
from mcp_types import TextContent

from deepcritical.config import Settings, load_settings
from deepcritical.events import IterationStarted, JudgeFinished, RunStarted, SearchFinished
from deepcritical.mcp.server import build_mcp_server
from deepcritical.models import Citation, Evidence
from deepcritical.outputs import CitationAudit, Finding, ResearchReport
from deepcritical.report.markdown_writer import to_markdown
from deepcritical.report.render import RenderContext, build_document
from deepcritical.run.events import ProgressEvent, RunFinished
from deepcritical.run.execute import RunSource
from deepcritical.run.outcome import LlmUsage, ResearchOutcome
from deepcritical.service.manager import RunManager
from deepcritical.web.app import create_app

BASE_URL = "http://127.0.0.1:8000"
APP_SCRIPT = (Path(__file__).resolve().parents[2] / "src/deepcritical/web/static/app.js").read_text()
TOKEN = "a-test-token-of-32-characters-xx"
KINDS = ["run_started", "iteration_started", "search_finished", "judge_finished", "run_ended"]


def finding_evidence(number: int = 1) -> Evidence:
    return Evidence(
        content=f"Metformin lowered dementia risk in cohort {number}.",
        citation=Citation(
            source="pubmed",
            title=f"[DEMO] Cohort {number}",
            url=f"https://pubmed.ncbi.nlm.nih.gov/9900010{number}/",
            pmid=f"9900010{number}",
        ),
    )


def outcome_for(question: str, run_id: str, *, error: str | None = None) -> ResearchOutcome:
    item = finding_evidence()
    report = ResearchReport(
        question=question,
        answer_brief="One cohort suggests a lower risk.",
        key_findings=[Finding(statement="Metformin users had less dementia.", evidence_ids=[item.id])],
        references=[item.id],
    )
    context = RenderContext(demo=True, stop_reason="sufficient", run_id=run_id, model="scripted")
    document = build_document(report, {item.id: item}, context)
    return ResearchOutcome(
        question=question,
        run_id=run_id,
        started_at=datetime.now(UTC).isoformat(),
        demo=True,
        model="scripted",
        stop_reason="sufficient",
        iterations=1,
        report=report,
        markdown=to_markdown(document),
        document=document,
        report_fallback=False,
        citation_audit=CitationAudit(),
        evidence=[item],
        assessments=[],
        plans=[],
        searches=[],
        timings={"total": 0.01},
        llm_usage=LlmUsage(requests=2),
        errors=[],
        error=error,
        settings={},
    )


class ScriptedRuns:
    """Makes run sources that emit a fixed event sequence. With ``hold``, each run stops after its
    first iteration event until ``release`` is set, so a test can see it running, queue others behind
    it, cancel it or stop the server under it. ``log`` records starts and finishes in order."""

    def __init__(self, *, hold: bool = False, fail_with: str | None = None) -> None:
        self.hold = hold
        self.fail_with = fail_with
        self.release = asyncio.Event()
        self.log: list[tuple[str, str]] = []
        self.waiting: dict[str, asyncio.Event] = {}
        self.closed: list[str] = []

    def reached_hold(self, run_id: str) -> asyncio.Event:
        return self.waiting.setdefault(run_id, asyncio.Event())

    def __call__(self, settings: Settings, client: httpx2.AsyncClient) -> RunSource:
        return _ScriptedRun(self, settings)


class Recording(ScriptedRuns):
    """Scripted runs that keep the settings each run was given."""

    def __init__(self) -> None:
        super().__init__()
        self.given: list[Settings] = []

    def __call__(self, settings: Settings, client: httpx2.AsyncClient) -> RunSource:
        self.given.append(settings)
        return super().__call__(settings, client)


class _ScriptedRun:
    def __init__(self, script: ScriptedRuns, settings: Settings) -> None:
        self.script = script
        self.settings = settings

    async def run(
        self, question: str, *, run_id: str | None = None, checkpoint: Any = None, resume: Any = None
    ) -> AsyncIterator[ProgressEvent]:
        assert run_id is not None
        script = self.script
        script.log.append(("start" if resume is None else "resume", run_id))
        try:
            yield RunStarted(
                run_id=run_id,
                question=question,
                demo=True,
                model="scripted",
                sources=list(self.settings.sources),
                max_iterations=self.settings.max_iterations,
            )
            yield IterationStarted(iteration=1, max_iterations=self.settings.max_iterations)
            if script.hold:
                script.reached_hold(run_id).set()
                await script.release.wait()
            yield SearchFinished(
                iteration=1,
                queries=["metformin dementia"],
                sources_answered=["pubmed"],
                sources_failed={},
                found=3,
                kept=1,
                deduplicated=0,
                related=0,
                total_evidence=1,
                capped=False,
            )
            yield JudgeFinished(
                iteration=1, items_judged=1, scores={"mechanism": 5}, sufficient=True, confidence=0.9, gaps=[]
            )
            script.log.append(("finish", run_id))
            yield RunFinished(outcome=outcome_for(question, run_id, error=script.fail_with))
        finally:
            script.closed.append(run_id)


def offline_client(settings: Settings) -> httpx2.AsyncClient:
    """A run's HTTP client that must never be used: the scripted runs make no request."""

    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise AssertionError(f"unexpected request to {request.url}")

    return httpx2.AsyncClient(transport=httpx2.MockTransport(refuse))


def client_of(app: FastAPI, address: str = "127.0.0.1") -> httpx2.AsyncClient:
    """A client talking to the app in process, from ``address``."""
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app, client=(address, 50000)), base_url=BASE_URL)


@asynccontextmanager
async def serving(app: FastAPI) -> AsyncIterator[httpx2.AsyncClient]:
    """The app started (its lifespan entered) and a client talking to it in process."""
    async with app.router.lifespan_context(app), client_of(app) as client:
        yield client


def sse_events(text: str) -> list[tuple[int, str, dict[str, object]]]:
    """(id, event name, data) of each event in a text/event-stream body, pings skipped."""
    import json

    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            if line.startswith(":") or ":" not in line:
                continue
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
        if "data" in fields:
            events.append((int(fields["id"]), fields.get("event", "message"), json.loads(fields["data"])))
    return events


def settings_in(home: Path, **overrides: Any) -> Settings:
    return load_settings(demo_mode=True, home=home, **overrides)


def app_for(home: Path, script: ScriptedRuns, *, bind_host: str = "127.0.0.1", **overrides: Any) -> FastAPI:
    return create_app(
        settings_in(home, **overrides), bind_host=bind_host, client_factory=offline_client, run_source=script
    )


async def events_of(client: httpx2.AsyncClient, run_id: str, **headers: str) -> list[tuple[int, str, dict[str, Any]]]:
    response = await client.get(f"/api/runs/{run_id}/events", headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    return sse_events(response.text)  # type: ignore[return-value]


@asynccontextmanager
async def connected(tmp_path: Path, *, over_http: bool = False, **overrides: object) -> AsyncIterator[Client]:
    """The SDK's client on the server (a context manager, not a fixture: the SDK's task groups must be
    entered and left in the same task); ``over_http``: the server as ``serve`` builds it for ``/mcp``."""
    settings = load_settings(demo_mode=True, home=tmp_path, max_iterations=2, **overrides)
    manager = RunManager(settings, client_factory=offline_client, run_source=ScriptedRuns())
    async with manager, Client(build_mcp_server(manager, settings, over_http=over_http)) as client:
        yield client


def text_of(result: object) -> str:
    content = getattr(result, "content", [])
    return "".join(block.text for block in content if isinstance(block, TextContent))
