"""The embedded store shared by concurrent processes, and the library as a whole: retention at start,
pruning (killed runs' collections included), listing and export. Embeddings are a deterministic fake
here (vectors from a hash), so only the store is under test and no model is loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from deepcritical.evidence import chroma, library
from helpers.servers import kill
from helpers.stores import HashEmbeddings, make_collection, make_evidence, names, open_hash_store, settings_for

# One process of a concurrent run, as far as the store sees it: its own run collection, the shared
# library, writes and reads interleaved with the other processes'.
WORKER = """
import asyncio, json, sys
sys.path[:0] = {paths!r}
from helpers.stores import make_evidence, open_hash_store

async def main(worker, home):
    store = await open_hash_store(home, f"worker-{{worker}}")
    for batch in range(8):
        # Some items are this worker's own, some are found by every worker (the library merges them).
        own = [(f"{{worker}}{{batch}}{{k}}", f"finding {{worker}}-{{batch}}-{{k}} on statins") for k in range(4)]
        items = [make_evidence(key, text) for key, text in own]
        items += [make_evidence(f"9{{batch}}", f"a finding every worker sees, number {{batch}}")]
        kept = (await store.deduplicate(items)).kept
        await store.add(kept)
        await store.related("statins", exclude_ids=[], n=3)
        await store.search_similar("statins in sepsis", n=3)
    print(json.dumps({{"count": await store.count(), "ids": sorted(item.id for item in await store.all())}}))
    await store.close()

asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
"""


@pytest.mark.slow
def test_concurrent_processes_on_one_home_all_succeed_and_lose_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    here = Path(__file__).parents[1]  # tests/, for helpers
    script = WORKER.format(paths=[str(here)])
    env = {key: value for key, value in os.environ.items() if key not in {"CHROMA_HOST", "CHROMA_PORT"}}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(worker), str(home)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(1, 6)
    ]
    answers = []
    for process in workers:
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr[-3000:]
        answers.append(json.loads(stdout.strip().splitlines()[-1]))
    for worker, answer in enumerate(answers, start=1):
        own = {f"pmid:{worker}{batch}{k}" for batch in range(8) for k in range(4)}
        shared = {f"pmid:9{batch}" for batch in range(8)}
        assert set(answer["ids"]) == own | shared
        assert answer["count"] == len(own | shared)
    connection = chroma.connect(settings_for(home))
    try:
        sizes = {info.name: info.items for info in library.collections(connection)}
    finally:
        connection.close()
    assert sizes[chroma.LIBRARY_COLLECTION] == 5 * 32 + 8  # every worker's items, shared ones once


async def test_retention_at_start_drops_old_run_collections_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    now = datetime.now(UTC)
    make_collection(home, "run-research-old", created=now - timedelta(days=40))
    make_collection(home, "run-research-20200101-120000-abcdef", created=None)  # dated by its run id
    make_collection(home, "run-research-recent", created=now - timedelta(days=2))
    make_collection(home, "run-undated", created=None)  # age unknown: left alone
    store = await open_hash_store(home, "new-run", DEEPCRITICAL_RETENTION="30d")
    await store.add([make_evidence("1", "statins")])
    await store.close()
    assert names(home) == {"run-research-recent", "run-undated", "run-new-run", chroma.LIBRARY_COLLECTION}


async def test_retention_never_keeps_everything(tmp_path: Path) -> None:
    home = tmp_path / "home"
    make_collection(home, "run-research-old", created=datetime.now(UTC) - timedelta(days=400))
    await (await open_hash_store(home, "new-run", DEEPCRITICAL_RETENTION="never")).close()
    assert "run-research-old" in names(home)


KILLED = """
import signal, sys
import numpy as np
sys.path[:0] = {paths!r}
from helpers.stores import make_evidence, settings_for
from deepcritical.evidence import chroma

connection = chroma.connect(settings_for(sys.argv[1]))
chroma.open_collection(connection, "run-killed-mid-run", "hash-embeddings-for-tests", run=True)
with connection.session(touches=("run-killed-mid-run",), writes=True) as session:
    vectors = np.ones((1, 64), np.float32)
    chroma.upsert(session.collection("run-killed-mid-run"), 100, [make_evidence("1", "x")], vectors)
    print("holding the lock", flush=True)
    signal.pause()  # holds the lock until the test kills it
