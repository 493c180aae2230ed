"""The watches database's schema: the steps that bring a ``watches.sqlite`` of any earlier version to this one
(``service.watches_sqlite.WatchStore`` applies them when it opens the file)."""

from __future__ import annotations

import sqlite3

from deepcritical.errors import ConfigError

# Each step is applied once, in order; step N brings the schema to version N. Never edit a shipped step:
# add one.
MIGRATIONS: tuple[str, ...] = (
    # 1: the watches
    """
    CREATE TABLE watches (
        id TEXT PRIMARY KEY,
        question TEXT NOT NULL,
        interval_seconds INTEGER NOT NULL,
        options TEXT NOT NULL,
        webhook TEXT,
        created TEXT NOT NULL,
        next_due TEXT NOT NULL
    );
    """,
    # 2: each watch's runs, newest last
    """
    CREATE TABLE watch_runs (
        watch_id TEXT NOT NULL REFERENCES watches(id) ON DELETE CASCADE,
        run_at TEXT NOT NULL,
        folder TEXT NOT NULL,
        verdict TEXT,
        confidence REAL,
        counted INTEGER NOT NULL,
        changed INTEGER NOT NULL,
        summary TEXT NOT NULL,
        PRIMARY KEY (watch_id, run_at)
    );
    CREATE INDEX watches_next_due ON watches (next_due);
    """,
    # 3: how to read a run's confidence (a maybe's is how evenly split), and the favourable share behind it
    """
    ALTER TABLE watch_runs ADD COLUMN confidence_is_split INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE watch_runs ADD COLUMN favourable_share REAL;
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(connection: sqlite3.Connection) -> int:
    """Bring the database to ``SCHEMA_VERSION``; returns the version it had. A database of a later version
    is refused (ConfigError): its tables may mean what this version cannot know."""
    connection.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = connection.execute("SELECT version FROM schema_version").fetchone()
    found = int(row[0]) if row is not None else 0
    if row is None:
        connection.execute("INSERT INTO schema_version (version) VALUES (0)")
    if found > SCHEMA_VERSION:
        raise ConfigError(
            f"the watches database is of version {found}, newer than this DeepCritical knows ({SCHEMA_VERSION})"
        )
    for version in range(found + 1, SCHEMA_VERSION + 1):
        # One transaction per step: the step and the version it brings are written together, or neither.
        with connection:
            for statement in MIGRATIONS[version - 1].split(";"):
                if statement.strip():
                    connection.execute(statement)
            connection.execute("UPDATE schema_version SET version = ?", (version,))
    return found
