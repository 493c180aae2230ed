"""Team scheduling of watches on a real ``redis-server`` (loopback, free port, stopped by pid): two servers
take 20 watches, the queue's own scheduling (saq's cron and job keys) runs each once per due time on three
workers, and a ``deepcritical worker`` process killed with SIGKILL mid-run loses no watch run: its run is
delivered again and continues in the folder the killed worker left. Counted from the run records."""

from __future__ import annotations

import asyncio
import glob
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from redis.asyncio import Redis
from saq import Queue, Status

from deepcritical.config import Settings
from deepcritical.models import Evidence
from deepcritical.run.checkpoint import HOLD_VARIABLE
from deepcritical.run.execute import RunSourceFactory
from deepcritical.service.fanout import EventStream
from deepcritical.service.queue import build_worker, saq_queue
from deepcritical.service.watch_schedule import WatchJobs, job_key
from deepcritical.service.watches import WatchRun
from deepcritical.service.watches_redis import RedisWatchStore
from deepcritical.service.worker import QueuedRunExecutor
from deepcritical.web.app import create_app
from helpers.commands import environment, run_cli
from helpers.servers import kill, stop
from helpers.web_fakes import ScriptedRuns, serving

pytestmark = pytest.mark.slow  # every test here runs the command in a child process

WATCHES = 20
WORKERS = 3
DEADLINE_SECONDS = 240.0  # a killed worker's job is swept and delivered again within ~20 s; a loaded machine
EVERY = "1h"
EMPTY_EFETCH = b"<?xml version='1.0'?><PubmedArticleSet></PubmedArticleSet>"


class Clock:
    """The workers' clock: the test moves it past the next due time instead of waiting an hour."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC) + timedelta(minutes=1)

    def __call__(self) -> datetime:
        return self.now


class CountedJobs(WatchJobs):
    """A worker's watch jobs, counting the cron's scans for due watches (so the test can wait for more)."""

    scans = 0

    async def schedule(self, queue: Queue) -> list[str]:
        enqueued = await super().schedule(queue)
        CountedJobs.scans += 1
        return enqueued


def pubmed_answering_nothing(settings: Settings) -> httpx2.AsyncClient:
    """The re-check of held PMIDs meets a PubMed that knows none of them (the scripted runs make no request)."""
    return httpx2.AsyncClient(
        transport=httpx2.MockTransport(lambda request: httpx2.Response(200, content=EMPTY_EFETCH))
    )


def team_settings(url: str, home: Path) -> Settings:
    values = {
        "DEMO_MODE": True,
        "DEEPCRITICAL_QUEUE_URL": url,
        "DEEPCRITICAL_HOME": str(home),
        "DEEPCRITICAL_QUEUE_HEARTBEAT": 3,
        "DEEPCRITICAL_QUEUE_ATTEMPTS": 3,
    }
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


async def until(condition: Callable[[], bool], what: str, *, logs: Callable[[], str] = str) -> None:
    """Polls ``condition`` until it holds; fails naming ``what`` after the deadline."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}\n{logs()}")
        await asyncio.sleep(0.05)


def runs_of(store: RedisWatchStore, ids: Sequence[str]) -> dict[str, list[WatchRun]]:
    return {watch_id: store.history(watch_id) for watch_id in ids}


async def in_process_workers(
    settings: Settings, url: str, clock: Clock, stack: AsyncExitStack, scripted: ScriptedRuns
) -> list[RedisWatchStore]:
    """Three saq workers in this process, each with its own Redis connections and watch store."""

    def source(held: Sequence[Evidence], _resources: object) -> RunSourceFactory:
        return scripted

    stores = []
    for _ in range(WORKERS):
        redis = Redis.from_url(url)
        stack.push_async_callback(redis.aclose)
        store = RedisWatchStore(url, settings.home)
        stack.callback(store.close)
        jobs = CountedJobs(
            store,
            settings,
            clock=clock,
            cron="* * * * * *",  # every second (croniter's sixth field): the test does not wait a minute
            client_factory=pubmed_answering_nothing,
            run_source=source,
        )
        executor = QueuedRunExecutor(settings, EventStream(redis))
        worker = build_worker(settings, redis, executor, concurrency=2, url=url, watches=jobs)
        task = asyncio.create_task(worker.start())

        async def stopped(worker: Any = worker, task: asyncio.Task[None] = task) -> None:
            await worker.stop()
            await asyncio.gather(task, return_exceptions=True)

        stack.push_async_callback(stopped)
        stores.append(store)
    return stores


