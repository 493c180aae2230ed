"""The job queue of a team deployment: runs go from any ``serve`` to any ``deepcritical worker`` through
saq on Redis (``DEEPCRITICAL_QUEUE_URL``). Chosen over arq, taskiq, Celery and streaq in
``phases/15_resume_batch_queue.md``.

Delivery is at least once. A worker beats the job's heartbeat every third of ``DEEPCRITICAL_QUEUE_HEARTBEAT``
seconds; a job whose heartbeat is older than that (its worker was killed, its machine lost) is swept by
any live worker (every ``SWEEP_SECONDS``) and queued again, and the next worker resumes the run from its
last checkpoint. Every delivery counts as an attempt: after ``DEEPCRITICAL_QUEUE_ATTEMPTS`` of them, the
next delivery does not run the question again but records the run as failed with the reason, so a run
that kills its worker every time ends instead of looping.

A killed worker's run is queued again at most ``heartbeat + SWEEP_SECONDS + ABORT_WAIT_SECONDS`` seconds
after the kill (41 s with the default 30 s heartbeat), and taken by an idle worker within
``DEQUEUE_TIMEOUT_SECONDS`` more.

saq 0.26's own Redis sweep loses jobs, so ``RunRedisQueue`` replaces it (see its docstring).
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Protocol
from urllib.parse import urlsplit

import structlog
from pydantic import BaseModel
from redis import Redis as SyncRedis
from redis.asyncio import Redis
from redis.exceptions import RedisError, WatchError
from saq import CronJob, Job, Queue, Status, Worker
from saq.job import TERMINAL_STATUSES
from saq.queue.redis import RedisQueue
from saq.types import Context

from deepcritical.config import Settings
from deepcritical.errors import ConfigError
from deepcritical.run.request import RunRequest

logger = structlog.get_logger(__name__)

QUEUE_NAME = "deepcritical-runs"
JOB_FUNCTION = "research_run"
SWEEP_SECONDS = 5
# How long a sweep gives a stuck job's worker, if it is alive after all, to stop the job before it is queued again.
ABORT_WAIT_SECONDS = 5.0
ABORT_POLL_SECONDS = 0.5
# The queue's own limit on a job is a backstop only: the run enforces DEEPCRITICAL_MAX_SECONDS itself.
JOB_TIMEOUT_FACTOR = 2
JOB_TIMEOUT_EXTRA_SECONDS = 300
SWEPT = "the worker running it stopped answering (killed, or its machine lost)"
# A blocking read shorter than any socket timeout: redis-py 8 times out idle reads after a few seconds.
DEQUEUE_TIMEOUT_SECONDS = 1.0


class QueuedRun(BaseModel):
    """What a worker needs to run a question someone asked a server: the run's id (its folder under the
    shared runs folder) and the request, as the server accepted it. Keys and endpoints are the worker's own."""

    run_id: str
    request: RunRequest


class Attempt(BaseModel):
    """Which delivery of the run this is, and whether any are left to run it."""

    number: int
    allowed: int

    @property
    def last_straw(self) -> bool:
        """Every allowed attempt was used up (each ended with its worker lost): record the failure."""
        return self.number > self.allowed


class RunExecutor(Protocol):
    """Runs one delivery of a queued run; told when a user cancelled it."""

    async def __call__(self, run: QueuedRun, attempt: Attempt) -> None: ...

    async def cancelled(self, run: QueuedRun, reason: str) -> None: ...


class ExtraJobs(Protocol):
    """More work for a worker than research runs (the team's due watches: ``service.watch_schedule``)."""

    def functions(self, *, url: str, beat: float) -> tuple[list[tuple[str, Any]], list[CronJob[Context]]]: ...


def queue_url(settings: Settings) -> str:
    if settings.queue_url is None:
        raise ConfigError("DEEPCRITICAL_QUEUE_URL: not set; a worker takes its runs from that Redis server")
    return settings.queue_url.get_secret_value()


def where(url: str) -> str:
    """The Redis server's host and port, never its password."""
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or 6379}"


def unreachable(url: str, error: Exception) -> ConfigError:
    """The one line for a queue's Redis that does not answer."""
    return ConfigError(f"DEEPCRITICAL_QUEUE_URL: no Redis server answers at {where(url)} ({error})")


def redis_client(url: str) -> Redis:
    return Redis.from_url(url)


def queue_job(settings: Settings, function: str, key: str, kwargs: dict[str, Any]) -> Job:
    """A job (a run's, a watch's) with its backstop timeout, its heartbeat, and one delivery more than the
    attempts: the last one records the failure instead of running."""
    return Job(
        function=function,
        kwargs=kwargs,
        key=key,
        timeout=int(settings.max_seconds * JOB_TIMEOUT_FACTOR + JOB_TIMEOUT_EXTRA_SECONDS),
        heartbeat=max(int(settings.queue_heartbeat), 1),
        retries=settings.queue_attempts + 1,
    )


