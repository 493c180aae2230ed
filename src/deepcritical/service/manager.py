"""Runs started from the page, the API or MCP: queued, run at most ``max_concurrent_runs`` at a time,
and recorded in a runs folder (``run.journal``) so that a run outlives the browser that started it and a
restarted server still lists it. Each run goes through ``run.execute.run_to_folder``, like a run from the
command line. A run that was queued or running when the server stopped is marked ``interrupted`` at the
next start, never silently lost.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import structlog

from deepcritical.config import Settings
from deepcritical.errors import DeepCriticalError
from deepcritical.evidence import chroma
from deepcritical.models import KNOWN_SOURCES, SourceName
from deepcritical.reading.frame import frame_question
from deepcritical.redaction import Redactor
from deepcritical.run import setup
from deepcritical.run.checkpoint import has_checkpoint
from deepcritical.run.events import ProgressEvent, RunFinished
from deepcritical.run.execute import ClientFactory, RunSourceFactory, orchestrator, run_to_folder
from deepcritical.run.outcome import new_run_id
from deepcritical.service.journal import (
    ENDED,
    RUN_ID,
    RunEnded,
    RunInfo,
    RunJournal,
    RunQueued,
    RunStatus,
    RunSummary,
    StoredEvent,
)
from deepcritical.text import MAX_QUESTION_CHARS, one_line

logger = structlog.get_logger(__name__)

# Beyond this many waiting runs a new one is refused rather than left to wait for hours.
MAX_QUEUED_RUNS = 20
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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class _Run:
    info: RunInfo
    journal: RunJournal
    signal: asyncio.Event = field(default_factory=asyncio.Event)  # set, and replaced, at every change
    task: asyncio.Task[None] | None = None
    stop_as: Literal["cancelled", "interrupted"] = "cancelled"
    position: int | None = None
    resume: bool = False  # the next start continues from the run's checkpoint

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
        for journal, info in RunJournal.found_in(self.runs_dir):
            run = _Run(info=info, journal=journal)
            self._runs[info.run_id] = run
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
            known = next((source for source in KNOWN_SOURCES if source == name), None)
            if known is None:
                raise RunRequestError("sources", f"unknown source {name!r}; known: {', '.join(KNOWN_SOURCES)}")
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
            frame=frame_question(question),
            status="queued",
            demo=self.settings.demo_mode,
            max_iterations=iterations,
            sources=chosen,
            created_at=_now(),
        )
        run = _Run(info=info, journal=RunJournal.create(self.runs_dir / run_id))
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
        return self._run(run_id).journal.outputs()

    def file(self, run_id: str, name: str) -> Path:
        """One output of the run; RunNotFoundError when the run has no such file."""
        if name not in self.files(run_id):
            raise RunNotFoundError(f"run {run_id} has no file {name!r}")
        return self._run(run_id).journal.folder / name

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

    def resume(self, run_id: str) -> RunInfo:
        """Queue an interrupted run again; it continues from its last checkpoint (no finished search is
        sent again, its budgets carry over). RunEndedError when the run is not interrupted or saved none."""
        run = self._run(run_id)
        if run.info.status != "interrupted":
            raise RunEndedError(f"run {run_id} is {run.info.status}; only an interrupted run can be resumed")
        if not has_checkpoint(run.journal.folder):
            raise RunEndedError(f"run {run_id} stopped before its first checkpoint; start it again instead")
        if len(self._queue) >= self.max_queued:
            raise QueueFullError(f"{len(self._queue)} runs are waiting already; try again later")
        run.info.status, run.info.error, run.info.ended_at, run.info.summary = "queued", None, None, None
        run.resume, run.stop_as = True, "cancelled"
        self._save(run)
        self._queue.append(run_id)
        self._dispatch()
        return run.info

    async def follow(self, run_id: str, after: int = 0) -> AsyncIterator[StoredEvent]:
        """The run's events numbered above ``after``, as they come, until its last (``run_ended``)."""
        run = self._run(run_id)
        events = run.journal.events
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
        async for _ in self.follow(run_id, after=len(self._run(run_id).journal.events)):
            pass
        return self.get(run_id)

    # Internals

    def _run(self, run_id: str) -> _Run:
        run = self._runs.get(run_id) if RUN_ID.match(run_id) else None
        if run is None:
            raise RunNotFoundError(f"no run has the id {run_id!r}")
        return run

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

        def record(event: ProgressEvent) -> None:
            if not isinstance(event, RunFinished):  # the run's end is recorded once its files are written
                self._append(run, event.model_dump(mode="json"))

        try:
            done = await run_to_folder(
                info.question,
                settings,
                folder=run.journal.folder,
                run_id=info.run_id,
                on_event=record,
                client_factory=self._client_factory,
                run_source=self._run_source,
                resume=run.resume,
            )
            outcome = done.outcome
            self._end(run, "failed" if outcome.error else "finished", outcome.error, RunSummary.of(outcome))
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

    def _end(self, run: _Run, status: RunStatus, error: str | None, summary: RunSummary | None = None) -> None:
        if run.ended:
            return
        error = self._without_server_paths(error) if error else error
        run.info.status, run.info.error, run.info.summary = status, error, summary
        run.info.ended_at = _now()
        run.position = None
        self._save(run)
        self._append(run, RunEnded(status=status, error=error, summary=summary).model_dump(mode="json"))

    def _without_server_paths(self, message: str) -> str:
        """A message for clients: the server's own directories named by their setting, not their path."""
        return message.replace(str(self.settings.home.resolve()), "$DEEPCRITICAL_HOME").replace(
            str(self.settings.home), "$DEEPCRITICAL_HOME"
        )

    def _append(self, run: _Run, data: dict[str, Any]) -> None:
        run.journal.append(self._redact.value(data))  # the last redaction before the file and the stream
        run.notify()

    def _save(self, run: _Run) -> None:
        run.journal.save(run.info, redact=self._redact.value)
