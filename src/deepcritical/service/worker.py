"""What a ``deepcritical worker`` does with a run it takes from the queue: run the question in the run's
folder under the shared runs folder, checkpointing after every stage, and record every progress event in
the folder's ``events.jsonl`` (the record) and on the run's Redis stream (``service.fanout``, its mirror);
or, when the run was delivered again after its worker was lost, resume it from its last checkpoint; or,
when every allowed attempt was used up, record it as failed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import structlog

from deepcritical.config import Settings
from deepcritical.errors import DeepCriticalError
from deepcritical.evidence.resources import Resources
from deepcritical.run.checkpoint import has_checkpoint, read_checkpoint
from deepcritical.run.execute import ClientFactory, RunSourceFactory, run_to_folder
from deepcritical.run.request import RunPlan
from deepcritical.run.store import (
    RunInfo,
    RunStatus,
    RunStore,
    RunSummary,
    StoredEvent,
    now_text,
    without_paths,
)
from deepcritical.service.fanout import EventStream
from deepcritical.service.queue import Attempt, QueuedRun
from deepcritical.text import one_line

logger = structlog.get_logger(__name__)


class QueuedRunExecutor:
    """Runs queued runs in their folders under ``runs_dir`` and publishes their events."""

    def __init__(
        self,
        settings: Settings,
        events: EventStream,
        runs_dir: Path | None = None,
        *,
        client_factory: ClientFactory | None = None,
        run_source: RunSourceFactory | None = None,
        resources: Resources | None = None,
    ) -> None:
        self.settings = settings
        self.events = events
        # The worker process's (``deepcritical worker`` builds them once and closes them); without them each
        # run builds its own and closes them when it ends.
        self._resources = resources
        self.runs_dir = runs_dir if runs_dir is not None else settings.home / "runs"
        self._client_factory = client_factory
        self._run_source = run_source
        self._redact = (resources or Resources(settings)).redactor

    async def __call__(self, run: QueuedRun, attempt: Attempt) -> None:
        folder = self.runs_dir / run.run_id
        folder.mkdir(parents=True, exist_ok=True)
        if attempt.last_straw:
            await self._end(run, folder, "failed", self.given_up(folder, attempt))
            return
        if (folder / "run.json").is_file() and not has_checkpoint(folder):
            # Delivered again after its outputs were written but before the queue heard: it is done.
            await self._end(run, folder, "finished", None)
            return
        self._record(run, folder, status="running", started_at=now_text())
        try:
            await self._research(run, folder)
        except asyncio.CancelledError:
            # Cancelled by a user (the queue's abort) or the worker stopping: the queue tells which, and a
            # stopping worker's run is delivered again and resumed, so only the first is an end.
            raise
        except DeepCriticalError as error:
            await self._end(run, folder, "failed", self._redact(one_line(str(error))))
        except Exception as error:  # a bug would fail again on every delivery: the run ends here, as failed
            logger.exception("queued_run_crashed", run_id=run.run_id)
            await self._end(run, folder, "failed", self._redact(one_line(f"{type(error).__name__}: {error}")))

    async def cancelled(self, run: QueuedRun, reason: str) -> None:
        await self._end(run, self.runs_dir / run.run_id, "cancelled", reason)

    def _store(self, folder: Path) -> RunStore:
        return RunStore(folder, self._redact.value)

    def _record(self, run: QueuedRun, folder: Path, **changes: Any) -> None:
        """Update the run's ``status.json`` (written by the server that took the request) for every server."""
        store = self._store(folder)
        # Enqueued by hand (a bench, a test), the run has no record yet: the worker starts it.
        info = store.status() or RunInfo.of(self._plan(run, folder))
        store.save(RunInfo.model_validate(info.model_dump() | changes))

    async def _end(
        self, run: QueuedRun, folder: Path, status: RunStatus, error: str | None, summary: RunSummary | None = None
    ) -> None:
        store = self._store(folder)
        info = store.status() or RunInfo.of(self._plan(run, folder))
        stored = store.end(info, status, without_paths(error, self.settings, self.runs_dir), summary)
        await self.events.publish(run.run_id, stored.data, number=stored.id)

    def given_up(self, folder: Path, attempt: Attempt) -> str:
        where = ""
        if has_checkpoint(folder):
            checkpoint = read_checkpoint(folder)
            where = f"; its last checkpoint was after the {checkpoint.stage} stage of iteration {checkpoint.iteration}"
        return (
            f"the run was started {attempt.allowed} times and each time its worker stopped answering "
            f"(killed, or its machine lost){where}; it is not tried again"
        )

    def _plan(self, run: QueuedRun, folder: Path) -> RunPlan:
        """The run's plan on this worker: the request the server accepted, on the worker's own settings."""
        return run.request.plan(self.settings, run_id=run.run_id, folder=folder)

    async def _research(self, run: QueuedRun, folder: Path) -> None:
        settings = self._plan(run, folder).settings
        # The run records its events in the folder and hands them over synchronously; one task mirrors
        # them on the stream, in order, under the folder's numbers.
        pending: asyncio.Queue[StoredEvent | None] = asyncio.Queue()

        async def publish() -> None:
            while (stored := await pending.get()) is not None:
                await self.events.publish(run.run_id, stored.data, number=stored.id)

        publisher = asyncio.create_task(publish())
        try:
            done = await run_to_folder(
                run.request.question,
                settings,
                run_id=run.run_id,
                store=self._store(folder),  # a delivery after a lost worker numbers on from the folder's events
                on_stored=pending.put_nowait,
                request=run.request,
                client_factory=self._client_factory,
                run_source=self._run_source,
                resume=has_checkpoint(folder),
                resources=self._resources,
            )
        finally:
            pending.put_nowait(None)
            await publisher
        outcome = done.outcome
        await self._end(run, folder, "failed" if outcome.error else "finished", outcome.error, RunSummary.of(outcome))