# The sweep's snapshot of the active list: each job id with its stored record, read in one step.
_ACTIVE_JOBS = """
local id_jobs = {}
if redis.call('EXISTS', KEYS[1]) == 0 then
    redis.call('SETEX', KEYS[1], ARGV[1], 1)
    for i, v in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
        id_jobs[i] = {v, redis.call('GET', v)}
    end
end
return id_jobs
"""


class RunRedisQueue(RedisQueue):
    """saq's Redis queue with a sweep that never loses a job (saq 0.26.4's loses one in two ways).

    1. A worker takes a job in two steps: ``BLMOVE`` from the queued list to the active list, then a write
       of its record as ``active``. saq's sweep takes any job in the active list whose record is not
       ``active`` for a stuck one, so a sweep between the two steps (every worker sweeps as it starts,
       while it takes its first job) aborts a job that is just starting: the abort drops it from the active
       list and the incomplete set, the taking worker's write then marks it ``active`` again, and no sweep
       ever sees it again (upstream: tobymao/saq#124, #277). Here a job in the active list whose record is
       not ``active`` is swept only when the previous sweep of this worker saw it just the same, so its
       taker died between the two steps.
    2. saq's sweep aborts a stuck job (dropping it from every list), waits for it to stop, and only then
       queues it again: a sweeping worker killed in between leaves the job in no list. Here the job stays
       in the active list, marked ``aborting``, until it is queued again, so the next sweep (of any
       worker) takes it up where a lost sweeper left it.

    Every change is made only while the job's record is as the sweep read it (``WATCH``), so a heartbeat, a
    finish or a take in between wins over the sweep."""

    def __init__(self, redis: Redis, **options: Any) -> None:
        super().__init__(redis, **options)
        self._active_jobs = redis.register_script(_ACTIVE_JOBS)
        self._unstarted: dict[bytes, bytes] = {}  # taken but not marked active, as the last sweep saw them

    async def sweep(self, lock: int = 60, abort: float = ABORT_WAIT_SECONDS) -> list[str]:
        id_jobs = await self._active_jobs(keys=[self._sweep, self._active], args=[lock], client=self.redis)
        swept: list[bytes] = []
        unstarted: dict[bytes, bytes] = {}
        for job_id, job_bytes in id_jobs:
            job = self.deserialize(job_bytes)
            if job is None or job.status in TERMINAL_STATUSES:  # nothing is left to run (saq would run it again)
                async with self.redis.pipeline(transaction=True) as pipe:
                    pipe.lrem(self._active, 0, job_id)
                    pipe.zrem(self._incomplete, job_id)
                    await pipe.execute()
                swept.append(job_id)
            elif job.status in (Status.ACTIVE, Status.ABORTING):
                if job.stuck and await self._requeue(job_id, job_bytes, job, abort):
                    swept.append(job_id)
            elif self._unstarted.get(job_id) == job_bytes:
                if await self._requeue(job_id, job_bytes, job, abort):
                    swept.append(job_id)
            else:
                unstarted[job_id] = job_bytes
        if id_jobs:  # nothing read means another worker holds the sweep's lock: what this one saw still stands
            self._unstarted = unstarted
        return [job_id.decode() for job_id in swept]

    async def _requeue(self, job_id: bytes, job_bytes: bytes, job: Job, abort: float) -> bool:
        """Mark the job ``aborting`` (a live worker holding it stops it), give it ``abort`` seconds, then queue
        it again (or end it once its retries are used up); False when its record changed since the sweep read it."""
        logger.info("queue_sweeping_job", job=job.key, status=str(job.status), attempts=job.attempts)
        job.status, job.error = Status.ABORTING, self.swept_error_message
        try:
            async with self.redis.pipeline(transaction=True) as pipe:
                await pipe.watch(job_id)
                if await pipe.get(job_id) != job_bytes:
                    return False
                pipe.multi()  # type: ignore[no-untyped-call]  # redis-py leaves it unannotated
                pipe.set(job_id, self.serialize(job))
                pipe.set(job.abort_id, job.error, ex=max(int(abort), 1))
                pipe.publish(job_id, job.status)
                await pipe.execute()
        except WatchError:
            return False
        stored = await self._stopped(job.key, abort)
        if stored is None:
            return True
        if stored.status in (Status.COMPLETE, Status.FAILED) or (stored.status == Status.ACTIVE and not stored.stuck):
            return True  # it ended, or a live worker took it up again: nothing to queue
        if stored.retryable:
            await self.retry(stored, error=self.swept_error_message)
        else:
            await self.finish(stored, Status.ABORTED, error=self.swept_error_message)
        return True

    async def _stopped(self, job_key: str, wait: float) -> Job | None:
        """The job's record once it is no longer ``aborting``, or after ``wait`` seconds."""
        deadline = time.monotonic() + wait
        while (stored := await self.job(job_key)) is not None and stored.status == Status.ABORTING:
            if time.monotonic() >= deadline:
                break
            await asyncio.sleep(ABORT_POLL_SECONDS)
        return stored


