"""The team deployment against a real ``redis-server`` (and a real ``chroma run``) on loopback: progress
events reach every follower from any publisher; a worker killed with SIGKILL loses no run (another worker
resumes it from its checkpoint); a run that kills its worker every time ends as failed with the reason;
a cancel from another process stops the worker's run."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from saq import Job, Status
from saq.utils import now

from deepcritical.config import Settings
from deepcritical.run.checkpoint import HOLD_VARIABLE, read_checkpoint
from deepcritical.run.outcome import new_run_id
from deepcritical.run.request import RunRequest
from deepcritical.service.fanout import EventStream, stream_key
from deepcritical.service.queue import (
    JOB_FUNCTION,
    SWEPT,
    Attempt,
    QueuedRun,
    RunQueue,
    RunRedisQueue,
    saq_queue,
)
from deepcritical.service.team import TeamRunManager
from deepcritical.service.worker import QueuedRunExecutor
from deepcritical.web.app import create_app
from helpers.commands import environment
from helpers.servers import kill, stop
from helpers.web_fakes import KINDS, ScriptedRuns, offline_client, serving, sse_events

HOLD_DEADLINE = 300.0  # seconds; generous on a loaded two-core machine
QUESTION = "Can metformin be repurposed for Alzheimer's disease?"


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


async def test_events_reach_every_follower_numbered_across_publishers(redis_url: str) -> None:
    publishers = [EventStream(Redis.from_url(redis_url)) for _ in range(2)]
    followers = [EventStream(Redis.from_url(redis_url)) for _ in range(2)]
    run_id = new_run_id()

    async def collect(stream: EventStream, after: int) -> list[tuple[int, str]]:
        return [(number, data["kind"]) async for number, data in stream.follow(run_id, after=after)]

    following = [asyncio.create_task(collect(follower, 0)) for follower in followers]
    numbers = [await publishers[0].publish(run_id, {"kind": "run_started"})]
    numbers.append(await publishers[0].publish(run_id, {"kind": "iteration_started"}))
    # The run redelivered to another worker: its events go on from the next number.
    numbers.append(await publishers[1].publish(run_id, {"kind": "run_warning"}))
    numbers.append(await publishers[1].publish(run_id, {"kind": "run_ended", "status": "finished"}))
    assert numbers == [1, 2, 3, 4]
    expected = [(1, "run_started"), (2, "iteration_started"), (3, "run_warning"), (4, "run_ended")]
    assert [await task for task in following] == [expected, expected]
    # Last-Event-ID: 2 on any server reads on from event 3.
    assert await collect(followers[1], 2) == expected[2:]
    assert await publishers[1].last_number(run_id) == 4
    for stream in [*publishers, *followers]:
        await stream.redis.aclose()


class Lists:
    """Where saq keeps a job besides its record: the queued and active lists and the incomplete set."""

    def __init__(self, queue: RunRedisQueue) -> None:
        self.queue = queue

    async def of(self, job: Job) -> tuple[bool, bool, bool]:
        redis, job_id = self.queue.redis, job.id.encode()
        queued = job_id in await redis.lrange(self.queue.namespace("queued"), 0, -1)
        active = job_id in await redis.lrange(self.queue.namespace("active"), 0, -1)
        incomplete = await redis.zscore(self.queue.namespace("incomplete"), job.id) is not None
        return queued, active, incomplete


async def sweep_now(queue: RunRedisQueue, abort: float = 0.2) -> list[str]:
    await queue.redis.delete(queue.namespace("sweep"))  # the lock that spaces sweeps: each test sweep runs
    return await queue.sweep(lock=60, abort=abort)


async def taken_job(queue: RunRedisQueue, key: str, *, heartbeat: int = 30, retries: int = 3) -> Job:
    """A job a worker took from the queue (moved to the active list) and has not marked active yet."""
    await queue.enqueue(Job(function=JOB_FUNCTION, key=key, heartbeat=heartbeat, retries=retries))
    job = await queue.dequeue(timeout=1)
    assert job is not None
    assert job.key == key
    return job


async def started(job: Job) -> None:
    """What a worker does next (``saq.Worker.process``): count the attempt and mark the job active."""
    job.started = now()
    job.attempts += 1
    await job.update(status=Status.ACTIVE)


async def lost(queue: RunRedisQueue, job: Job) -> None:
    """The job's worker is gone: its heartbeat is older than the job allows."""
    job.touched = now() - (job.heartbeat + 10) * 1000
    await queue.redis.set(job.id, queue.serialize(job))


