"""What retention needs about every run collection, in a small SQLite table beside the store.

Retention once listed every collection and counted each one's items at every store open: about 16 ms of
CPU per collection, so a store with a month of runs made every run seconds slower. The index holds one
row per run collection: when it was created, when it was last used, and the process holding it open
(``host:pid``) until its run closes it. A retention pass reads only the rows older than the cutoff (one
indexed query), and runs at most once per ``PASS_INTERVAL`` (the index records when the last one ran).

SQLite rather than a collection of the store: a Chroma write holds the interpreter for tens of
milliseconds whatever its size, a row here costs well under one. For the embedded store the file sits
beside the store's directory; for a Chroma server, in the home (``chroma.connect`` chooses), so each
machine indexes the runs it started (a run on another machine is pruned by that machine's passes).

The index only nominates candidates: ``library.prune`` re-reads each candidate's own metadata before
deleting it, so a collection whose recorded owner is alive is kept whatever its row says.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

PASS_INTERVAL = timedelta(hours=1)
_TIMEOUT_SECONDS = 30.0
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS runs (name TEXT PRIMARY KEY, created REAL NOT NULL, last_used REAL NOT NULL,"
    " open_by TEXT NOT NULL DEFAULT '')",
    "CREATE INDEX IF NOT EXISTS runs_created ON runs (created)",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value REAL NOT NULL)",
)


@dataclass(frozen=True)
class Entry:
    """A run collection as the index records it."""

    name: str
    created: datetime


@contextlib.contextmanager
def _database(path: Path) -> Iterator[sqlite3.Connection]:
    """One transaction on the index (committed on success), closed afterwards."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=_TIMEOUT_SECONDS)
    try:
        with connection:
            for statement in _SCHEMA:
                connection.execute(statement)
            yield connection
    finally:
        connection.close()


def opened(path: Path, name: str, owner: str, now: datetime) -> None:
    """Record that ``owner`` (``host:pid``) holds the run collection ``name`` open from ``now``; a
    collection opened again (a resumed run) keeps its creation time."""
    with _database(path) as db:
        db.execute(
            "INSERT INTO runs (name, created, last_used, open_by) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET last_used = excluded.last_used, open_by = excluded.open_by",
            (name, now.timestamp(), now.timestamp(), owner),
        )


def closed(path: Path, name: str, now: datetime) -> None:
    """Record that the run of ``name`` closed it at ``now``."""
    with _database(path) as db:
        db.execute("UPDATE runs SET last_used = ?, open_by = '' WHERE name = ?", (now.timestamp(), name))


def forget(path: Path, names: Iterable[str]) -> None:
    """Drop the rows of deleted collections."""
    with _database(path) as db:
        db.executemany("DELETE FROM runs WHERE name = ?", [(name,) for name in names])


def older_than(path: Path, cutoff: datetime) -> list[Entry]:
    """The recorded run collections created before ``cutoff``, oldest first."""
    with _database(path) as db:
        rows = db.execute(
            "SELECT name, created FROM runs WHERE created < ? ORDER BY created, name", (cutoff.timestamp(),)
        ).fetchall()
    return [Entry(name, datetime.fromtimestamp(created, UTC)) for name, created in rows]


def seeded(path: Path) -> bool:
    """Whether the run collections made before the index existed are recorded."""
    with _database(path) as db:
        return db.execute("SELECT 1 FROM meta WHERE key = 'seeded'").fetchone() is not None


def seed(path: Path, runs: Iterable[tuple[str, datetime | None]]) -> None:
    """Record run collections made before the index (name, creation time; an unknown time is never
    pruned, so it is not recorded), once per index."""
    rows = [(name, created.timestamp(), created.timestamp()) for name, created in runs if created is not None]
    with _database(path) as db:
        db.executemany("INSERT OR IGNORE INTO runs (name, created, last_used) VALUES (?, ?, ?)", rows)
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('seeded', 1)")


def pass_due(path: Path, now: datetime) -> bool:
    """True when no retention pass ran in the last ``PASS_INTERVAL``."""
    with _database(path) as db:
        row = db.execute("SELECT value FROM meta WHERE key = 'last_pass'").fetchone()
    return row is None or now.timestamp() - float(row[0]) >= PASS_INTERVAL.total_seconds()


def passed(path: Path, now: datetime) -> None:
    """Record that a retention pass ran at ``now``."""
    with _database(path) as db:
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_pass', ?)", (now.timestamp(),))