"""


@pytest.mark.slow
def test_a_run_killed_holding_the_store_leaves_an_orphan_that_prune_removes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    script = KILLED.format(paths=[str(Path(__file__).parents[1])])
    process = subprocess.Popen([sys.executable, "-c", script, str(home)], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "holding the lock"
    finally:
        kill(process)  # killed in the middle of a store operation
    # The lock died with the process: the store opens at once, and the orphan is pruned like any run
    # (its collection was open, but the process holding it is gone).
    assert "run-killed-mid-run" in names(home)
    connection = chroma.connect(settings_for(home))
    try:
        removed = library.prune(connection, timedelta(hours=1), now=datetime.now(UTC) + timedelta(hours=2))
    finally:
        connection.close()
    assert [info.name for info in removed] == ["run-killed-mid-run"]
    assert names(home) == set()


async def test_prune_keeps_the_libraries_and_the_run_asked_to_keep(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = await open_hash_store(home, "current")
    await store.add([make_evidence("1", "statins")])
    await store.close()
    connection = chroma.connect(settings_for(home))
    try:
        later = datetime.now(UTC) + timedelta(days=365)
        assert library.prune(connection, timedelta(days=1), keep="run-current", now=later) == []
        assert [info.name for info in library.prune(connection, timedelta(days=1), now=later)] == ["run-current"]
    finally:
        connection.close()
    assert names(home) == {chroma.LIBRARY_COLLECTION}


async def test_a_running_runs_collection_is_never_pruned_however_old(tmp_path: Path) -> None:
    """``library prune`` once deleted the collections of two running runs; a run's collection is open
    while its process lives, and only its close (or its process's death) makes it prunable."""
    home = tmp_path / "home"
    running = await open_hash_store(home, "running")
    await running.add([make_evidence("1", "statins")])
    later = datetime.now(UTC) + timedelta(days=365)
    connection = chroma.connect(settings_for(home))
    try:
        assert library.prune(connection, timedelta(hours=1), now=later) == []
        [info] = [info for info in library.collections(connection) if info.is_run]
        assert info.open_by == chroma.this_process()
    finally:
        connection.close()
    await running.close()
    connection = chroma.connect(settings_for(home))
    try:
        assert [info.name for info in library.prune(connection, timedelta(hours=1), now=later)] == ["run-running"]
    finally:
        connection.close()


def test_a_collection_held_open_on_another_machine_is_kept_for_a_day() -> None:
    now = datetime.now(UTC)
    elsewhere = library.CollectionInfo("run-x", now - timedelta(hours=5), 3, open_by="other-host:1")
    assert library.is_open(elsewhere, now)
    assert not library.is_open(elsewhere, now + library.OPEN_ELSEWHERE_FOR)


@pytest.mark.parametrize("age", [timedelta(0), timedelta(seconds=1), timedelta(minutes=59)])
def test_prune_refuses_an_age_below_the_retention_floor(tmp_path: Path, age: timedelta) -> None:
    connection = chroma.connect(settings_for(tmp_path / "home"))
    try:
        with pytest.raises(ValueError, match="at least 1h"):
            library.prune(connection, age)
    finally:
        connection.close()


async def test_export_pages_through_every_item(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    items = [make_evidence(str(n), f"finding number {n}") for n in range(1, 8)]
    store = await open_hash_store(home, "exported")
    await store.add(items)
    await store.close()
    monkeypatch.setattr(library, "EXPORT_PAGE", 3)
    connection = chroma.connect(settings_for(home))
    try:
        exported = list(library.export(connection, chroma.LIBRARY_COLLECTION))
        stats = library.stats(connection)
    finally:
        connection.close()
    assert sorted(item.id for item in exported) == sorted(item.id for item in items)
    assert [info.name for info in stats.runs] == ["run-exported"]
    assert stats.run_items == 7
    assert (stats.disk_bytes or 0) > 0


def test_created_times_come_from_the_record_or_the_run_id() -> None:
    recorded = library.created_at("run-x", {chroma.CREATED_KEY: "2024-05-01T10:00:00+00:00"})
    assert recorded == datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert library.created_at("run-search-20240501-100000-abc123", None) == datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert library.created_at("run-something", {chroma.CREATED_KEY: "garbage"}) is None


async def test_two_stores_in_one_process_share_the_directory_and_close_independently(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first, second = await open_hash_store(home, "one"), await open_hash_store(home, "two")
    await first.add([make_evidence("1", "statins")])
    await first.close()
    await second.add([make_evidence("2", "metformin")])
    related = await second.related("statins", exclude_ids=[], n=5)
    assert {scored.evidence.id for scored in related} == {"pmid:1", "pmid:2"}
    await second.close()


def dead_owner() -> str:
    """``host:pid`` of a process that has ended: a killed run's owner."""
    process = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return f"{chroma.this_process().rpartition(':')[0]}:{process.stdout.strip()}"


@pytest.mark.parametrize("how", ["killed", "interrupted"])
async def test_a_resumed_runs_collection_is_never_pruned(tmp_path: Path, how: str) -> None:
    """``--resume`` reopens the killed (or interrupted and closed) run's collection: it is this process's
    now, so neither ``library prune`` nor another run's start-up retention takes it while the run goes on."""
    home = tmp_path / "home"
    name = chroma.run_collection_name("20240101-000000-resumed")
    old = datetime.now(UTC) - timedelta(days=2)
    metadata = {chroma.MODEL_KEY: HashEmbeddings.model_name, chroma.CREATED_KEY: old.isoformat()}
    metadata[chroma.OPEN_BY_KEY] = dead_owner()
    if how == "interrupted":
        metadata[chroma.CLOSED_KEY] = old.isoformat()
    connection = chroma.connect(settings_for(home))
    try:
        with connection.session(touches=(name,), writes=True) as session:
            session.client.get_or_create_collection(name, metadata=metadata, embedding_function=None)
    finally:
        connection.close()
    resumed = await open_hash_store(home, "20240101-000000-resumed")
    try:
        await resumed.add([make_evidence("1", "statins")])
        other = await open_hash_store(home, "another-run", DEEPCRITICAL_RETENTION="1h")  # its start-up retention
        await other.close()
        connection = chroma.connect(settings_for(home))
        try:
            assert library.prune(connection, timedelta(hours=1)) == []
            [info] = [info for info in library.collections(connection) if info.name == name]
            assert info.open_by == chroma.this_process()
        finally:
            connection.close()
        assert len(await resumed.search("statins", n=1)) == 1  # still there for the run
    finally:
        await resumed.close()
    connection = chroma.connect(settings_for(home))
    try:  # once the resumed run ends, its collection is old and closed: prunable as ever
        assert name in {info.name for info in library.prune(connection, timedelta(hours=1))}
    finally:
        connection.close()