async def test_a_sweep_leaves_a_job_that_a_worker_is_just_taking(redis: Redis) -> None:
    queue = saq_queue(redis)
    assert isinstance(queue, RunRedisQueue)
    job = await taken_job(queue, "just-taken")
    assert await sweep_now(queue) == []  # saq's own sweep aborts it here, and the job is then lost
    await started(job)
    stored = await queue.job(job.key)
    assert stored is not None
    assert stored.status == Status.ACTIVE
    assert await Lists(queue).of(job) == (False, True, True)
    assert await sweep_now(queue) == []


async def test_a_cancel_is_left_to_the_caller_to_record_unless_a_live_worker_holds_the_run(redis: Redis) -> None:
    runs = RunQueue(Settings(), redis)
    queue = runs.queue
    assert isinstance(queue, RunRedisQueue)
    beating = await taken_job(queue, "held-by-a-live-worker")
    await started(beating)
    assert await runs.cancel(beating.key, "cancelled by the user")  # the worker stops it and records the end
    waiting = await taken_job(queue, "waiting")
    assert not await runs.cancel(waiting.key, "cancelled by the user")  # no worker has it yet
    orphan = await taken_job(queue, "worker-died", heartbeat=1)
    await started(orphan)
    await lost(queue, orphan)
    assert not await runs.cancel(orphan.key, "cancelled by the user")  # nobody would ever record it
    for key in ("waiting", "worker-died"):
        stored = await queue.job(key)
        assert stored is not None
        assert stored.status in (Status.ABORTING, Status.ABORTED)  # never delivered again


async def test_a_job_whose_worker_died_while_taking_it_is_queued_again(redis: Redis) -> None:
    queue = saq_queue(redis)
    assert isinstance(queue, RunRedisQueue)
    job = await taken_job(queue, "taker-died")
    assert await sweep_now(queue) == []
    assert await queue.sweep(lock=60) == []  # another worker's sweep holds the lock: nothing read, nothing forgotten
    assert await sweep_now(queue) == [job.id]  # still not marked active a sweep later: its taker is gone
    assert await Lists(queue).of(job) == (True, False, True)
    stored = await queue.job(job.key)
    assert stored is not None
    assert stored.status == Status.QUEUED


async def test_a_job_whose_worker_is_lost_is_queued_again_even_when_its_sweeper_is_lost_too(redis: Redis) -> None:
    queue = saq_queue(redis)
    assert isinstance(queue, RunRedisQueue)
    job = await taken_job(queue, "worker-lost", heartbeat=1)
    await started(job)
    await lost(queue, job)
    # A sweeper that dies while it waits for the job to stop leaves the job where the next sweep finds it.
    sweeping = asyncio.create_task(sweep_now(queue, abort=30))
    while (stored := await queue.job(job.key)) is not None and stored.status != Status.ABORTING:  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    sweeping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sweeping
    assert await Lists(queue).of(job) == (False, True, True)  # still active and incomplete, marked aborting
    assert await sweep_now(queue) == [job.id]
    assert await Lists(queue).of(job) == (True, False, True)
    stored = await queue.job(job.key)
    assert stored is not None
    assert (stored.status, stored.error, stored.attempts) == (Status.QUEUED, SWEPT, 1)


async def test_a_lost_job_with_no_retries_left_ends_aborted(redis: Redis) -> None:
    queue = saq_queue(redis)
    assert isinstance(queue, RunRedisQueue)
    job = await taken_job(queue, "out-of-retries", heartbeat=1, retries=1)
    await started(job)
    await lost(queue, job)
    assert await sweep_now(queue) == [job.id]
    assert await Lists(queue).of(job) == (False, False, False)
    stored = await queue.job(job.key)
    assert stored is not None
    assert (stored.status, stored.error) == (Status.ABORTED, SWEPT)