def saq_queue(redis: Redis) -> RedisQueue:
    return RunRedisQueue(redis, name=QUEUE_NAME, swept_error_message=SWEPT)


class RunQueue:
    """The server's side: enqueue, cancel and inspect runs."""

    def __init__(self, settings: Settings, redis: Redis) -> None:
        self.settings = settings
        self.redis = redis
        self.queue: Queue = saq_queue(redis)

    async def connect(self) -> None:
        await self.queue.connect()

    async def disconnect(self) -> None:
        await self.queue.disconnect()

    async def enqueue(self, run: QueuedRun) -> None:
        job = queue_job(self.settings, JOB_FUNCTION, run.run_id, {"run": run.model_dump(mode="json")})
        await self.queue.enqueue(job)

    async def cancel(self, run_id: str, reason: str) -> bool:
        """Take the run off the queue and ask the worker running it to stop (it checks every second). True
        only when a live worker holds it, and so records the end itself; False when it was waiting, had
        ended, or its worker died (its heartbeat is late), so that the caller records the cancel."""
        job = await self.queue.job(run_id)
        if job is None or job.completed:
            return False
        held = job.status == Status.ACTIVE and not job.stuck
        await self.queue.abort(job, error=reason)
        return held


# Moves an active job's ``touched`` forward in place (the heartbeat saq's sweep reads), in one step and
# only while the record says ``active``: a job the sweep marked ``aborting`` or a worker finished is left as
# it is. saq's own beat, ``job.update()``, reads the status and then writes the whole record back from the
# worker's copy, so a sweep in between would be undone. The JSON is edited as text: decoding and re-encoding
# it in Lua would turn empty lists into objects.
_TOUCH = """
local raw = redis.call('GET', KEYS[1])
if not raw or not string.find(raw, '"status": "active"', 1, true) then return 0 end
local touched, found = string.gsub(raw, '"touched": %d+', '"touched": ' .. ARGV[1], 1)
if found == 0 then return 0 end
redis.call('SET', KEYS[1], touched)
return 1
"""


class Heartbeat:
    """Beats a job's heartbeat from a thread of its own, on its own connection, so a run that keeps the
    event loop busy (loading the embedding model on a loaded machine) is not taken for a dead one: saq has
    no beat of its own, and one on the event loop would stop whenever the loop is busy."""

    def __init__(self, url: str, job: Job, every: float) -> None:
        self._client = SyncRedis.from_url(url)
        self._touch = self._client.register_script(_TOUCH)
        self._job_id = job.id
        self._every = every
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat {job.key}", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stopped.set()
        self._thread.join()
        self._client.close()

    def _beat(self) -> None:
        while not self._stopped.wait(self._every):
            try:
                self._touch(keys=[self._job_id], args=[int(time.time() * 1000)])
            except RedisError as error:  # the next beat tries again; a lost Redis loses the queue anyway
                logger.warning("heartbeat_failed", error=str(error))


def build_worker(
    settings: Settings,
    redis: Redis,
    execute: RunExecutor,
    *,
    concurrency: int,
    url: str,
    watches: ExtraJobs | None = None,
) -> Worker[Context]:
    """A saq worker taking runs ``concurrency`` at a time and running each through ``execute``; with
    ``watches``, it also runs the team's due watches (``service.watch_schedule``)."""
    beat = max(settings.queue_heartbeat / 3, 0.2)

    async def research_run(ctx: Context, *, run: dict[str, Any]) -> str:
        job = ctx["job"]
        queued = QueuedRun.model_validate(run)
        attempt = Attempt(number=job.attempts, allowed=settings.queue_attempts)
        try:
            with structlog.contextvars.bound_contextvars(run_id=queued.run_id, attempt=attempt.number):
                logger.info("queued_run_started")
                await execute(queued, attempt)
        except asyncio.CancelledError:
            # A user's cancel (the queue marks the job aborting first) ends the run; a worker stopping does
            # not: the queue delivers the job again and the next worker resumes it.
            stored = await ctx["worker"].queue.job(job.key)
            aborted = stored is not None and stored.status in (Status.ABORTING, Status.ABORTED)
            if aborted and stored is not None and stored.error != SWEPT:  # swept: it is delivered again
                await execute.cancelled(queued, stored.error or "cancelled")
            raise
        return queued.run_id

    async def beating(ctx: Context, *, run: dict[str, Any]) -> str:
        with Heartbeat(url, ctx["job"], beat):
            return await research_run(ctx, run=run)

    functions: list[tuple[str, Any]] = [(JOB_FUNCTION, beating)]
    cron_jobs: list[CronJob[Context]] = []
    if watches is not None:
        watch_functions, cron_jobs = watches.functions(url=url, beat=beat)
        functions += watch_functions
    return Worker(
        saq_queue(redis),
        functions,
        cron_jobs=cron_jobs,
        concurrency=concurrency,
        timers={"sweep": SWEEP_SECONDS, "abort": 1, "schedule": 1, "worker_info": 10},
        dequeue_timeout=DEQUEUE_TIMEOUT_SECONDS,
    )
