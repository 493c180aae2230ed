"""Retention reads the run index (SQLite beside the store), not the store: a store with many run
collections starts as fast as a new one, the pass runs at most once an hour, and the index never
overrides a collection's own owner."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from chromadb.api.models.Collection import Collection
from chromadb.api.rust import RustBindingsAPI

from deepcritical.evidence import chroma, library, run_index
from helpers.stores import HashEmbeddings, make_collection, make_evidence, names, open_hash_store, settings_for

DAY = timedelta(days=1)


@pytest.fixture
def connection(tmp_path: Path) -> Iterator[chroma.Connection]:
    connected = chroma.connect(settings_for(tmp_path / "home"))
    yield connected
    connected.close()


def finished_run(connection: chroma.Connection, name: str) -> None:
    chroma.open_collection(connection, name, HashEmbeddings.model_name, run=True)
    chroma.close_run_collection(connection, name)


def test_a_pass_counts_only_its_candidates_and_lists_nothing(
    connection: chroma.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    for number in range(6):
        finished_run(connection, f"run-old-{number}")
    library.prune(connection, DAY)  # the first pass seeds the index (nothing to seed: all were indexed)
    calls: dict[str, int] = {"count": 0, "list": 0}
    real_count, real_list = Collection.count, RustBindingsAPI.list_collections

    def count(self: Collection) -> int:
        calls["count"] += 1
        return real_count(self)

    def listing(self: RustBindingsAPI, *args: Any, **kwargs: Any) -> Any:
        calls["list"] += 1
        return real_list(self, *args, **kwargs)

    monkeypatch.setattr(Collection, "count", count)
    monkeypatch.setattr(RustBindingsAPI, "list_collections", listing)
    assert library.prune(connection, DAY) == []  # all young
    assert calls == {"count": 0, "list": 0}
    later = datetime.now(UTC) + 2 * DAY
    removed = library.prune(connection, DAY, keep="run-old-0", now=later)
    assert sorted(info.name for info in removed) == [f"run-old-{number}" for number in range(1, 6)]
    assert calls == {"count": 5, "list": 0}  # the five removed, for the report of what went


def test_collections_made_before_the_index_are_seeded_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    make_collection(home, "run-research-old", created=datetime.now(UTC) - 40 * DAY)
    make_collection(home, "run-undated", created=None)
    connected = chroma.connect(settings_for(home))
    try:
        removed = library.prune(connected, 30 * DAY)
        assert run_index.seeded(connected.index_path)
    finally:
        connected.close()
    assert [info.name for info in removed] == ["run-research-old"]
    assert names(home) == {"run-undated"}


def test_the_pass_at_a_run_start_runs_at_most_once_an_hour(connection: chroma.Connection) -> None:
    finished_run(connection, "run-old")
    now = datetime.now(UTC) + 40 * DAY
    assert library.prune_if_due(connection, 30 * DAY, keep="run-new", now=now) is not None
    finished_run(connection, "run-old-2")
    later = now + 40 * DAY
    assert library.prune_if_due(connection, 30 * DAY, keep="run-new", now=now + timedelta(minutes=59)) is None
    due = library.prune_if_due(connection, 30 * DAY, keep="run-new", now=later)
    assert [info.name for info in due or []] == ["run-old-2"]


def test_the_owner_recorded_on_the_collection_wins_over_the_index(connection: chroma.Connection) -> None:
    """A live owner on the collection keeps it, whatever the index says (a resumed run, or a writer that
    recorded its owner on the collection alone)."""
    chroma.open_collection(connection, "run-live", HashEmbeddings.model_name, run=True)
    run_index.closed(connection.index_path, "run-live", datetime.now(UTC))  # the index alone says closed
    later = datetime.now(UTC) + 365 * DAY
    assert library.prune(connection, DAY, now=later) == []
    chroma.close_run_collection(connection, "run-live")
    assert [info.name for info in library.prune(connection, DAY, now=later)] == ["run-live"]


def test_a_resumed_run_keeps_its_creation_time(connection: chroma.Connection) -> None:
    finished_run(connection, "run-resumed")
    later = datetime.now(UTC) + 2 * DAY
    run_index.opened(connection.index_path, "run-resumed", chroma.this_process(), later)
    [entry] = run_index.older_than(connection.index_path, later)
    assert entry.name == "run-resumed"
    assert later - entry.created > DAY


def test_a_record_of_a_collection_deleted_elsewhere_is_forgotten(connection: chroma.Connection) -> None:
    finished_run(connection, "run-gone")
    with connection.session(touches=("run-gone",), writes=True) as session:
        session.delete("run-gone")
    later = datetime.now(UTC) + 2 * DAY
    assert library.prune(connection, DAY, now=later) == []
    assert run_index.older_than(connection.index_path, later) == []


async def test_full_text_lookups_of_a_missing_collection_list_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await open_hash_store(tmp_path / "home", "reader")

    def listing(self: RustBindingsAPI, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a full-text lookup listed the store")

    monkeypatch.setattr(RustBindingsAPI, "list_collections", listing)
    cache = store.full_text_cache("missing", lambda document: make_evidence("2", "x").grade)
    assert await cache.full_text("PMC1") == []
    await store.close()
