"""The two places watches are kept keep them alike: ``WatchStore`` (SQLite, one machine) and
``RedisWatchStore`` (a team's Redis, a real ``redis-server`` on loopback). And the team's scheduling rules
that need no workers: a due time run once is not run again, a removed watch's job does nothing, a run that
killed its worker every time is recorded as failed, a watch left unrun for long runs once."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from redis import Redis

from deepcritical.config import Settings
from deepcritical.errors import ConfigError
from deepcritical.models import Evidence
from deepcritical.run.execute import RunSourceFactory
from deepcritical.run.request import RunRequest
from deepcritical.run.store import Lease, RunStore, new_owner_token
from deepcritical.service.queue import Attempt
from deepcritical.service.watch_run import unfinished_run
from deepcritical.service.watch_schedule import ScheduledWatch, WatchJobs, next_after
from deepcritical.service.watches import (
    WatchDamagedError,
    WatchNotFoundError,
    WatchOptions,
    WatchRun,
    WatchStorage,
)
from deepcritical.service.watches_redis import PREFIX, RedisWatchStore
from deepcritical.service.watches_sqlite import WatchStore
from helpers.web_fakes import ScriptedRuns, offline_client

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[WatchStorage]:
    if request.param == "sqlite":
        yield WatchStore(tmp_path / "watches.sqlite")
        return
    redis = RedisWatchStore(request.getfixturevalue("redis_url"), tmp_path)
    yield redis
    redis.close()


def run_at(moment: datetime, folder: str = "/f", verdict: str | None = "yes") -> WatchRun:
    return WatchRun(run_at=moment, folder=folder, verdict=verdict, confidence=0.5, counted=1, changed=False)


def test_a_watch_reads_back_as_it_was_added(store: WatchStorage) -> None:
    options = WatchOptions(sources=["pubmed"], collection="papers", no_llm=True, demo=True)
    added = store.add(
        "  Does aspirin\treduce stroke?  ", every="2w", options=options, webhook="https://h.example/x", now=T0
    )
    again = store.get(added.id)
    assert again == added
    assert (again.question, again.interval, again.options) == (
        "Does aspirin reduce stroke?",
        timedelta(weeks=2),
        options,
    )
    assert [watch.id for watch in store.watches()] == [added.id]


def test_due_history_and_the_next_due_time(store: WatchStorage) -> None:
    later = store.add("Does zinc help?", every="1d", now=T0 + timedelta(hours=1))
    first = store.add("Does aspirin reduce stroke?", every="7d", now=T0)
    assert [watch.id for watch in store.due(T0 + timedelta(hours=1))] == [first.id, later.id]  # longest overdue first
    store.record_run(first.id, run_at(T0, "/f/1"), next_due=T0 + timedelta(days=7))
    store.record_run(first.id, run_at(T0 + timedelta(days=7), "/f/2", "no"), next_due=T0 + timedelta(days=14))
    assert [run.folder for run in store.history(first.id)] == ["/f/1", "/f/2"]
    assert store.get(first.id).last_run == run_at(T0 + timedelta(days=7), "/f/2", "no")
    assert [watch.id for watch in store.due(T0 + timedelta(days=13))] == [later.id]


def test_of_two_claims_of_one_due_time_one_wins(store: WatchStorage) -> None:
    watch = store.add("Does aspirin reduce stroke?", every="1d", now=T0)
    seen_first, seen_second = store.due(T0)[0], store.due(T0)[0]
    assert store.claim(seen_first, T0)
    assert not store.claim(seen_second, T0)
    assert store.get(watch.id).next_due == T0 + timedelta(days=1)


def test_a_removed_watch_is_gone_with_its_history_and_a_run_of_it_is_not_recorded(store: WatchStorage) -> None:
    watch = store.add("Does aspirin reduce stroke?", now=T0)
    store.record_run(watch.id, run_at(T0), T0 + timedelta(days=7))
    store.remove(watch.id)
    assert store.watches() == []
    with pytest.raises(WatchNotFoundError):
        store.history(watch.id)
    with pytest.raises(WatchNotFoundError):  # a run that ends after its watch was removed does not bring it back
        store.record_run(watch.id, run_at(T0 + timedelta(days=7)), T0 + timedelta(days=14))
    with pytest.raises(WatchNotFoundError, match="w-nope"):
        store.remove("w-nope")


def test_a_newer_layout_in_redis_is_refused(tmp_path: Path, redis_url: str) -> None:
    RedisWatchStore(redis_url, tmp_path).close()
    Redis.from_url(redis_url).set(PREFIX + "version", 2)
    with pytest.raises(ConfigError, match="newer"):
        RedisWatchStore(redis_url, tmp_path)


def test_an_unreachable_redis_is_one_line_naming_the_setting_not_the_password(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="DEEPCRITICAL_QUEUE_URL") as caught:
        RedisWatchStore("redis://:s3cret@127.0.0.1:1/0", tmp_path)
    assert "s3cret" not in str(caught.value)


def test_a_watch_left_unrun_for_several_intervals_is_due_once_on_its_beat() -> None:
    day = timedelta(days=1)
    assert next_after(T0, day, T0 + timedelta(minutes=1)) == T0 + day
    assert next_after(T0, day, T0 + 3 * day + timedelta(hours=1)) == T0 + 4 * day
    assert next_after(T0, day, T0 - day) == T0 + day  # a clock behind the due time: one interval on


def jobs(store: WatchStorage, tmp_path: Path) -> WatchJobs:
    settings = Settings(_env_file=None, DEMO_MODE=True, DEEPCRITICAL_HOME=str(tmp_path / "home"))  # type: ignore[call-arg]
    scripted = ScriptedRuns()

    def source(held: Sequence[Evidence], _resources: object) -> RunSourceFactory:
        return scripted

    return WatchJobs(store, settings, clock=lambda: T0, client_factory=offline_client, run_source=source)


async def test_a_due_time_is_run_once_however_often_its_job_is_delivered(tmp_path: Path) -> None:
    store = WatchStore(tmp_path / "watches.sqlite")
    watch = store.add("Does aspirin reduce stroke?", every="1d", now=T0 - timedelta(hours=1))
    team = jobs(store, tmp_path)
    due = ScheduledWatch(watch_id=watch.id, due=watch.next_due)
    assert await team.run(due, Attempt(number=1, allowed=3)) == "ran"
    # saq forgets a finished job's key: the same due time enqueued again (a late scan) runs nothing.
    assert await team.run(due, Attempt(number=1, allowed=3)) == "run already"
    assert len(store.history(watch.id)) == 1
    assert store.get(watch.id).next_due == watch.next_due + timedelta(days=1)
    store.remove(watch.id)
    assert await team.run(due, Attempt(number=1, allowed=3)) == "removed"


async def test_a_run_that_killed_its_worker_every_time_is_recorded_failed_and_waits_for_its_next_due_time(
    tmp_path: Path,
) -> None:
    store = WatchStore(tmp_path / "watches.sqlite")
    watch = store.add("Does aspirin reduce stroke?", every="1d", now=T0 - timedelta(hours=1))
    team = jobs(store, tmp_path)
    outcome = await team.run(ScheduledWatch(watch_id=watch.id, due=watch.next_due), Attempt(number=4, allowed=3))
    assert outcome == "failed"
    (recorded,) = store.history(watch.id)
    assert recorded.verdict is None
    assert "started 3 times" in recorded.summary[0]
    assert store.get(watch.id).next_due == watch.next_due + timedelta(days=1)


def test_an_unfinished_run_going_on_in_a_live_process_is_left_to_it_unless_the_caller_holds_the_due_time(
    tmp_path: Path,
) -> None:
    store = WatchStore(tmp_path / "watches.sqlite")
    watch = store.add("Does aspirin reduce stroke?", now=T0)
    folder = store.folder(watch.id) / "runs" / "watch-20260301-120000-abcdef"
    run = RunStore.create(folder)
    run.write_request(RunRequest(question=watch.question))  # started, no run.json: not finished
    run.take_lease(Lease.of_this_process(new_owner_token(), time.time()))  # this (live) process owns it
    assert unfinished_run(store, watch) is None  # a manual `watch run` does not take over a live run
    assert unfinished_run(store, watch, exclusive=True) == folder  # the queue's job for the due time does
    dead = 2**22 + 1  # above the largest process id Linux gives: no such process
    run.take_lease(Lease(pid=dead, host=socket.gethostname(), token="t", beat_at=time.time()))
    assert unfinished_run(store, watch) == folder  # its owner is dead: a killed run, resumed
    (folder / "run.json").write_text("{}", encoding="utf-8")
    assert unfinished_run(store, watch, exclusive=True) is None  # finished


def test_a_runs_split_confidence_and_favourable_share_read_back_as_the_report_words_them(store: WatchStorage) -> None:
    """The history of a maybe said "maybe (0.88)" then "maybe (0.70)", as if confidence were lost, while the
    favourable share had risen (0.562 to 0.649): each run keeps how to read its confidence and its share."""
    watch = store.add("Does vitamin D prevent depression?", now=T0)
    split = run_at(T0, verdict="maybe").model_copy(
        update={"confidence": 0.7, "confidence_is_split": True, "favourable_share": 0.649}
    )
    store.record_run(watch.id, split, T0 + timedelta(days=7))
    [again] = store.history(watch.id)
    assert (again.confidence_is_split, again.favourable_share) == (True, 0.649)
    assert (
        again.verdict_text == "maybe (the studies are divided: 0.70, where 1 is an even split; favourable share 0.649)"
    )
    assert store.get(watch.id).last_run == again
    assert run_at(T0).verdict_text == "yes (confidence 0.50)"
    assert run_at(T0, verdict="open").verdict_text == "open (no yes or no)"  # not "open (confidence 0.50)"


def damage(store: WatchStorage, watch_id: str, how: str) -> None:
    """A record as a hand edit or a broken disk leaves it."""
    if isinstance(store, WatchStore):
        import sqlite3

        column, value = {"options": ("options", "{not json"), "interval": ("interval_seconds", 10**18)}[how]
        with sqlite3.connect(store.path) as connection:
            connection.execute(f"UPDATE watches SET {column} = ? WHERE id = ?", (value, watch_id))
        return
    assert isinstance(store, RedisWatchStore)
    record = {"options": "{not json", "interval": '{"id": "' + watch_id + '", "interval": "P99999999999999D"}'}[how]
    store.redis.hset(PREFIX + "all", watch_id, record)


@pytest.mark.parametrize("how", ["options", "interval"])
def test_a_damaged_watch_is_named_and_left_out_and_the_others_go_on(store: WatchStorage, how: str) -> None:
    kept = store.add("Does aspirin reduce stroke?", every="7d", now=T0)
    broken = store.add("Does statin therapy reduce stroke?", every="7d", now=T0)
    damage(store, broken.id, how)
    assert [watch.id for watch in store.watches()] == [kept.id]
    assert [error.watch_id for error in store.damaged] == [broken.id]
    assert [watch.id for watch in store.due(T0)] == [kept.id]
    with pytest.raises(WatchDamagedError, match="cannot be read") as caught:
        store.get(broken.id)
    assert "\n" not in caught.value.message
    assert "deepcritical watch remove" in caught.value.on_command_line
    store.remove(broken.id)  # a damaged watch can still be removed
    assert [watch.id for watch in store.watches()] == [kept.id]
    assert store.damaged == ()