async def test_a_finished_job_left_in_the_active_list_is_dropped_not_run_again(redis: Redis) -> None:
    queue = saq_queue(redis)
    assert isinstance(queue, RunRedisQueue)
    job = await taken_job(queue, "finished")
    await started(job)
    await queue.finish(job, Status.COMPLETE, result="done")
    await redis.rpush(queue.namespace("active"), job.id)  # as if a write had been lost in between
    assert await sweep_now(queue) == [job.id]
    assert await Lists(queue).of(job) == (False, False, False)
    stored = await queue.job(job.key)
    assert stored is not None
    assert stored.status == Status.COMPLETE


async def test_a_beating_job_is_not_swept(redis: Redis) -> None:
    queue = saq_queue(redis)
    assert isinstance(queue, RunRedisQueue)
    job = await taken_job(queue, "beating", heartbeat=30)
    await started(job)
    assert await sweep_now(queue) == []
    assert await Lists(queue).of(job) == (False, True, True)


def settings_for(redis_url: str, **values: Any) -> Settings:
    base = {"DEMO_MODE": True, "DEEPCRITICAL_QUEUE_URL": redis_url}
    return Settings(_env_file=None, **{**base, **values})  # type: ignore[arg-type]


class Team:
    """Worker processes sharing one home (the shared runs folder), one Redis and one Chroma server."""

    def __init__(self, tmp_path: Path, redis_url: str, chroma: tuple[str, int], *, attempts: int = 3) -> None:
        self.tmp_path, self.home = tmp_path, tmp_path / "home"
        self.env = {
            "DEEPCRITICAL_QUEUE_URL": redis_url,
            "DEEPCRITICAL_QUEUE_HEARTBEAT": "3",
            "DEEPCRITICAL_QUEUE_ATTEMPTS": str(attempts),
            "CHROMA_HOST": chroma[0],
            "CHROMA_PORT": str(chroma[1]),
        }
        self.settings = settings_for(redis_url, DEEPCRITICAL_QUEUE_HEARTBEAT=3, DEEPCRITICAL_QUEUE_ATTEMPTS=attempts)
        self.workers: list[subprocess.Popen[bytes]] = []

    def start_worker(self, *, hold: str | None = None) -> subprocess.Popen[bytes]:
        extra = {HOLD_VARIABLE: hold} if hold else {}
        with (self.tmp_path / f"worker-{len(self.workers)}.log").open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "deepcritical", "worker", "--demo"],
                env=environment(self.home, self.env | extra),
                cwd=self.tmp_path,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.workers.append(process)
        return process

    def folder(self, run_id: str) -> Path:
        return self.home / "runs" / run_id

    async def enqueue(self, redis: Redis) -> str:
        queue = RunQueue(self.settings, redis)
        run_id = new_run_id()
        await queue.enqueue(QueuedRun(run_id=run_id, request=RunRequest(question=QUESTION, max_iterations=2)))
        return run_id

    async def held(self, run_id: str, worker: subprocess.Popen[bytes]) -> None:
        """Until the worker reaches its hold in this run; a worker that exits first, or never gets there,
        fails the test (polled: the hold is a file another process writes)."""
        deadline = time.monotonic() + HOLD_DEADLINE
        while not (self.folder(run_id) / "held").exists():
            if worker.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the worker did not reach its hold: {self.logs()}")
            await asyncio.sleep(0.05)
        (self.folder(run_id) / "held").unlink()

    def logs(self) -> str:
        return "\n".join(path.read_text()[-3000:] for path in sorted(self.tmp_path.glob("worker-*.log")))

    def stop(self) -> None:
        for process in self.workers:
            stop(process)


@pytest.fixture
def team(tmp_path: Path, redis_url: str, chroma_server: tuple[str, int]) -> Iterator[Team]:
    crew = Team(tmp_path, redis_url, chroma_server)
    yield crew
    crew.stop()


# A run that is never delivered again must fail its test, not hang the suite.
ENDING_DEADLINE_SECONDS = 90


async def ending(redis: Redis, run_id: str) -> tuple[list[str], dict[str, Any]]:
    kinds: list[str] = []
    async with asyncio.timeout(ENDING_DEADLINE_SECONDS):
        async for _number, data in EventStream(redis).follow(run_id):
            kinds.append(str(data["kind"]))
            last = data
    return kinds, last


