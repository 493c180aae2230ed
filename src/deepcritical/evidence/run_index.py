"""What retention needs about every run collection, in one small collection of the store.

Retention once listed every collection and counted each one's items at every store open: about 16 ms of
CPU per collection, so a store with a month of runs made every run seconds slower. The index holds one
record per run collection (its id is the collection's name): when it was created, when it was last
used, and the process holding it open (``host:pid``) until its run closes it. A retention pass reads
only the records older than the cutoff (one filtered ``get``), and the pass runs at most once per
``PASS_INTERVAL`` (the index's own ``META_ID`` record says when the last one ran).

The index is a Chroma collection, not a file beside the store, so that runs on other machines sharing a
Chroma server see the same index. Records need a vector; each gets the same one-dimensional vector.

The index only nominates candidates: ``library.prune`` re-reads each candidate's own metadata before
deleting it, so a collection whose recorded owner is alive is kept whatever its index record says.

Every function takes the Chroma client of a session already holding ``NAME`` in its ``touches``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

NAME = "deepcritical-runs"
META_ID = "__meta__"  # seeded: whether every run collection made before the index is recorded
PASS_INTERVAL = timedelta(hours=1)
_CREATED = "created"  # epoch seconds (a number, so a ``$lt`` filter applies)
_LAST_USED = "last_used"
_OPEN_BY = "open_by"  # "" once closed
_LAST_PASS = "last_pass"
_VECTOR = [1.0]


@dataclass(frozen=True)
class Entry:
    """A run collection as the index records it."""

    name: str
    created: datetime


def _index(client: Any) -> Any:
    return client.get_or_create_collection(NAME, embedding_function=None)


def _epoch(when: datetime) -> float:
    return when.timestamp()


def opened(client: Any, name: str, owner: str, now: datetime) -> None:
    """Record that ``owner`` (``host:pid``) holds the run collection ``name`` open from ``now``; a
    collection opened again (a resumed run) keeps its creation time."""
    index = _index(client)
    found = index.get(ids=[name], include=["metadatas"])
    created = _epoch(now)
    if found["ids"]:
        recorded = (found["metadatas"] or [{}])[0] or {}
        created = float(recorded.get(_CREATED, created))
    metadata = {_CREATED: created, _LAST_USED: _epoch(now), _OPEN_BY: owner}
    index.upsert(ids=[name], embeddings=[_VECTOR], metadatas=[metadata])


def closed(client: Any, name: str, now: datetime) -> None:
    """Record that the run of ``name`` closed it at ``now``."""
    index = _index(client)
    found = index.get(ids=[name], include=["metadatas"])
    if not found["ids"]:
        return
    recorded = dict((found["metadatas"] or [{}])[0] or {})
    recorded.update({_LAST_USED: _epoch(now), _OPEN_BY: ""})
    index.upsert(ids=[name], embeddings=[_VECTOR], metadatas=[recorded])


def forget(client: Any, names: Iterable[str]) -> None:
    """Drop the records of deleted collections."""
    ids = list(names)
    if ids:
        _index(client).delete(ids=ids)


def older_than(client: Any, cutoff: datetime) -> list[Entry]:
    """The recorded run collections created before ``cutoff``, oldest first."""
    found = _index(client).get(where={_CREATED: {"$lt": _epoch(cutoff)}}, include=["metadatas"])
    entries = [
        Entry(name, datetime.fromtimestamp(float((metadata or {})[_CREATED]), UTC))
        for name, metadata in zip(found["ids"], found["metadatas"] or [], strict=True)
        if name != META_ID
    ]
    return sorted(entries, key=lambda entry: (entry.created, entry.name))


def seeded(client: Any) -> bool:
    """Whether the run collections made before the index existed are recorded."""
    return bool(_index(client).get(ids=[META_ID], include=[])["ids"])


def seed(client: Any, runs: Iterable[tuple[str, datetime | None]]) -> None:
    """Record run collections made before the index (name, creation time; an unknown time is never
    pruned, so it is not recorded), once per store."""
    index = _index(client)
    recorded = [(name, created) for name, created in runs if created is not None]
    if recorded:
        index.upsert(
            ids=[name for name, _ in recorded],
            embeddings=[_VECTOR] * len(recorded),
            metadatas=[
                {_CREATED: _epoch(created), _LAST_USED: _epoch(created), _OPEN_BY: ""} for _, created in recorded
            ],
        )
    _set_meta(index, {})


def pass_due(client: Any, now: datetime) -> bool:
    """True when no retention pass ran in the last ``PASS_INTERVAL``."""
    found = _index(client).get(ids=[META_ID], include=["metadatas"])
    if not found["ids"]:
        return True
    last = ((found["metadatas"] or [{}])[0] or {}).get(_LAST_PASS)
    return not isinstance(last, int | float) or now.timestamp() - float(last) >= PASS_INTERVAL.total_seconds()


def passed(client: Any, now: datetime) -> None:
    """Record that a retention pass ran at ``now``."""
    _set_meta(_index(client), {_LAST_PASS: _epoch(now)})


def _set_meta(index: Any, update: dict[str, float]) -> None:
    found = index.get(ids=[META_ID], include=["metadatas"])
    metadata = dict(((found["metadatas"] or [{}])[0] or {}) if found["ids"] else {})
    metadata.update({"seeded": True, **update})
    index.upsert(ids=[META_ID], embeddings=[_VECTOR], metadatas=[metadata])