@pytest.fixture
def doomed(tmp_path: Path, redis_url: str) -> Iterator[subprocess.Popen[bytes]]:
    """A real ``deepcritical worker`` that stops each watch run as it starts (the test hold), to be killed."""
    env = {"DEEPCRITICAL_QUEUE_URL": redis_url, "DEEPCRITICAL_QUEUE_HEARTBEAT": "3", HOLD_VARIABLE: "start"}
    with (tmp_path / "doomed.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "deepcritical", "worker", "--demo", "--concurrency", "1"],
            env=environment(tmp_path / "home", env),
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    yield process
    stop(process)


async def test_twenty_due_watches_run_once_per_due_time_on_three_workers_and_a_killed_run_resumes(
    tmp_path: Path,
    redis_url: str,
    doomed: subprocess.Popen[bytes],
) -> None:
    home = tmp_path / "home"
    settings = team_settings(redis_url, home)
    clock = Clock()
    scripted = ScriptedRuns()
    records = RedisWatchStore(redis_url, home)

    def logs() -> str:
        return (tmp_path / "doomed.log").read_text(errors="replace")[-3000:]

    # Two servers take ten watches each; each server queues a new watch's first run at once.
    async with serving(create_app(settings)) as first, serving(create_app(settings)) as second:
        ids = []
        for number in range(WATCHES):
            server = first if number % 2 else second
            response = await server.post("/api/watches", json={"question": f"Does drug {number} work?", "every": EVERY})
            assert response.status_code == 201, response.text
            ids.append(response.json()["id"])
        assert {view["id"] for view in (await second.get("/api/watches")).json()} == set(ids)

    # The only worker so far takes one watch's run and stops in it; then it is killed (SIGKILL).
    await until(lambda: bool(glob.glob(str(home / "watches" / "*" / "runs" / "*" / "held"))), "the hold", logs=logs)
    held = Path(glob.glob(str(home / "watches" / "*" / "runs" / "*" / "held"))[0]).parent
    held_watch = held.parent.parent.name
    async with AsyncExitStack() as stack:
        await in_process_workers(settings, redis_url, clock, stack, scripted)
        kill(doomed)

        # First due time: every watch runs once, the killed one included, on the surviving workers.
        await until(lambda: all(len(runs) == 1 for runs in runs_of(records, ids).values()), "the first runs", logs=logs)
        resumed = records.history(held_watch)[0]
        assert Path(resumed.folder) == held  # continued in the killed worker's folder, under its run id
        assert (held / "run.json").is_file()

        # Past the next due time: every watch runs once more; the scans that follow add nothing.
        clock.now += timedelta(hours=1)
        await until(lambda: all(len(runs) == 2 for runs in runs_of(records, ids).values()), "the second runs")
        scans = CountedJobs.scans
        await until(lambda: CountedJobs.scans >= scans + 3, "three more scans for due watches")
    history = runs_of(records, ids)
    assert sum(len(runs) for runs in history.values()) == 2 * WATCHES
    for watch_id, (first_run, second_run) in history.items():
        assert first_run.run_at < clock.now - timedelta(minutes=30) <= second_run.run_at  # one per due time
        assert records.get(watch_id).next_due > clock.now  # due again an interval on
    records.close()


def test_a_team_watch_added_from_the_command_line_is_kept_in_redis_and_queued_at_once(
    tmp_path: Path,
    redis_url: str,
) -> None:
    home, env = tmp_path / "home", {"DEEPCRITICAL_QUEUE_URL": redis_url}
    added = run_cli("watch", "add", "Does aspirin reduce stroke?", "--demo", "--every", "7d", home=home, env=env)
    assert added.returncode == 0, added.stderr
    found = re.search(r"w-[0-9a-f]{8}", added.stdout)
    assert found is not None
    store = RedisWatchStore(redis_url, home)
    watch = store.get(found[0])
    store.close()
    assert not (home / "watches.sqlite").exists()  # a team's watches are where its queue is

    async def queued() -> Status | None:
        redis = Redis.from_url(redis_url)
        job = await saq_queue(redis).job(job_key(watch.id, watch.next_due))
        await redis.aclose()
        return None if job is None else job.status

    assert asyncio.run(queued()) == Status.QUEUED  # not left for the next scan
    listed = run_cli("watch", "list", home=home, env=env)
    assert found[0] in listed.stdout
