"""The job queue of a team deployment: runs go from any ``serve`` to any ``deepcritical worker`` through
saq on Redis (``DEEPCRITICAL_QUEUE_URL``). Chosen over arq, taskiq, Celery and streaq in
``phases/15_resume_batch_queue.md``.

Delivery is at least once. A worker beats the job's heartbeat every third of ``DEEPCRITICAL_QUEUE_HEARTBEAT``
seconds; a job whose heartbeat is older than that (its worker was killed, its machine lost) is swept by
any live worker (every ``SWEEP_SECONDS``) and queued again, and the next worker resumes the run from its
last checkpoint. Every delivery counts as an attempt: after ``DEEPCRITICAL_QUEUE_ATTEMPTS`` of them, the
next delivery does not run the question again but records the run as failed with the reason, so a run
that kills its worker every time ends instead of looping.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Protocol

import structlog
from pydantic import BaseModel, Field
from redis import Redis as SyncRedis
from redis.asyncio import Redis
from redis.exceptions import RedisError
from saq import Job, Queue, Status, Worker
from saq.queue.redis import RedisQueue
from saq.types import Context

from deepcritical.config import Settings
from deepcritical.errors import ConfigError
from deepcritical.models import SourceName

logger = structlog.get_logger(__name__)

QUEUE_NAME = "deepcritical-runs"
JOB_FUNCTION = "research_run"
SWEEP_SECONDS = 5
# The queue's own limit on a job is a backstop only: the run enforces DEEPCRITICAL_MAX_SECONDS itself.
JOB_TIMEOUT_FACTOR = 2
JOB_TIMEOUT_EXTRA_SECONDS = 300
SWEPT = "the worker running it stopped answering (killed, or its machine lost)"
# A blocking read shorter than any socket timeout: redis-py 8 times out idle reads after a few seconds.
DEQUEUE_TIMEOUT_SECONDS = 1.0


class QueuedRun(BaseModel):
    """What a worker needs to run a question someone asked a server: the run's id (its folder under the
    shared runs folder), the question and the per-run choices. Keys and endpoints are the worker's own."""

    run_id: str
    question: str
    max_iterations: int
    sources: list[SourceName] = Field(default_factory=list)


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


def queue_url(settings: Settings) -> str:
    if settings.queue_url is None:
        raise ConfigError("DEEPCRITICAL_QUEUE_URL: not set; a worker takes its runs from that Redis server")
    return settings.queue_url.get_secret_value()


def redis_client(url: str) -> Redis:
    return Redis.from_url(url)


def saq_queue(redis: Redis) -> RedisQueue:
    return RedisQueue(redis, name=QUEUE_NAME, swept_error_message=SWEPT)


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
        settings = self.settings
        job = Job(
            function=JOB_FUNCTION,
            kwargs={"run": run.model_dump(mode="json")},
            key=run.run_id,
            timeout=int(settings.max_seconds * JOB_TIMEOUT_FACTOR + JOB_TIMEOUT_EXTRA_SECONDS),
            heartbeat=max(int(settings.queue_heartbeat), 1),
            # One delivery more than the attempts: the last one records the failure instead of running.
            retries=settings.queue_attempts + 1,
        )
        await self.queue.enqueue(job)

    async def cancel(self, run_id: str, reason: str) -> bool:
        """Ask whichever worker runs it to stop (it checks every second); False when it is not queued or running."""
        job = await self.queue.job(run_id)
        if job is None or job.completed:
            return False
        await self.queue.abort(job, error=reason)
        return True

    async def waiting(self) -> int:
        info = await self.queue.info()
        return int(info.get("queued") or 0)


# Moves an active job's ``touched`` forward in place (the heartbeat saq's sweep reads), editing saq's JSON
# as text: decoding and re-encoding it in Lua would turn empty lists into objects.
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
    event loop busy (loading the embedding model on a loaded machine) is not taken for a dead one."""

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
    settings: Settings, redis: Redis, execute: RunExecutor, *, concurrency: int, url: str
) -> Worker[Context]:
    """A saq worker taking runs ``concurrency`` at a time and running each through ``execute``."""
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

    return Worker(
        saq_queue(redis),
        [(JOB_FUNCTION, beating)],
        concurrency=concurrency,
        timers={"sweep": SWEEP_SECONDS, "abort": 1, "schedule": 1, "worker_info": 10},
        dequeue_timeout=DEQUEUE_TIMEOUT_SECONDS,
    )
