"""The store as a whole, for ``deepcritical library``: what it holds, old run collections dropped, and
everything it holds exported.

Every run (finished, failed or killed) leaves a ``run-*`` collection behind; the ``library`` collection
(``library-demo`` for demo runs) keeps every item any run found, so dropping a run collection loses no
evidence: the run's record (run.json) and the library still have it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from chromadb.errors import NotFoundError

from deepcritical.errors import StoreError
from deepcritical.evidence import chroma, run_index
from deepcritical.models import Evidence
from deepcritical.options import MIN_RETENTION

log = structlog.get_logger(__name__)

RUN_PREFIX = "run-"
LIBRARY_COLLECTIONS = (chroma.LIBRARY_COLLECTION, chroma.DEMO_LIBRARY_COLLECTION)
EXPORT_PAGE = 500
# Run ids carry their start time (run.outcome.new_run_id): collections made before the creation time was
# recorded are dated by it.
_RUN_ID_TIME = re.compile(r"^run-[a-z]+-(\d{8}-\d{6})-")
# The least age a prune may take, from the command line as from DEEPCRITICAL_RETENTION.
MIN_PRUNE_AGE = MIN_RETENTION
# A run held open by a process on another machine (a shared Chroma server), whose life cannot be checked
# from here, is taken for running for this long: no run lasts a day (DEEPCRITICAL_MAX_SECONDS).
OPEN_ELSEWHERE_FOR = timedelta(days=1)


@dataclass(frozen=True)
class CollectionInfo:
    """One collection: its name, when it was created (None: unknown), and how many items it holds."""

    name: str
    created: datetime | None
    items: int
    open_by: str | None = None  # ``host:pid`` of the run's process while the run goes on

    @property
    def is_run(self) -> bool:
        return self.name.startswith(RUN_PREFIX)


@dataclass(frozen=True)
class LibraryStats:
    """What the store holds."""

    where: str
    runs: list[CollectionInfo]
    libraries: list[CollectionInfo]
    disk_bytes: int | None  # the embedded store's directory; None for a server

    @property
    def run_items(self) -> int:
        return sum(run.items for run in self.runs)


def created_at(name: str, metadata: dict[str, Any] | None) -> datetime | None:
    """When a collection was created: recorded at creation, or read from a run id, else unknown."""
    recorded = (metadata or {}).get(chroma.CREATED_KEY)
    if isinstance(recorded, str):
        try:
            when = datetime.fromisoformat(recorded)
        except ValueError:
            when = None
        if when is not None:
            return when if when.tzinfo else when.replace(tzinfo=UTC)
    if match := _RUN_ID_TIME.match(name):
        return datetime.strptime(match.group(1), "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
    return None


def _open_by(metadata: dict[str, Any] | None) -> str | None:
    metadata = metadata or {}
    owner = metadata.get(chroma.OPEN_BY_KEY)
    return owner if isinstance(owner, str) and chroma.CLOSED_KEY not in metadata else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def is_open(info: CollectionInfo, now: datetime) -> bool:
    """True while the collection's run goes on: its process (on this machine) is alive, or, for a process
    on another machine, the collection is younger than ``OPEN_ELSEWHERE_FOR``. A killed run's collection
    is not open."""
    if info.open_by is None:
        return False
    host, _, pid = info.open_by.rpartition(":")
    if host == chroma.this_process().rpartition(":")[0] and pid.isdigit():
        return _alive(int(pid))
    return info.created is None or now - info.created < OPEN_ELSEWHERE_FOR


def collections(connection: chroma.Connection) -> list[CollectionInfo]:
    """Every collection with its creation time and size, oldest first (unknown times last). Counts every
    collection: for listing the store, not for a run's start (retention reads ``run_index``)."""
    with connection.session(touches=chroma.EVERY_COLLECTION, writes=False) as session:
        found = [_info(collection) for collection in session.client.list_collections()]
    return sorted(found, key=lambda info: (info.created is None, info.created or datetime.min, info.name))


def _info(collection: Any) -> CollectionInfo:
    name, metadata = collection.name, collection.metadata
    return CollectionInfo(name, created_at(name, metadata), collection.count(), _open_by(metadata))


