"""The run manager of a team deployment (``DEEPCRITICAL_QUEUE_URL`` set): ``serve`` enqueues runs on the
job queue instead of running them; ``deepcritical worker`` processes run them. Any number of servers share
the runs folder (each run's ``status.json``, written by the server that took the request and by the worker
running it) and Redis: the queue, every run's events (``run.fanout``: SSE with ``Last-Event-ID`` works on
whichever server a client reaches) and cancels (the queue's abort reaches the worker within a second)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import structlog
from redis.exceptions import RedisError

from deepcritical.config import Settings
from deepcritical.run.request import RunPlan, RunRequest
from deepcritical.run.store import RUN_ID, RunInfo, RunStatus, RunStore, StoredEvent
from deepcritical.service.entries import STOPPED, RunEndedError, RunEntry, RunNotFoundError
from deepcritical.service.fanout import ENDED_KIND, EventStream
from deepcritical.service.manager import RunManager
from deepcritical.service.queue import QueuedRun, RunQueue, queue_url, redis_client

logger = structlog.get_logger(__name__)


class TeamRunManager(RunManager):
    """Runs go to the queue; their records are read from the shared runs folder, their events from Redis."""

    def __init__(self, settings: Settings, *, runs_dir: Path | None = None, **options: Any) -> None:
        super().__init__(settings, runs_dir=runs_dir, **options)
        self._redis = redis_client(queue_url(settings))
        self.run_queue = RunQueue(settings, self._redis)
        self.stream = EventStream(self._redis)
        self._enqueuing: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> TeamRunManager:
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        await self.run_queue.connect()
        return self

    async def __aexit__(self, *_: object) -> None:
        # Nothing is interrupted: the runs belong to the workers, and other servers follow them.
        await asyncio.gather(*self._enqueuing, return_exceptions=True)
        await self.run_queue.disconnect()
        if self._owns_resources:  # the server's uploads and searches used them
            await asyncio.to_thread(self.resources.close)

    def create(self, request: RunRequest, *, plan: RunPlan | None = None) -> RunInfo:
        plan = plan or self.accept(request)
        while (self.runs_dir / plan.run_id).exists():
            plan = self.accept(request)
        info = RunInfo.of(plan)
        store = RunStore.create(self.runs_dir / plan.run_id, self._redact.value)
        store.save(info)
        store.write_request(plan.request)
        self._runs[plan.run_id] = RunEntry(info=info, store=store, plan=plan)
        task = asyncio.create_task(self._enqueue(info, store, QueuedRun(run_id=plan.run_id, request=plan.request)))
        self._enqueuing.add(task)
        task.add_done_callback(self._enqueuing.discard)
        return info

    async def _enqueue(self, info: RunInfo, store: RunStore, queued: QueuedRun) -> None:
        try:
            await self.run_queue.enqueue(queued)
        except (RedisError, OSError) as error:
            await self._end_here(info, store, "failed", f"the job queue did not take the run: {error}")

    async def _end_here(self, info: RunInfo, store: RunStore, status: RunStatus, error: str) -> None:
        """End a run no worker holds (never started, or its queue entry lost) from this server."""
        # A fresh store reads the events a worker may have added since: the end is numbered after them.
        stored = RunStore(store.folder, self._redact.value).end(info, status, error, None)
        await self.stream.publish(info.run_id, stored.data, number=stored.id)

    def _run(self, run_id: str) -> RunEntry:
        """The run's record as the shared folder has it now (another server or a worker may have changed it)."""
        if not RUN_ID.match(run_id):
            raise RunNotFoundError(f"no run has the id {run_id!r}")
        folder = self.runs_dir / run_id
        try:
            info = RunInfo.model_validate_json((folder / "status.json").read_bytes())
        except (OSError, ValueError) as error:
            raise RunNotFoundError(f"no run has the id {run_id!r}") from error
        run = self._runs.get(run_id) or RunEntry(info=info, store=RunStore(folder, self._redact.value))
        run.info = info
        self._runs[run_id] = run
        return run

    def get(self, run_id: str) -> RunInfo:
        return self._run(run_id).info

    def all_runs(self) -> list[RunInfo]:
        return [info for _store, info in reversed(RunStore.found_in(self.runs_dir))]

    def position(self, run_id: str) -> int | None:
        return None

    async def cancel(self, run_id: str) -> RunInfo:
        run = self._run(run_id)
        if run.ended:
            raise RunEndedError(f"run {run_id} has ended already ({run.info.status})")
        reached = await self.run_queue.cancel(run_id, STOPPED["cancelled"])
        if run.info.status == "queued" or not reached:  # no worker holds it: this server records the end
            await self._end_here(run.info, run.store, "cancelled", STOPPED["cancelled"])
        return run.info

    def resume(self, run_id: str) -> RunInfo:
        raise RunEndedError(
            f"run {run_id}: in a team deployment a run whose worker was lost resumes by itself on another worker"
        )

    async def follow(self, run_id: str, after: int = 0) -> AsyncIterator[StoredEvent]:
        """Live from the stream while the run goes on; from the folder's ``events.jsonl`` (the record, which
        the stream only mirrors) once it has ended, so a run whose stream expired, or was lost with a
        restarted Redis, is still followed to its end."""
        last = max(after, 0)
        if not self._run(run_id).ended:
            async for number, data in self.stream.follow(run_id, after=last, ended=lambda: self._run(run_id).ended):
                last = number
                yield StoredEvent(id=number, data=data)
                if data.get("kind") == ENDED_KIND:
                    return
        for stored in RunStore(self.runs_dir / run_id).events:
            if stored.id > last:
                yield stored

    async def wait(self, run_id: str) -> RunInfo:
        if not self._run(run_id).ended:
            async for _ in self.follow(run_id, after=await self.stream.last_number(run_id)):
                pass
        return self.get(run_id)
