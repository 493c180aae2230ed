"""Due watches in a team deployment, run by the job queue's own scheduling (saq on Redis), exactly once per
due time however many workers and servers there are.

- **Who looks for due watches**: a saq cron job (``CronJob``, ``unique``: its key is the same on every
  worker, so one instance is pending at a time and one worker runs it per tick). It reads the team's
  watches (``watches_redis``) and enqueues one job per due watch.
- **One job per due time**: the job's key is ``watch:<id>:<due time>``. saq enqueues a key only when no job
  of that key is pending or running (its enqueue script checks the incomplete set), so the cron's next tick,
  another worker's cron and a server enqueuing the same due time add nothing while it is under way.
- **Once, not again after it ended**: a job runs its watch only while the watch's next due time is still the
  due time the job was made for; the run moves it on (``record_run``, in one step with the history). A job
  of that key enqueued again after the first ended (saq forgets a finished key) finds the time moved and
  does nothing. Nothing here is a lock: the due time is the watch's state, and saq's keys do the rest.
- **A killed run resumes**: the job beats its heartbeat like a research run (``queue.Heartbeat``); a worker
  killed mid-run stops beating, the queue's sweep (``RunRedisQueue``) delivers the job again, the due time
  has not moved, and ``run_watch_once`` continues the run folder the killed worker left
  (``watch_run.unfinished_run``). A run that kills its worker on every delivery is recorded as failed after
  ``DEEPCRITICAL_QUEUE_ATTEMPTS`` and the watch waits for its next due time."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from pydantic import BaseModel
from saq import CronJob, Job, Queue
from saq.types import Context

from deepcritical.config import Settings
from deepcritical.evidence.resources import Resources
from deepcritical.run.execute import ClientFactory
from deepcritical.service.queue import (
    Attempt,
    Heartbeat,
    queue_job,
    queue_url,
    redis_client,
    saq_queue,
)
from deepcritical.service.watch_run import WatchSourceFactory, carrying, run_watch_once, unfinished_run
from deepcritical.service.watches import Watch, WatchNotFoundError, WatchRun, WatchStorage, stamp

logger = structlog.get_logger(__name__)

WATCH_FUNCTION = "watch_run"
# Every minute: watches run at most hourly, so a due watch waits under a minute.
SCHEDULE_CRON = "* * * * *"
SCHEDULE_TIMEOUT_SECONDS = 60
Clock = Callable[[], datetime]


def _now() -> datetime:
    return datetime.now(UTC)


class ScheduledWatch(BaseModel):
    """What a watch job carries: the watch, and the due time it was made for."""

    watch_id: str
    due: datetime


def job_key(watch_id: str, due: datetime) -> str:
    return f"watch:{watch_id}:{stamp(due)}"


def watch_job(watch: Watch, settings: Settings) -> Job:
    """The job of ``watch``'s run for its current due time; retried and swept like a research run."""
    scheduled = ScheduledWatch(watch_id=watch.id, due=watch.next_due).model_dump(mode="json")
    return queue_job(settings, WATCH_FUNCTION, job_key(watch.id, watch.next_due), {"watch": scheduled})


async def enqueue_due(queue: Queue, store: WatchStorage, settings: Settings, now: datetime) -> list[str]:
    """Enqueue every watch due at ``now`` (a watch never run is due at once); the keys saq took (a due
    time already pending or running is not enqueued twice)."""
    enqueued = []
    for watch in store.watches():
        if watch.due(now) and await queue.enqueue(watch_job(watch, settings)) is not None:
            enqueued.append(job_key(watch.id, watch.next_due))
    return enqueued


async def queue_first_run(settings: Settings, watch: Watch) -> None:
    """Queue a watch just added (from the command line) at once, on its own connection, rather than at the
    next scan for due watches; the key is the scan's, so the scan adds no second run."""
    redis = redis_client(queue_url(settings))
    queue = saq_queue(redis)
    try:
        await queue.connect()
        await queue.enqueue(watch_job(watch, settings))
    finally:
        await queue.disconnect()
        await redis.aclose()


