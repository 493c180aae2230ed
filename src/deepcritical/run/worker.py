"""What a ``deepcritical worker`` does with a run it takes from the queue: run the question in the run's
folder under the shared runs folder, checkpointing after every stage, and publish every progress event on
the run's Redis stream (``run.fanout``); or, when the run was delivered again after its worker was lost,
resume it from its last checkpoint; or, when every allowed attempt was used up, record it as failed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import structlog

from deepcritical.config import Settings
from deepcritical.errors import DeepCriticalError
from deepcritical.redaction import Redactor
from deepcritical.run.checkpoint import has_checkpoint, read_checkpoint
from deepcritical.run.events import ProgressEvent, RunFinished
from deepcritical.run.execute import run_to_folder
from deepcritical.run.fanout import ENDED_KIND, EventStream
from deepcritical.run.queue import Attempt, QueuedRun
from deepcritical.text import one_line

logger = structlog.get_logger(__name__)


def ended(status: str, error: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"kind": ENDED_KIND, "status": status, "error": error, **extra}


class QueuedRunExecutor:
    """Runs queued runs in their folders under ``runs_dir`` and publishes their events."""

    def __init__(self, settings: Settings, events: EventStream, runs_dir: Path | None = None) -> None:
        self.settings = settings
        self.events = events
        self.runs_dir = runs_dir if runs_dir is not None else settings.home / "runs"
        self._redact = Redactor.for_settings(settings)

    async def __call__(self, run: QueuedRun, attempt: Attempt) -> None:
        folder = self.runs_dir / run.run_id
        folder.mkdir(parents=True, exist_ok=True)
        if attempt.last_straw:
            await self.events.publish(run.run_id, ended("failed", self.given_up(folder, attempt)))
            return
        if (folder / "run.json").is_file() and not has_checkpoint(folder):
            # Delivered again after its outputs were written but before the queue heard: it is done.
            await self.events.publish(run.run_id, ended("finished"))
            return
        try:
            await self._research(run, folder)
        except asyncio.CancelledError:
            # Cancelled by a user (the queue's abort) or the worker stopping: the queue tells which, and a
            # stopping worker's run is delivered again and resumed, so only the first is an end.
            raise
        except DeepCriticalError as error:
            await self.events.publish(run.run_id, ended("failed", self._redact(one_line(str(error)))))

    async def cancelled(self, run: QueuedRun, reason: str) -> None:
        await self.events.publish(run.run_id, ended("cancelled", reason))

    def given_up(self, folder: Path, attempt: Attempt) -> str:
        where = ""
        if has_checkpoint(folder):
            checkpoint = read_checkpoint(folder)
            where = f"; its last checkpoint was after the {checkpoint.stage} stage of iteration {checkpoint.iteration}"
        return (
            f"the run was started {attempt.allowed} times and each time its worker stopped answering "
            f"(killed, or its machine lost){where}; it is not tried again"
        )

    async def _research(self, run: QueuedRun, folder: Path) -> None:
        settings = self.settings.model_copy(
            update={"max_iterations": run.max_iterations, "sources": run.sources or self.settings.sources}
        )
        # The run hands its events over synchronously; one task publishes them, in order.
        pending: asyncio.Queue[ProgressEvent | None] = asyncio.Queue()

        async def publish() -> None:
            while (event := await pending.get()) is not None:
                if not isinstance(event, RunFinished):  # the end is published once the files are written
                    await self.events.publish(run.run_id, event.model_dump(mode="json"))

        publisher = asyncio.create_task(publish())
        try:
            done = await run_to_folder(
                run.question,
                settings,
                folder=folder,
                run_id=run.run_id,
                on_event=pending.put_nowait,
                resume=has_checkpoint(folder),
            )
        finally:
            pending.put_nowait(None)
            await publisher
        outcome = done.outcome
        summary = {
            "stop_reason": outcome.stop_reason,
            "evidence": len(outcome.evidence),
            "resumed": outcome.resumed,
            "seconds": outcome.timings.get("total", 0.0),
        }
        status = "failed" if outcome.error else "finished"
        await self.events.publish(run.run_id, ended(status, outcome.error, summary=summary))
