r"""Team scheduling of watches on a real ``redis-server``: how long the queue's own scheduling takes to run N
due watches on W saq workers, whether any due time runs twice, and how long a watch run whose worker is
killed (SIGKILL) takes to be recorded by another worker.

    python bench/watch_team.py [--watches 20,200] [--workers 1,3]

The runs are scripted (the web tests' ``ScriptedRuns``: no model, no source, a few milliseconds each), so
the figures are the scheduling's own: saq's cron (every second here, every minute in ``deepcritical
worker``), the job keys, the due-time check and the history writes in Redis. For each (watches, workers):
seconds from the first scan to every watch's first run recorded, then the same after the clock passes the
next due time, and the runs recorded against the due times (each watch must have exactly two). The kill
measure: a real ``deepcritical worker`` holds a watch's run at its start (the test-only hold), is killed,
and the time to that watch's record is printed with what bounds it (heartbeat 3 s + sweep 5 s + the
sweep's 5 s wait for a live holder).
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
from redis.asyncio import Redis
from redis.exceptions import RedisError

from deepcritical.config import Settings
from deepcritical.logs import configure_logging
from deepcritical.models import Evidence
from deepcritical.run.checkpoint import HOLD_VARIABLE
from deepcritical.run.execute import RunSourceFactory
from deepcritical.service.fanout import EventStream
from deepcritical.service.queue import build_worker, saq_queue
from deepcritical.service.watch_schedule import WatchJobs, enqueue_due
from deepcritical.service.watches import WatchOptions
from deepcritical.service.watches_redis import RedisWatchStore
from deepcritical.service.worker import QueuedRunExecutor

# The scripted run source the tests use: a bench of the scheduling, not of research.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from web.fakes import ScriptedRuns

DEADLINE_SECONDS = 600.0
EMPTY_EFETCH = b"<?xml version='1.0'?><PubmedArticleSet></PubmedArticleSet>"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def pubmed(settings: Settings) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.MockTransport(lambda _: httpx2.Response(200, content=EMPTY_EFETCH)))


def settings_for(url: str, home: Path) -> Settings:
    values = {"DEMO_MODE": True, "DEEPCRITICAL_QUEUE_URL": url, "DEEPCRITICAL_HOME": str(home)}
    return Settings(_env_file=None, DEEPCRITICAL_QUEUE_HEARTBEAT=3, **values)  # type: ignore[call-arg, arg-type]


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC) + timedelta(minutes=1)

    def __call__(self) -> datetime:
        return self.now


async def until(done: Any, what: str) -> float:
    start, deadline = time.monotonic(), time.monotonic() + DEADLINE_SECONDS
    while not done():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)
    return time.monotonic() - start


async def workers(settings: Settings, url: str, count: int, clock: Clock, stack: AsyncExitStack) -> None:
    scripted = ScriptedRuns()

    def source(held: Sequence[Evidence]) -> RunSourceFactory:
        return scripted

    for _ in range(count):
        redis = Redis.from_url(url)
        stack.push_async_callback(redis.aclose)
        store = RedisWatchStore(url, settings.home)
        stack.callback(store.close)
        jobs = WatchJobs(store, settings, clock=clock, cron="* * * * * *", client_factory=pubmed, run_source=source)
        worker = build_worker(
            settings, redis, QueuedRunExecutor(settings, EventStream(redis)), concurrency=2, url=url, watches=jobs
        )
        task = asyncio.create_task(worker.start())

        async def stopped(worker: Any = worker, task: asyncio.Task[None] = task) -> None:
            await worker.stop()
            await asyncio.gather(task, return_exceptions=True)

        stack.push_async_callback(stopped)


async def fresh(url: str, home: Path, watches: int) -> tuple[Settings, RedisWatchStore, Clock, list[str]]:
    """An empty Redis, and ``watches`` hourly demo watches due at once."""
    await Redis.from_url(url).flushdb()
    store, clock = RedisWatchStore(url, home), Clock()
    options = WatchOptions(demo=True)
    ids = [store.add(f"Does drug {n} work?", every="1h", options=options, now=clock.now).id for n in range(watches)]
    return settings_for(url, home), store, clock, ids


async def rounds(url: str, root: Path, watches: int, count: int) -> dict[str, float]:
    settings, store, clock, ids = await fresh(url, root / f"home-{watches}-{count}", watches)

    def recorded(runs: int) -> bool:
        return all(len(store.history(watch_id)) >= runs for watch_id in ids)

    async with AsyncExitStack() as stack:
        await workers(settings, url, count, clock, stack)
        first = await until(lambda: recorded(1), "the first runs")
        clock.now += timedelta(hours=1)
        second = await until(lambda: recorded(2), "the second runs")
    counts = [len(store.history(watch_id)) for watch_id in ids]
    store.close()
    return {"first": first, "second": second, "runs": sum(counts), "extra": sum(c - 2 for c in counts)}


async def kill_measure(url: str, root: Path) -> float:
    home = root / "home-kill"
    settings, store, clock, ids = await fresh(url, home, 5)
    keep = {"PATH", "HOME", "LANG", "TMPDIR", "VIRTUAL_ENV", "HF_HOME", "PYTHONPATH"}
    env = {k: v for k, v in os.environ.items() if k in keep} | {
        "DEEPCRITICAL_HOME": str(home), "DEEPCRITICAL_QUEUE_URL": url, "DEEPCRITICAL_QUEUE_HEARTBEAT": "3",
        HOLD_VARIABLE: "start", "NO_COLOR": "1",
    }  # fmt: skip
    doomed = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "deepcritical", "worker", "--demo", env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        redis = Redis.from_url(url)
        queue = saq_queue(redis)
        await queue.connect()
        await enqueue_due(queue, store, settings, clock.now)  # what a server does for a watch added on the page
        pattern = str(home / "watches" / "*" / "runs" / "*" / "held")
        await until(lambda: bool(glob.glob(pattern)), "the hold")
        held_watch = Path(glob.glob(pattern)[0]).parent.parent.parent.name
        async with AsyncExitStack() as stack:
            await workers(settings, url, 2, clock, stack)
            os.kill(doomed.pid, signal.SIGKILL)
            await doomed.wait()
            seconds = await until(lambda: len(store.history(held_watch)) == 1, "the killed run's record")
            await until(lambda: all(store.history(watch_id) for watch_id in ids), "every first run")
        await queue.disconnect()
        await redis.aclose()
    finally:
        if doomed.returncode is None:
            doomed.kill()
            await doomed.wait()
        store.close()
    return seconds


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--watches", default="20,200")
    parser.add_argument("--workers", default="1,3")
    args = parser.parse_args()
    configure_logging(verbose=False)
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = await asyncio.create_subprocess_exec(
            "redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no",
            stdout=subprocess.DEVNULL, cwd=tmp,
        )  # fmt: skip
        url = f"redis://127.0.0.1:{port}/0"
        try:
            while True:
                try:
                    await Redis.from_url(url).ping()
                    break
                except RedisError:  # not listening yet
                    await asyncio.sleep(0.05)
            print(f"{'watches':>8} {'workers':>8} {'first s':>8} {'second s':>9} {'runs':>6} {'extra':>6}")
            for watches in map(int, args.watches.split(",")):
                for count in map(int, args.workers.split(",")):
                    figures = await rounds(url, Path(tmp), watches, count)
                    print(
                        f"{watches:>8} {count:>8} {figures['first']:>8.1f} {figures['second']:>9.1f} "
                        f"{int(figures['runs']):>6} {int(figures['extra']):>6}"
                    )
            seconds = await kill_measure(url, Path(tmp))
            print(f"killed worker: its watch run recorded by another worker {seconds:.1f} s after the SIGKILL")
        finally:
            server.terminate()
            await server.wait()


if __name__ == "__main__":
    asyncio.run(main())