@pytest.mark.model
@pytest.mark.chroma_server
async def test_a_worker_killed_with_sigkill_loses_no_run(team: Team, redis: Redis) -> None:
    doomed = team.start_worker(hold="search:1")
    run_id = await team.enqueue(redis)
    await team.held(run_id, doomed)
    survivor = team.start_worker()
    kill(doomed)

    kinds, last = await ending(redis, run_id)
    assert last["status"] == "finished", team.logs()
    # Two deliveries: the killed one, and one that resumed it after its search (no second fresh start: the
    # first iteration is planned once, each of the two iterations once).
    assert kinds.count("run_started") == 2, kinds
    assert kinds.count("queries_planned") == 2, kinds
    assert kinds.count("report_written") == 1, kinds
    record = json.loads((team.folder(run_id) / "run.json").read_text(encoding="utf-8"))
    assert record["resumed"] is True
    status = json.loads((team.folder(run_id) / "status.json").read_text(encoding="utf-8"))
    assert status["status"] == "finished"
    assert [(step["stage"], step["iteration"]) for step in record["resumptions"]] == [("search", 1)]
    assert (team.folder(run_id) / "report.md").is_file()
    searched = [query for step in record["searches"] for query in step["queries"]]
    assert len(searched) == len({query.lower() for query in searched})  # no finished search sent again
    assert survivor.poll() is None


@pytest.mark.model
@pytest.mark.chroma_server
async def test_a_run_that_kills_its_worker_every_time_ends_as_failed_with_the_reason(
    tmp_path: Path, redis_url: str, chroma_server: tuple[str, int], redis: Redis
) -> None:
    team = Team(tmp_path, redis_url, chroma_server, attempts=1)
    try:
        doomed = team.start_worker(hold="search:1")
        run_id = await team.enqueue(redis)
        await team.held(run_id, doomed)
        team.start_worker()
        kill(doomed)
        _kinds, last = await ending(redis, run_id)
    finally:
        team.stop()
    assert last["status"] == "failed"
    assert "started 1 times" in last["error"]
    assert "after the search stage of iteration 1" in last["error"]
    assert not (team.folder(run_id) / "run.json").exists()
    assert read_checkpoint(team.folder(run_id)).stage == "search"  # what it had collected is kept


@pytest.mark.model
@pytest.mark.chroma_server
async def test_a_cancel_from_another_process_stops_the_workers_run(team: Team, redis: Redis) -> None:
    worker = team.start_worker(hold="plan:1")
    run_id = await team.enqueue(redis)
    await team.held(run_id, worker)
    assert await RunQueue(team.settings, redis).cancel(run_id, "cancelled by the user")
    _kinds, last = await ending(redis, run_id)
    assert (last["status"], last["error"]) == ("cancelled", "cancelled by the user")
    assert worker.poll() is None  # the worker goes on, ready for the next run


@pytest.mark.model
@pytest.mark.chroma_server
async def test_two_servers_and_a_worker_share_one_redis(team: Team, redis: Redis) -> None:
    """A run asked of one server is run by a worker; another server lists it and streams its events, and
    takes up the stream after a Last-Event-ID."""
    team.start_worker()
    settings = team.settings.model_copy(
        update={"home": team.home, "chroma_host": team.env["CHROMA_HOST"], "chroma_port": int(team.env["CHROMA_PORT"])}
    )
    async with serving(create_app(settings)) as first, serving(create_app(settings)) as second:
        response = await first.post("/api/runs", json={"question": QUESTION, "max_iterations": 1})
        assert response.status_code == 202, response.text
        run_id = response.json()["run_id"]
        listed = [run["run_id"] for run in (await second.get("/api/runs")).json()]
        assert run_id in listed
        events = sse_events((await second.get(f"/api/runs/{run_id}/events")).text)
        assert events[-1][1] == "run_ended"
        assert events[-1][2]["status"] == "finished", team.logs()
        assert [event_id for event_id, _, _ in events] == list(range(1, len(events) + 1))
        later = sse_events((await first.get(f"/api/runs/{run_id}/events", headers={"Last-Event-ID": "2"})).text)
        assert later == events[2:]
        view = (await second.get(f"/api/runs/{run_id}")).json()
        assert view["status"] == "finished"
        assert "report.md" in view["files"]


