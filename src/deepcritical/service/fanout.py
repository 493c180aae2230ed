"""Every run's progress events on a Redis stream, so that every ``serve`` process can follow any run,
whichever worker runs it and whichever server a browser reaches.

One stream per run, ``deepcritical:events:<run_id>``. An event's number is its stream id's sequence:
events are added with the id ``0-*`` (Redis 7+), so Redis numbers them 1, 2, 3… across every process that
adds to the stream (a run redelivered to another worker goes on counting where the first stopped). The
number is the SSE event id, so ``Last-Event-ID: 17`` reads on from ``0-17`` on any server.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import structlog
from redis.asyncio import Redis
from redis.exceptions import ResponseError

logger = structlog.get_logger(__name__)

STREAM_PREFIX = "deepcritical:events:"
# Long enough for any client to come back for a run's events; the run folder keeps them for good.
STREAM_TTL_SECONDS = 7 * 24 * 3600
MAX_EVENTS_PER_RUN = 10_000
# The largest sequence number an id such as ``0-N`` may have that Redis also takes as an exclusive start.
MAX_SEQUENCE = 2**64 - 2
# Shorter than redis-py 8's default socket timeout (5 s), which would cut a longer blocking read.
READ_BLOCK_MS = 2_000
ENDED_KIND = "run_ended"


def stream_key(run_id: str) -> str:
    return f"{STREAM_PREFIX}{run_id}"


def event_number(stream_id: bytes | str) -> int:
    text = stream_id.decode() if isinstance(stream_id, bytes) else stream_id
    return int(text.split("-", 1)[1])


class EventStream:
    """Publishes and follows runs' events on one Redis connection pool."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def publish(self, run_id: str, data: dict[str, Any], number: int | None = None) -> int:
        """Add one event; its number. ``number``: the number the run's folder gave it (``events.jsonl`` is the
        record, the stream its mirror), so a stream lost with a restarted Redis goes on with the same numbers."""
        key = stream_key(run_id)
        fields: dict[Any, Any] = {"data": json.dumps(data, ensure_ascii=False)}
        try:
            added = await self.redis.xadd(
                key, fields, id=f"0-{number}" if number else "0-*", maxlen=MAX_EVENTS_PER_RUN, approximate=True
            )
        except ResponseError:  # the stream is ahead of the folder (two writers at once): Redis numbers it
            logger.warning("event_number_taken", run_id=run_id, number=number)
            added = await self.redis.xadd(key, fields, id="0-*", maxlen=MAX_EVENTS_PER_RUN, approximate=True)
        await self.redis.expire(key, STREAM_TTL_SECONDS)
        return event_number(added)

    async def events(self, run_id: str, after: int = 0) -> list[tuple[int, dict[str, Any]]]:
        """The events numbered above ``after`` that are there now."""
        return _parsed(await self.redis.xrange(stream_key(run_id), min=f"(0-{_sequence(after)}", max="+"))

    async def follow(
        self, run_id: str, after: int = 0, *, ended: Callable[[], bool] | None = None
    ) -> AsyncIterator[tuple[int, dict[str, Any]]]:
        """The run's events numbered above ``after``, as they come, until its ``run_ended``; or, when a read
        finds nothing new and ``ended()`` says the run has ended (its stream expired, or Redis restarted and
        lost it), until then: the caller reads the rest from the run's folder."""
        key, last = stream_key(run_id), _sequence(after)
        while True:
            answer: Any = await self.redis.xread({key: f"0-{last}"}, block=READ_BLOCK_MS, count=100)
            if not answer and ended is not None and ended():
                return
            for _key, entries in answer or []:
                for number, data in _parsed(entries):
                    last = number
                    yield number, data
                    if data.get("kind") == ENDED_KIND:
                        return

    async def last_number(self, run_id: str) -> int:
        entries = _parsed(await self.redis.xrevrange(stream_key(run_id), count=1))
        return entries[0][0] if entries else 0


def _sequence(after: int) -> int:
    """``after`` as a stream id's sequence number, which Redis takes up to ``MAX_SEQUENCE`` (and refuses beyond, with
    an error, not an empty answer); no run has that many events, so the clamp changes no answer."""
    return min(max(after, 0), MAX_SEQUENCE)


def _parsed(entries: Any) -> list[tuple[int, dict[str, Any]]]:
    """Stream entries (id, {b"data": JSON}) as (number, event)."""
    return [(event_number(entry_id), json.loads(fields[b"data"])) for entry_id, fields in entries or []]