def next_after(due: datetime, interval: timedelta, now: datetime) -> datetime:
    """The first due time after ``now`` on the watch's beat (``due``, ``due + interval``, …): a watch left
    unrun for several intervals runs once, not once per interval missed."""
    missed = max((now - due) // interval, 0)
    return due + (missed + 1) * interval


class WatchJobs:
    """The watch side of a team's worker: the cron's scan for due watches and the run of one due time."""

    def __init__(
        self,
        store: WatchStorage,
        settings: Settings,
        *,
        clock: Clock | None = None,
        cron: str = SCHEDULE_CRON,
        client_factory: ClientFactory | None = None,
        run_source: WatchSourceFactory = carrying,
        resources: Resources | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.cron = cron
        # No clock given: the run is timed by the watch's own clock (the demo clock for a demo watch), and
        # the due times by the real one.
        self._clock = clock
        self._client_factory = client_factory
        self._run_source = run_source
        self._resources = resources  # the worker's; without them each watch run builds its own

    def now(self) -> datetime:
        return self._clock() if self._clock is not None else _now()

    async def schedule(self, queue: Queue) -> list[str]:
        enqueued = await enqueue_due(queue, self.store, self.settings, self.now())
        if enqueued:
            logger.info("watches_enqueued", jobs=enqueued)
        return enqueued

    async def run(self, scheduled: ScheduledWatch, attempt: Attempt) -> str:
        """Run the watch for ``scheduled.due`` unless that due time has been run (or the watch removed)."""
        try:
            watch = self.store.get(scheduled.watch_id)
        except WatchNotFoundError:
            return "removed"
        if stamp(watch.next_due) != stamp(scheduled.due):
            return "run already"
        now = self.now()
        next_due = next_after(scheduled.due, watch.interval, now)
        if attempt.last_straw:
            self._given_up(watch, attempt, now, next_due)
            return "failed"
        await run_watch_once(
            watch,
            self.settings,
            self.store,
            now=now if self._clock is not None else None,
            next_due=next_due,
            client_factory=self._client_factory,
            run_source=self._run_source,
            resources=self._resources,
            exclusive=True,  # this job alone holds the due time: a folder left unfinished is a killed run's
        )
        return "ran"

    def _given_up(self, watch: Watch, attempt: Attempt, now: datetime, next_due: datetime) -> None:
        folder = unfinished_run(self.store, watch, exclusive=True) or self.store.folder(watch.id)
        reason = (
            f"the run failed: it was started {attempt.allowed} times and never finished (its worker stopped "
            "answering, or the run could not write its folder); the watch runs again at its next due time"
        )
        logger.warning("watch_run_given_up", watch=watch.id, attempts=attempt.allowed)
        run = WatchRun(
            run_at=now, folder=str(folder), verdict=None, confidence=None, counted=0, changed=False, summary=[reason]
        )
        self.store.record_run(watch.id, run, next_due)

    def functions(self, *, url: str, beat: float) -> tuple[list[tuple[str, Any]], list[CronJob[Context]]]:
        """The worker's watch job (beating its heartbeat) and the cron job that finds due watches."""

        async def watch_run(ctx: Context, *, watch: dict[str, Any]) -> str:
            job = ctx["job"]
            attempt = Attempt(number=job.attempts, allowed=self.settings.queue_attempts)
            with Heartbeat(url, job, beat):
                return await self.run(ScheduledWatch.model_validate(watch), attempt)

        async def schedule_watches(ctx: Context) -> int:
            return len(await self.schedule(ctx["worker"].queue))

        cron = CronJob(schedule_watches, cron=self.cron, unique=True, timeout=SCHEDULE_TIMEOUT_SECONDS)
        return [(WATCH_FUNCTION, watch_run)], [cron]