# --- The run folder is the record, the stream its mirror ---


def _folder_events(folder: Path) -> list[tuple[int, str]]:
    lines = (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [(event["id"], event["data"]["kind"]) for event in map(json.loads, lines)]


async def _followed(manager: TeamRunManager, run_id: str, after: int = 0) -> list[tuple[int, str]]:
    async with asyncio.timeout(ENDING_DEADLINE_SECONDS):  # a follower that never ends fails, not hangs
        return [(event.id, event.kind) async for event in manager.follow(run_id, after=after)]


async def test_a_worker_records_every_event_in_the_run_folder_and_a_lost_stream_is_followed_from_it(
    tmp_path: Path, redis_url: str, redis: Redis
) -> None:
    settings = settings_for(redis_url, DEEPCRITICAL_HOME=str(tmp_path / "home"))
    runs_dir = tmp_path / "home" / "runs"
    executor = QueuedRunExecutor(
        settings, EventStream(redis), runs_dir, client_factory=offline_client, run_source=ScriptedRuns()
    )
    run = QueuedRun(run_id=new_run_id(), request=RunRequest(question=QUESTION, max_iterations=1))
    await executor(run, Attempt(number=1, allowed=3))

    recorded = _folder_events(runs_dir / run.run_id)
    assert [kind for _, kind in recorded] == KINDS
    assert [number for number, _ in recorded] == list(range(1, len(KINDS) + 1))
    streamed = await EventStream(redis).events(run.run_id)
    assert [(number, data["kind"]) for number, data in streamed] == recorded  # the mirror has the same numbers

    await redis.delete(stream_key(run.run_id))  # the stream expired, or Redis restarted without it
    async with TeamRunManager(settings, runs_dir=runs_dir) as manager:
        assert await _followed(manager, run.run_id) == recorded
        assert await _followed(manager, run.run_id, after=2) == recorded[2:]  # Last-Event-ID: 2
        assert (await manager.wait(run.run_id)).status == "finished"


async def test_an_ended_run_without_a_stream_is_followed_to_its_end_not_waited_on_forever(
    tmp_path: Path, redis_url: str
) -> None:
    settings = settings_for(redis_url, DEEPCRITICAL_HOME=str(tmp_path / "home"))
    runs_dir = tmp_path / "home" / "runs"
    run_id = new_run_id()
    folder = runs_dir / run_id
    folder.mkdir(parents=True)
    (folder / "status.json").write_text(
        json.dumps(
            {
                "run_id": run_id,
                "question": QUESTION,
                "status": "finished",
                "demo": True,
                "max_iterations": 1,
                "sources": ["pubmed"],
                "created_at": "2026-01-01T00:00:00+00:00",
                "ended_at": "2026-01-01T00:01:00+00:00",
            }
        ),
        encoding="utf-8",
    )
    events = [{"kind": "run_started"}, {"kind": "run_ended", "status": "finished"}]
    (folder / "events.jsonl").write_text(
        "".join(json.dumps({"id": number, "data": data}) + "\n" for number, data in enumerate(events, start=1)),
        encoding="utf-8",
    )
    async with TeamRunManager(settings, runs_dir=runs_dir) as manager:
        assert await _followed(manager, run_id) == [(1, "run_started"), (2, "run_ended")]


async def test_a_huge_last_event_id_reads_nothing_and_raises_nothing(redis_url: str) -> None:
    """``Last-Event-ID: 99…9`` was a stream id Redis refuses, logged as a traceback by a team server."""
    stream = EventStream(Redis.from_url(redis_url))
    run_id = new_run_id()
    try:
        await stream.publish(run_id, {"kind": "run_started"})
        for after in (2**64 - 1, 2**64, 10**40):
            assert await stream.events(run_id, after=after) == []
        await stream.publish(run_id, {"kind": "run_ended", "status": "finished"})
        assert [number async for number, _ in stream.follow(run_id, after=0)] == [1, 2]
        following = stream.follow(run_id, after=10**40)
        with pytest.raises(TimeoutError):  # waits for events after it, and Redis takes the id
            await asyncio.wait_for(anext(following), timeout=0.5)
    finally:
        await stream.redis.aclose()