def stats(connection: chroma.Connection) -> LibraryStats:
    found = collections(connection)
    return LibraryStats(
        where=connection.where,
        runs=[info for info in found if info.is_run],
        libraries=[info for info in found if info.name in LIBRARY_COLLECTIONS],
        disk_bytes=connection.disk_bytes(),
    )


def prune(
    connection: chroma.Connection, older_than: timedelta, *, keep: str | None = None, now: datetime | None = None
) -> list[CollectionInfo]:
    """Delete run collections created more than ``older_than`` ago (a killed run's too), never ``keep``
    (the run starting), a run still open (``is_open``), nor a collection whose age is unknown. Returns what
    was deleted. ``older_than`` is at least ``MIN_PRUNE_AGE``, wherever it comes from.

    The candidates come from ``run_index`` (no collection is listed or counted but the candidates); each
    is checked against its own metadata, in the session that deletes it, before it goes."""
    if older_than < MIN_PRUNE_AGE:
        raise ValueError(f"prune only what is at least {_duration(MIN_PRUNE_AGE)} old")
    now = now or datetime.now(UTC)
    cutoff = now - older_than
    _seed_index(connection)
    names = [entry.name for entry in run_index.older_than(connection.index_path, cutoff) if entry.name != keep]
    if not names:
        return []
    doomed: list[CollectionInfo] = []
    gone: list[str] = []
    with connection.session(touches=names, writes=True) as session:
        for name in names:
            try:  # read afresh, not a handle this process kept: its metadata may have changed since
                info = _info(session.client.get_collection(name, embedding_function=None))
            except NotFoundError:  # deleted by hand or by an older version: only its row is left
                gone.append(name)
                continue
            if info.is_run and info.created is not None and info.created < cutoff and not is_open(info, now):
                doomed.append(info)
        for info in doomed:
            session.delete(info.name)
    run_index.forget(connection.index_path, [*gone, *(info.name for info in doomed)])
    return doomed


def prune_if_due(
    connection: chroma.Connection, older_than: timedelta, *, keep: str, now: datetime | None = None
) -> list[CollectionInfo] | None:
    """``prune`` when no pass ran in the last ``run_index.PASS_INTERVAL`` (None when none was due): the
    retention a run applies at its start."""
    now = now or datetime.now(UTC)
    if not run_index.pass_due(connection.index_path, now):
        return None
    pruned = prune(connection, older_than, keep=keep, now=now)
    run_index.passed(connection.index_path, now)
    return pruned


def _seed_index(connection: chroma.Connection) -> None:
    """Record in the index the run collections made before it (once per index: they are listed once)."""
    if run_index.seeded(connection.index_path):
        return
    with connection.session(touches=chroma.EVERY_COLLECTION, writes=False) as session:
        runs = [
            (collection.name, created_at(collection.name, collection.metadata))
            for collection in session.client.list_collections()
            if collection.name.startswith(RUN_PREFIX)
        ]
    run_index.seed(connection.index_path, runs)


def _duration(age: timedelta) -> str:
    hours = age.total_seconds() / 3600
    return f"{hours:g}h"


def export(connection: chroma.Connection, name: str) -> Iterator[Evidence]:
    """Every item of the collection ``name``, a page at a time (the store is held one page at a time)."""
    offset = 0
    while True:
        with connection.session(touches=(name,), writes=False) as session:
            page = session.collection(name).get(include=["documents"], limit=EXPORT_PAGE, offset=offset)
        documents = page["documents"] or []
        for document in documents:
            yield chroma.decode(document)
        if len(documents) < EXPORT_PAGE:
            return
        offset += EXPORT_PAGE


def prune_at_open(connection: chroma.Connection, retention: timedelta, *, keep: str) -> None:
    """Drop run collections older than the retention, killed runs' included, when no pass ran in the last
    hour. A failure here costs the run nothing: the old collections just stay until the next pass."""
    try:
        pruned = prune_if_due(connection, retention, keep=keep)
    except StoreError as error:
        log.warning("retention_failed", error=str(error))
        return
    if pruned:
        log.info("old run collections removed", count=len(pruned), older_than=str(retention))
