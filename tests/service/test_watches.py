"""The watches database: what a watch keeps, when it is due, its history, its migrations and the inputs
it refuses (each with one line naming the problem)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from deepcritical.errors import ConfigError
from deepcritical.service.watches import (
    WatchError,
    WatchNotFoundError,
    WatchOptions,
    WatchRun,
    parse_interval,
)
from deepcritical.service.watches_schema import MIGRATIONS, SCHEMA_VERSION, migrate
from deepcritical.service.watches_sqlite import WatchStore

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


def test_a_watch_keeps_its_question_options_and_webhook_and_is_due_at_once(tmp_path: Path) -> None:
    store = WatchStore(tmp_path / "watches.sqlite")
    options = WatchOptions(sources=["pubmed", "europepmc"], collection="papers", model="openai:gpt-4o", no_llm=True)
    added = store.add(
        "  Does aspirin\treduce stroke?  ", every="2w", options=options, webhook="https://hooks.example/x", now=T0
    )
    again = WatchStore(tmp_path / "watches.sqlite").get(added.id)  # a second opener reads what the first wrote
    assert again.question == "Does aspirin reduce stroke?"
    assert again.interval == timedelta(weeks=2)
    assert again.options == options
    assert again.webhook == "https://hooks.example/x"
    assert again.next_due == T0
    assert again.last_run is None
    assert [watch.id for watch in store.due(T0)] == [added.id]
    # Never run, it is due whatever the clock says: a demo clock set before the day it was added.
    assert again.due(T0 - timedelta(days=200))
    store.record_run(
        added.id,
        WatchRun(run_at=T0, folder="/f", verdict=None, confidence=None, counted=0, changed=False),
        next_due=T0 + timedelta(weeks=2),
    )
    assert not store.get(added.id).due(T0)


def test_a_recorded_run_becomes_the_last_run_and_moves_the_next_due_time(tmp_path: Path) -> None:
    store = WatchStore(tmp_path / "watches.sqlite")
    watch = store.add("Does aspirin reduce stroke?", every="7d", now=T0)
    first = WatchRun(run_at=T0, folder="/f/1", verdict="yes", confidence=0.6, counted=4, changed=False)
    later = T0 + timedelta(days=7)
    second = WatchRun(
        run_at=later, folder="/f/2", verdict="no", confidence=0.7, counted=5, changed=True, summary=["new: a trial"]
    )
    store.record_run(watch.id, first, next_due=T0 + timedelta(days=7))
    store.record_run(watch.id, second, next_due=later + timedelta(days=7))
    assert store.history(watch.id) == [first, second]
    assert store.get(watch.id).last_run == second
    assert store.due(later + timedelta(days=6)) == []
    assert [w.id for w in store.due(later + timedelta(days=7))] == [watch.id]


def test_removing_a_watch_removes_its_history_and_an_unknown_id_is_an_error(tmp_path: Path) -> None:
    store = WatchStore(tmp_path / "watches.sqlite")
    watch = store.add("Does aspirin reduce stroke?", now=T0)
    store.record_run(
        watch.id, WatchRun(run_at=T0, folder="/f", verdict=None, confidence=None, counted=0, changed=False), T0
    )
    store.remove(watch.id)
    assert store.watches() == []
    with pytest.raises(WatchNotFoundError, match="w-nope"):
        store.remove("w-nope")
    with pytest.raises(WatchNotFoundError):
        store.history(watch.id)
    with sqlite3.connect(tmp_path / "watches.sqlite") as connection:
        assert connection.execute("SELECT COUNT(*) FROM watch_runs").fetchone() == (0,)


@pytest.mark.parametrize(
    ("every", "problem"),
    [
        ("7x", "expected a duration"),
        ("30m", "at most once an hour"),
        ("never", "at most once an hour"),
        ("", "duration"),
    ],
)
def test_an_invalid_interval_is_refused_naming_the_flag(every: str, problem: str) -> None:
    with pytest.raises(WatchError, match=problem) as caught:
        parse_interval(every)
    assert caught.value.field == "every"
    assert str(caught.value).startswith("every ")  # as the API and MCP take it
    assert caught.value.on_command_line.startswith("--every ")  # as the command line does


@pytest.mark.parametrize("url", ["ftp://example.org/hook", "file:///etc/passwd", "javascript:alert(1)", "https://"])
def test_a_webhook_that_is_not_http_is_refused(tmp_path: Path, url: str) -> None:
    with pytest.raises(WatchError, match=r"^webhook ") as caught:
        WatchStore(tmp_path / "w.sqlite").add("Does aspirin reduce stroke?", webhook=url, now=T0)
    assert caught.value.field == "webhook"
    assert caught.value.on_command_line.startswith("--webhook ")


@pytest.mark.parametrize("question", ["", "   ", "\t\n"])
def test_an_empty_question_is_refused(tmp_path: Path, question: str) -> None:
    store = WatchStore(tmp_path / "w.sqlite")
    with pytest.raises(WatchError, match="empty"):
        store.add(question, now=T0)
    assert store.watches() == []


def test_a_version_1_database_is_migrated_and_keeps_its_watches(tmp_path: Path) -> None:
    path = tmp_path / "watches.sqlite"
    with sqlite3.connect(path) as connection:  # what the first release wrote: step 1 only
        connection.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        connection.execute("INSERT INTO schema_version VALUES (1)")
        connection.executescript(MIGRATIONS[0])
        connection.execute(
            "INSERT INTO watches VALUES ('w-old', 'Does aspirin reduce stroke?', 86400, '{}', NULL, ?, ?)",
            (T0.isoformat(), T0.isoformat()),
        )
    store = WatchStore(path)
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT version FROM schema_version").fetchone() == (SCHEMA_VERSION,)
    assert store.get("w-old").question == "Does aspirin reduce stroke?"
    store.record_run(
        "w-old", WatchRun(run_at=T0, folder="/f", verdict="yes", confidence=0.5, counted=1, changed=False), T0
    )
    assert [run.verdict for run in store.history("w-old")] == ["yes"]


def test_migrating_twice_changes_nothing_and_a_newer_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "watches.sqlite"
    WatchStore(path)
    with sqlite3.connect(path) as connection:
        assert migrate(connection) == SCHEMA_VERSION
        connection.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(ConfigError, match="newer"):
        WatchStore(path)


def test_of_two_schedulers_that_read_the_same_due_watch_one_claims_it(tmp_path: Path) -> None:
    store = WatchStore(tmp_path / "watches.sqlite")
    watch = store.add("Does aspirin reduce stroke?", every="1d", now=T0)
    seen_by_first, seen_by_second = store.due(T0), WatchStore(tmp_path / "watches.sqlite").due(T0)
    assert store.claim(seen_by_first[0], T0)
    assert not store.claim(seen_by_second[0], T0)  # read before the first claimed it: skipped
    assert store.get(watch.id).next_due == T0 + timedelta(days=1)
    assert store.due(T0) == []
    assert store.claim(store.due(T0 + timedelta(days=1))[0], T0 + timedelta(days=1))  # the next due time


def test_a_version_2_database_gains_each_runs_split_and_share_and_keeps_its_history(tmp_path: Path) -> None:
    """Runs recorded before a run kept how to read its confidence read back as they were: no share, no split."""
    path = tmp_path / "watches.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        connection.execute("INSERT INTO schema_version VALUES (2)")
        connection.executescript(MIGRATIONS[0] + MIGRATIONS[1])
        connection.execute(
            "INSERT INTO watches VALUES ('w-old', 'Does aspirin reduce stroke?', 86400, '{}', NULL, ?, ?)",
            (T0.isoformat(), T0.isoformat()),
        )
        connection.execute(
            "INSERT INTO watch_runs VALUES ('w-old', ?, '/f', 'maybe', 0.9, 3, 0, '[]')", (T0.isoformat(),)
        )
    [run] = WatchStore(path).history("w-old")
    assert (run.verdict, run.confidence, run.confidence_is_split, run.favourable_share) == ("maybe", 0.9, False, None)
    assert run.verdict_text == "maybe (confidence 0.90)"
