"""Following a run's events as they come: a run of this process wakes its followers at each event (its
entry's signal); a run another process owns is read from its folder again every ``FOREIGN_POLL_SECONDS``
(its events come by file only)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from deepcritical.run.store import RunStore, StoredEvent
from deepcritical.service.entries import RunEntry

FOREIGN_POLL_SECONDS = 1.0


async def own_events(run: RunEntry, after: int) -> AsyncIterator[StoredEvent]:
    """The events of a run of this process numbered above ``after``, until its last (``run_ended``)."""
    events = run.store.events
    index = max(after, 0)
    while True:
        while index < len(events):
            yield events[index]
            index += 1
        if run.ended:
            return
        # Nothing is awaited between the checks above and this wait, so no change can be missed.
        await run.signal.wait()


async def foreign_events(folder: Path, after: int, ended: Callable[[], bool]) -> AsyncIterator[StoredEvent]:
    """The events of a run another process owns numbered above ``after``, as its folder gets them, until
    ``ended`` (which reads the run's record again) says it has ended."""
    last = max(after, 0)
    while True:
        finished = ended()  # read before the events, so none written last is missed
        for stored in RunStore(folder).events:
            if stored.id > last:
                last = stored.id
                yield stored
        if finished:
            return
        await asyncio.sleep(FOREIGN_POLL_SECONDS)
