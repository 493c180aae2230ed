"""The watches of one machine, kept in SQLite beside the evidence store (``$DEEPCRITICAL_HOME/watches.sqlite``).

The schema carries a version (``schema_version``) and grows by ``MIGRATIONS`` (``service.watches_schema``), a
list of SQL steps applied in order, each once, in one transaction with the version it brings: an older database
is brought up to date when it is opened, and a newer one (written by a later DeepCritical) is refused rather
than misread."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

from deepcritical.errors import ConfigError
from deepcritical.service.watches import (
    DAMAGE,
    Watch,
    WatchDamagedError,
    WatchNotFoundError,
    WatchOptions,
    WatchRun,
    WatchStorage,
    stamp,
)
from deepcritical.service.watches_schema import migrate

DATABASE_NAME = "watches.sqlite"


class WatchStore(WatchStorage):
    """The watches database. Every call opens its own short connection, so the command line, the server
    and a cron job can share the file (SQLite's own locking)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as connection:
                migrate(connection)
        except (sqlite3.Error, OSError) as error:
            raise ConfigError(f"cannot open the watches database {path}: {error}") from error

    @classmethod
    def at_home(cls, home: Path) -> WatchStore:
        return cls(home / DATABASE_NAME)

    def folder(self, watch_id: str) -> Path:
        """Where a watch's runs and its feed are written."""
        return self.path.parent / "watches" / watch_id

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        connection = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        connection.row_factory = sqlite3.Row
        try:
            connection.execute("PRAGMA foreign_keys = ON")
            yield connection
        finally:
            connection.close()

    def _insert(self, watch: Watch) -> None:
        with self._connect() as connection, connection:
            connection.execute(
                "INSERT INTO watches (id, question, interval_seconds, options, webhook, created, next_due) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    watch.id,
                    watch.question,
                    int(watch.interval.total_seconds()),
                    watch.options.model_dump_json(),
                    watch.webhook,
                    stamp(watch.created),
                    stamp(watch.next_due),
                ),
            )

    @staticmethod
    def _watch(row: sqlite3.Row, last: WatchRun | None) -> Watch:
        try:
            return Watch(
                id=row["id"],
                question=row["question"],
                interval=timedelta(seconds=row["interval_seconds"]),
                options=WatchOptions.model_validate_json(row["options"]),
                webhook=row["webhook"],
                created=datetime.fromisoformat(row["created"]),
                next_due=datetime.fromisoformat(row["next_due"]),
                last_run=last,
            )
        except DAMAGE as error:
            raise WatchDamagedError(str(row["id"]), str(error)) from None

    def get(self, watch_id: str) -> Watch:
        with self._connect() as connection:
            row = connection.execute("SELECT * FROM watches WHERE id = ?", (watch_id,)).fetchone()
            if row is None:
                raise WatchNotFoundError(watch_id)
            last = connection.execute(
                "SELECT * FROM watch_runs WHERE watch_id = ? ORDER BY run_at DESC LIMIT 1", (watch_id,)
            ).fetchone()
        return self._watch(row, self._read_run(watch_id, last) if last is not None else None)

    def watches(self) -> list[Watch]:
        with self._connect() as connection:
            rows = connection.execute("SELECT id FROM watches ORDER BY created, id").fetchall()
        return self.readable([row["id"] for row in rows])

    def due(self, now: datetime) -> list[Watch]:
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT id FROM watches WHERE next_due <= ? ORDER BY next_due, id", (stamp(now),)
            ).fetchall()
        return self.readable([row["id"] for row in rows])

    def history(self, watch_id: str) -> list[WatchRun]:
        self.get(watch_id)  # an unknown id is an error, not an empty history
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT * FROM watch_runs WHERE watch_id = ? ORDER BY run_at", (watch_id,)
            ).fetchall()
        return [self._read_run(watch_id, row) for row in rows]

    @staticmethod
    def _read_run(watch_id: str, row: sqlite3.Row) -> WatchRun:
        try:
            return WatchRun(
                run_at=datetime.fromisoformat(row["run_at"]),
                folder=row["folder"],
                verdict=row["verdict"],
                confidence=row["confidence"],
                counted=row["counted"],
                changed=bool(row["changed"]),
                summary=json.loads(row["summary"]),
                confidence_is_split=bool(row["confidence_is_split"]),
                favourable_share=row["favourable_share"],
            )
        except DAMAGE as error:
            raise WatchDamagedError(watch_id, f"a run of it: {error}") from None

    def record_run(self, watch_id: str, run: WatchRun, next_due: datetime) -> None:
        # One transaction; a removed watch's run would point at nothing (the foreign key refuses it).
        try:
            with self._connect() as connection, connection:
                connection.execute(
                    "INSERT OR REPLACE INTO watch_runs "
                    "(watch_id, run_at, folder, verdict, confidence, counted, changed, summary, confidence_is_split, "
                    "favourable_share) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        watch_id,
                        stamp(run.run_at),
                        run.folder,
                        run.verdict,
                        run.confidence,
                        run.counted,
                        int(run.changed),
                        json.dumps(run.summary),
                        int(run.confidence_is_split),
                        run.favourable_share,
                    ),
                )
                connection.execute("UPDATE watches SET next_due = ? WHERE id = ?", (stamp(next_due), watch_id))
        except sqlite3.IntegrityError:
            raise WatchNotFoundError(watch_id) from None

    def claim(self, watch: Watch, now: datetime) -> bool:
        with self._connect() as connection, connection:
            moved = connection.execute(
                "UPDATE watches SET next_due = ? WHERE id = ? AND next_due = ?",
                (stamp(now + watch.interval), watch.id, stamp(watch.next_due)),
            ).rowcount
        return bool(moved)

    def remove(self, watch_id: str) -> None:
        with self._connect() as connection, connection:
            removed = connection.execute("DELETE FROM watches WHERE id = ?", (watch_id,)).rowcount
        if not removed:
            raise WatchNotFoundError(watch_id)
