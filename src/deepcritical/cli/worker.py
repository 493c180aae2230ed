"""``deepcritical worker``: takes runs from the team's queue (``DEEPCRITICAL_QUEUE_URL``) and runs them,
``--concurrency`` at a time, and the team's due watches (``service.watch_schedule``), until SIGINT or
SIGTERM (its running runs then go back to the queue and are resumed by another worker from their
checkpoints)."""

from __future__ import annotations

import asyncio
import contextlib

from redis.exceptions import RedisError

from deepcritical.config import Settings
from deepcritical.evidence.resources import Resources
from deepcritical.service.fanout import EventStream
from deepcritical.service.queue import build_worker, queue_url, redis_client, unreachable, where
from deepcritical.service.watch_schedule import WatchJobs
from deepcritical.service.watches_redis import RedisWatchStore

__all__ = ["run_worker", "where"]  # ``where``: the command's banner names the Redis server by it
from deepcritical.service.worker import QueuedRunExecutor


async def run_worker(settings: Settings, *, concurrency: int) -> None:
    url = queue_url(settings)
    redis = redis_client(url)
    try:
        try:
            await redis.ping()
        except (RedisError, OSError) as error:
            raise unreachable(url, error) from error
        resources = Resources(settings)
        executor = QueuedRunExecutor(settings, EventStream(redis), resources=resources)
        # Every worker also runs the team's due watches (the queue's cron finds them, one run per due time).
        watch_store = RedisWatchStore(url, settings.home)
        watches = WatchJobs(watch_store, settings, resources=resources)
        worker = build_worker(settings, redis, executor, concurrency=concurrency, url=url, watches=watches)
        # Runs at once on one embedded store: the process's connection, opened before any run and held for the
        # worker's life, keeps Chroma's shared System from being stopped under a run (as the server does).
        if not settings.chroma_host:
            await asyncio.to_thread(resources.connection)
        try:
            await worker.start()
        finally:
            watch_store.close()
            await asyncio.to_thread(resources.close)
    finally:
        with contextlib.suppress(RedisError, OSError):
            await redis.aclose()
