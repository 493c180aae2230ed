"""Runs started from the page, the API or MCP: queued, run at most ``max_concurrent_runs`` at a time,
and persisted in a runs folder so that a run outlives the browser that started it and a restarted
server still lists it.

Each run has a folder ``<runs_dir>/<run_id>/`` holding ``status.json`` (a ``RunInfo``), ``events.jsonl``
(every progress event, numbered from 1, the numbers being the SSE event ids) and, once it finished,
what ``write_outputs`` wrote (``report.md``, ``run.json`` and any other export). A run that was queued
or running when the server stopped is marked ``interrupted`` at the next start, never silently lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

import httpx2
import structlog
from pydantic import BaseModel, ValidationError

from deepcritical.config import Settings
from deepcritical.errors import DeepCriticalError
from deepcritical.evidence import chroma
from deepcritical.models import ALL_SOURCES, SourceName
from deepcritical.redaction import Redactor
from deepcritical.run import setup
from deepcritical.run.events import ProgressEvent, RunFinished
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.outcome import ResearchOutcome, new_run_id
from deepcritical.run.record import write_outputs
from deepcritical.text import MAX_QUESTION_CHARS, one_line

logger = structlog.get_logger(__name__)

RunStatus = Literal["queued", "running", "finished", "failed", "cancelled", "interrupted"]
ENDED: frozenset[RunStatus] = frozenset({"finished", "failed", "cancelled", "interrupted"})
# Beyond this many waiting runs a new one is refused rather than left to wait for hours.
MAX_QUEUED_RUNS = 20
RUN_ID = re.compile(r"^research-\d{8}-\d{6}-[0-9a-f]{6}$")
# The manager's own files in a run folder; every other file there is an output to download.
STATUS_FILE, EVENTS_FILE = "status.json", "events.jsonl"
STOPPED = {
    "cancelled": "cancelled by the user",
    "interrupted": "the server stopped before the run ended",
}


class RunRequestError(DeepCriticalError):
    """A request for a run that cannot be accepted; ``field`` names the offending input."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class QueueFullError(DeepCriticalError):
    """Too many runs are waiting already."""


class RunNotFoundError(DeepCriticalError):
    """No run has this id."""


class RunEndedError(DeepCriticalError):
    """The run has ended already, so it cannot be cancelled."""


class RunSummary(BaseModel):
    """What a finished run amounted to, small enough to list and to send as an event."""

    stop_reason: str
    iterations: int
    evidence: int
    references: int
    sources: dict[str, int]
    degraded: bool
    report_fallback: bool
    llm_requests: int
    seconds: float

    @classmethod
    def of(cls, outcome: ResearchOutcome) -> RunSummary:
        return cls(
            stop_reason=outcome.stop_reason,
            iterations=outcome.iterations,
            evidence=len(outcome.evidence),
            references=len(outcome.report.references),
            sources=outcome.sources,
            degraded=outcome.degraded,
            report_fallback=outcome.report_fallback,
            llm_requests=outcome.llm_usage.requests,
            seconds=outcome.timings.get("total", 0.0),
        )


class RunInfo(BaseModel):
    """A run's ``status.json``."""

    run_id: str
    question: str
    status: RunStatus
    demo: bool
    max_iterations: int
    sources: list[SourceName]
    created_at: str
    started_at: str | None = None
    ended_at: str | None = None
    error: str | None = None
    summary: RunSummary | None = None


class RunQueued(BaseModel):
    """The run waits for a free slot; ``position`` 1 starts next."""

    kind: Literal["queued"] = "queued"
    position: int


class RunEnded(BaseModel):
    """The last event of every run, whatever ended it."""

    kind: Literal["run_ended"] = "run_ended"
    status: RunStatus
    error: str | None = None
    summary: RunSummary | None = None


class StoredEvent(BaseModel):
    """One line of ``events.jsonl``: the event's number (its SSE id) and the event as JSON."""

    id: int
    data: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.data.get("kind", "message"))


class RunSource(Protocol):
    """What the manager runs: ``Orchestrator`` (tests may pass a stand-in)."""

    def run(self, question: str, *, run_id: str | None = None) -> AsyncIterator[ProgressEvent]: ...


ClientFactory = Callable[[Settings], httpx2.AsyncClient]
RunSourceFactory = Callable[[Settings, httpx2.AsyncClient], RunSource]


def orchestrator(settings: Settings, client: httpx2.AsyncClient) -> RunSource:
    return Orchestrator(settings, client=client)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class _Run:
    info: RunInfo
    folder: Path
    events: list[StoredEvent] | None = None  # None until read from disk (a run from an earlier start)
    signal: asyncio.Event = field(default_factory=asyncio.Event)  # set, and replaced, at every change
    task: asyncio.Task[None] | None = None
    stop_as: Literal["cancelled", "interrupted"] = "cancelled"
    position: int | None = None

    @property
    def ended(self) -> bool:
        return self.info.status in ENDED

    def notify(self) -> None:
        self.signal.set()
        self.signal = asyncio.Event()


class RunManager:
    """Starts, queues, cancels and records runs. Use as ``async with RunManager(...) as manager``: entering
    reads the runs folder (marking runs a stopped server left unfinished as interrupted); leaving
    interrupts the runs still going."""

    def __init__(
        self,
        settings: Settings,
        *,
        runs_dir: Path | None = None,
        client_factory: ClientFactory = setup.http_client,
        run_source: RunSourceFactory = orchestrator,
        max_queued: int = MAX_QUEUED_RUNS,
    ) -> None:
        self.settings = settings
        self.runs_dir = runs_dir if runs_dir is not None else settings.home / "runs"
        self.max_concurrent = settings.max_concurrent_runs
        self.max_queued = max_queued
        self._client_factory = client_factory
        self._run_source = run_source
        self._redact = Redactor.for_settings(settings)
        self._runs: dict[str, _Run] = {}  # oldest first
        self._queue: deque[str] = deque()
        self._running: set[str] = set()
        self._store_anchor: chroma.Connection | None = None

    async def __aenter__(self) -> RunManager:
        self.open()
        if self.settings.chroma_host is None:
            # Chroma's embedded clients share one System per directory, created on the first client and
            # stopped when the last one closes, with no lock around either: runs opening and closing their
            # stores at the same moment can break each other. A client held for the server's whole life
            # creates the System once, before any run, and keeps it from ever being stopped under a run.
            self._store_anchor = await asyncio.to_thread(chroma.connect, self.settings)
        return self

    async def __aexit__(self, *_: object) -> None:
        try:
            await self.close()
        finally:
            if self._store_anchor is not None:
                await asyncio.to_thread(self._store_anchor.close)
                self._store_anchor = None

    # Starting and stopping

    def open(self) -> None:
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        found: list[_Run] = []
        for status_path in self.runs_dir.glob(f"*/{STATUS_FILE}"):
            try:
                info = RunInfo.model_validate_json(status_path.read_bytes())
            except (OSError, ValidationError) as error:
                logger.warning("run_folder_unreadable", folder=str(status_path.parent), error=one_line(str(error)))
                continue
            if info.run_id != status_path.parent.name or not RUN_ID.match(info.run_id):
                continue
            found.append(_Run(info=info, folder=status_path.parent))
        for run in sorted(found, key=lambda run: (run.info.created_at, run.info.run_id)):
            self._runs[run.info.run_id] = run
            if not run.ended:  # a server stopped while it was queued or running
                self._end(run, "interrupted", STOPPED["interrupted"])

    async def close(self) -> None:
        """Interrupt every run still queued or running, and record it as interrupted."""
        while self._queue:
            self._end(self._runs[self._queue.popleft()], "interrupted", STOPPED["interrupted"])
        tasks = []
        for run_id in list(self._running):
            run = self._runs[run_id]
            if run.task is not None:
                run.stop_as = "interrupted"
                run.task.cancel()
                tasks.append(run.task)
        await asyncio.gather(*tasks, return_exceptions=True)

    # Requests

    def check_request(
        self, question: str, max_iterations: int | None, sources: Sequence[str] | None
    ) -> tuple[str, int, list[SourceName]]:
        """The question stripped, the iterations and sources to use; a RunRequestError naming the field
        when a value is outside what this server allows."""
        question = question.strip()
        if not question:
            raise RunRequestError("question", "the question is empty")
        if len(question) > MAX_QUESTION_CHARS:
            raise RunRequestError("question", f"at most {MAX_QUESTION_CHARS} characters")
        limit = self.settings.max_iterations
        iterations = limit if max_iterations is None else max_iterations
        if not 1 <= iterations <= limit:
            raise RunRequestError("max_iterations", f"must be between 1 and {limit} on this server")
        return question, iterations, self.check_sources(sources)

    def check_sources(self, sources: Sequence[str] | None) -> list[SourceName]:
        """The sources to search: all enabled ones for None, else the named ones if this server enables them."""
        enabled = list(self.settings.sources)
        if sources is None:
            return enabled
        chosen: list[SourceName] = []
        for name in dict.fromkeys(sources):
            known = next((source for source in ALL_SOURCES if source == name), None)
            if known is None:
                raise RunRequestError("sources", f"unknown source {name!r}; known: {', '.join(ALL_SOURCES)}")
            if known not in enabled:
                raise RunRequestError(
                    "sources", f"{name!r} is not enabled on this server; enabled: {', '.join(enabled)}"
                )
            chosen.append(known)
        if not chosen:
            raise RunRequestError("sources", "name at least one source")
        return chosen

    def create(
        self, question: str, *, max_iterations: int | None = None, sources: Sequence[str] | None = None
    ) -> RunInfo:
        """Queue a run (it starts at once when a slot is free) and return its record."""
        question, iterations, chosen = self.check_request(question, max_iterations, sources)
        if len(self._queue) >= self.max_queued:
            raise QueueFullError(f"{len(self._queue)} runs are waiting already; try again later")
        run_id = new_run_id()
        while run_id in self._runs:  # two runs in one second share the time part; the random part differs
            run_id = new_run_id()
        info = RunInfo(
            run_id=run_id,
            question=question,
            status="queued",
            demo=self.settings.demo_mode,
            max_iterations=iterations,
            sources=chosen,
            created_at=_now(),
        )
        run = _Run(info=info, folder=self.runs_dir / run_id, events=[])
        run.folder.mkdir(parents=True)
        self._runs[run_id] = run
        self._save(run)
        self._queue.append(run_id)
        self._dispatch()
        return info

    def get(self, run_id: str) -> RunInfo:
        return self._run(run_id).info

    def all_runs(self) -> list[RunInfo]:
        """Every run, newest first."""
        return [run.info for run in reversed(self._runs.values())]

    def position(self, run_id: str) -> int | None:
        """1 for the next queued run to start; None when the run is not waiting."""
        return self._run(run_id).position

    def files(self, run_id: str) -> list[str]:
        """The run's outputs, by name (``report.md``, ``run.json`` and any other export)."""
        run = self._run(run_id)
        if not run.folder.is_dir():
            return []
        names = (path.name for path in run.folder.iterdir() if path.is_file())
        return sorted(name for name in names if name not in (STATUS_FILE, EVENTS_FILE) and not name.startswith("."))

    def file(self, run_id: str, name: str) -> Path:
        """One output of the run; RunNotFoundError when the run has no such file."""
        if name not in self.files(run_id):
            raise RunNotFoundError(f"run {run_id} has no file {name!r}")
        return self._run(run_id).folder / name

    async def cancel(self, run_id: str) -> RunInfo:
        """Stop a queued or running run; it is recorded as cancelled."""
        run = self._run(run_id)
        if run.ended:
            raise RunEndedError(f"run {run_id} has ended already ({run.info.status})")
        if run_id in self._queue:
            self._queue.remove(run_id)
            self._end(run, "cancelled", STOPPED["cancelled"])
            self._dispatch()
        elif run.task is not None:
            run.stop_as = "cancelled"
            run.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await run.task
        return run.info

    async def follow(self, run_id: str, after: int = 0) -> AsyncIterator[StoredEvent]:
        """The run's events numbered above ``after``, as they come, until its last (``run_ended``)."""
        run = self._run(run_id)
        events = self._events(run)
        index = max(after, 0)
        while True:
            while index < len(events):
                yield events[index]
                index += 1
            if run.ended:
                return
            # Nothing is awaited between the checks above and this wait, so no change can be missed.
            await run.signal.wait()

    async def wait(self, run_id: str) -> RunInfo:
        """The run's record once it has ended."""
        async for _ in self.follow(run_id, after=len(self._events(self._run(run_id)))):
            pass
        return self.get(run_id)

    # Internals

    def _run(self, run_id: str) -> _Run:
        run = self._runs.get(run_id) if RUN_ID.match(run_id) else None
        if run is None:
            raise RunNotFoundError(f"no run has the id {run_id!r}")
        return run

    def _events(self, run: _Run) -> list[StoredEvent]:
        if run.events is None:
            path = run.folder / EVENTS_FILE
            lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
            run.events = []
            for line in filter(str.strip, lines):
                try:
                    run.events.append(StoredEvent.model_validate_json(line))
                except ValidationError:  # a line cut short by a crash: the events before it still count
                    logger.warning("run_event_unreadable", run_id=run.info.run_id)
        return run.events

    def _dispatch(self) -> None:
        """Start waiting runs while slots are free, then tell each waiting run its new place."""
        while self._queue and len(self._running) < self.max_concurrent:
            run = self._runs[self._queue.popleft()]
            run.position = None
            run.info.status, run.info.started_at = "running", _now()
            self._save(run)
            self._running.add(run.info.run_id)
            run.task = asyncio.create_task(self._execute(run), name=f"run {run.info.run_id}")
        for position, run_id in enumerate(self._queue, start=1):
            run = self._runs[run_id]
            if run.position != position:
                run.position = position
                self._append(run, RunQueued(position=position).model_dump(mode="json"))

    async def _execute(self, run: _Run) -> None:
        info = run.info
        settings = self.settings.model_copy(update={"max_iterations": info.max_iterations, "sources": info.sources})
        try:
            async with self._client_factory(settings) as client:
                async for event in self._run_source(settings, client).run(info.question, run_id=info.run_id):
                    if isinstance(event, RunFinished):
                        self._finish(run, event.outcome)
                    else:
                        self._append(run, event.model_dump(mode="json"))
            if not run.ended:
                self._end(run, "failed", "the run ended without an outcome")
        except asyncio.CancelledError:
            self._end(run, run.stop_as, STOPPED[run.stop_as])
        except DeepCriticalError as error:
            self._end(run, "failed", self._redact(one_line(str(error))))
        except OSError as error:  # the run's folder cannot be written: the reason, not the server's path
            logger.warning("run_folder_unwritable", run_id=info.run_id, error=str(error))
            self._end(run, "failed", f"cannot write the run's folder ({error.strerror or type(error).__name__})")
        except Exception as error:  # a crash fails this run only; the server and the other runs go on
            logger.exception("run_crashed", run_id=info.run_id)
            self._end(run, "failed", self._redact(one_line(f"{type(error).__name__}: {error}")))
        finally:
            self._running.discard(info.run_id)
            self._dispatch()

    def _finish(self, run: _Run, outcome: ResearchOutcome) -> None:
        try:
            write_outputs(outcome, run.folder)
        except OSError as error:
            self._end(run, "failed", f"cannot write the report: {error.strerror or error}")
            return
        status: RunStatus = "failed" if outcome.error else "finished"
        self._end(run, status, outcome.error, RunSummary.of(outcome))

    def _end(self, run: _Run, status: RunStatus, error: str | None, summary: RunSummary | None = None) -> None:
        if run.ended:
            return
        run.info.status, run.info.error, run.info.summary = status, error, summary
        run.info.ended_at = _now()
        run.position = None
        self._save(run)
        self._append(run, RunEnded(status=status, error=error, summary=summary).model_dump(mode="json"))

    def _append(self, run: _Run, data: dict[str, Any]) -> None:
        events = self._events(run)
        stored = StoredEvent(id=len(events) + 1, data=self._redact.value(data))  # the last pass before the file
        # Small appends to a local file: written synchronously so the file order is the event order. A folder
        # that cannot be written loses the file, never the event: followers (SSE, MCP) still get it, to the end.
        try:
            with (run.folder / EVENTS_FILE).open("a", encoding="utf-8") as handle:
                handle.write(stored.model_dump_json() + "\n")
        except OSError as error:
            logger.warning("run_event_not_written", run_id=run.info.run_id, error=str(error))
        events.append(stored)
        run.notify()

    def _save(self, run: _Run) -> None:
        """Replace ``status.json`` whole, so a reader never sees half of it."""
        target = run.folder / STATUS_FILE
        partial = target.with_name(f".{STATUS_FILE}.partial")
        try:
            partial.write_text(
                json.dumps(self._redact.value(run.info.model_dump(mode="json")), indent=2) + "\n", encoding="utf-8"
            )
            os.replace(partial, target)
        except OSError as error:  # the record in memory stands; a restart marks the run interrupted
            logger.warning("run_status_not_written", run_id=run.info.run_id, error=str(error))
