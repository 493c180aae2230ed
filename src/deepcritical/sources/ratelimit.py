"""NCBI's rate limit, kept by everyone who shares it: every process on the machine, or every machine.

NCBI counts requests per IP address without an API key (3 per second) and per key with one (10 per
second), not per process. So the count lives outside the process: in a SQLite file under
``DEEPCRITICAL_HOME`` (pyrate-limiter's SQLite bucket, under its file lock) for every process on the
machine, or in Redis (``REDIS_URL``) for every machine of a team using the same key.

Requests are spaced rather than sent in bursts: one slot every ``(1 s + margin) / rate``. The margin
absorbs the jitter between taking a slot and the request reaching NCBI (task wake-up, connection
set-up), so that any ``rate + 1`` requests span more than one second at NCBI's end, not only at ours.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import structlog
from pydantic import SecretStr

from deepcritical.errors import SearchError

if TYPE_CHECKING:  # pyrate-limiter loads with the first bucket, redis only for a limit kept in Redis
    from pyrate_limiter import AbstractBucket

    from deepcritical.config import Settings

logger = structlog.get_logger(__name__)

NCBI_RATE_WITHOUT_KEY = 3
NCBI_RATE_WITH_KEY = 10
# Added to NCBI's one-second window; measured with bench/ncbi_politeness.py (phases/06_reliability.md).
NCBI_JITTER_MARGIN_SECONDS = 0.08
RATE_LIMIT_FILE = "ratelimit.sqlite"
# A request sent this much after its slot gives the slot up and takes the next free one.
LATE_TOLERANCE_MS = 25
# The bucket keeps one row per request; rows older than the spacing are dropped every so many requests.
_LEAK_EVERY = 100
# Others may take the slot a reservation aimed at (only without a shared lock: Redis); ask again this often.
_MAX_RESERVATION_TRIES = 1000

Clock = Callable[[], int]  # milliseconds
# The slot the current task's request holds (which limiter, when), for ``PacedLimiter.confirm``.
_held_slot: contextvars.ContextVar[tuple[int, int] | None] = contextvars.ContextVar("ncbi_held_slot", default=None)
Sleep = Callable[[float], Awaitable[None]]


def wall_clock_ms() -> int:
    """Milliseconds of wall-clock time: the one clock every process (and, with NTP, machine) shares."""
    return time.time_ns() // 1_000_000


def ncbi_spacing(has_key: bool) -> float:
    """Seconds between two requests to NCBI: its one-second window plus the margin, over its rate."""
    rate = NCBI_RATE_WITH_KEY if has_key else NCBI_RATE_WITHOUT_KEY
    return (1.0 + NCBI_JITTER_MARGIN_SECONDS) / rate


def ncbi_bucket_name(api_key: SecretStr | None) -> str:
    """What NCBI counts by: the key (hashed: the key itself is never stored) or, without one, the address."""
    if api_key is None:
        return "ncbi_anonymous"
    return "ncbi_key_" + hashlib.sha256(api_key.get_secret_value().strip().encode()).hexdigest()[:16]


class PacedLimiter:
    """Slots ``spacing`` seconds apart, reserved in a bucket everyone sharing the limit writes to.

    The bucket is pyrate-limiter's sliding-window log of one request per ``spacing``: in memory it is
    shared by the threads of one process, in SQLite (under its file lock) by every process on the
    machine, in Redis by every machine. A caller reserves the earliest free slot, which may lie in the
    future, and sleeps until then: callers are served in the order they asked, and slots stay exactly
    ``spacing`` apart however long each reservation took, so no time is lost between requests. What
    NCBI counts is when a request arrives, so the slot is checked again when the request is written
    (``confirm``): one that could not go at its slot takes the next free one.

    The bucket is opened on first use, so a store that cannot be opened fails the source's search,
    never the run. Bucket calls run in a thread of the limiter's own: the event loop never waits on a
    file lock or the network, and neither do the loop's other worker threads. A caller cancelled while
    it waits forfeits its slot, which only makes the pace slower.
    """

    def __init__(
        self,
        open_bucket: Callable[[int], AbstractBucket],
        spacing: float,
        *,
        name: str,
        where: str,
        fix: str,
        clock: Clock = wall_clock_ms,
        sleep: Sleep = asyncio.sleep,
        errors: tuple[type[Exception], ...] = (sqlite3.Error, OSError),
    ) -> None:
        if spacing <= 0:
            raise ValueError("spacing must be positive")
        self.spacing = spacing
        self.where = where
        self._open_bucket = open_bucket
        self._name = name
        self._fix = fix
        self._errors = errors  # what the bucket raises when its store fails
        self._clock = clock
        self._sleep = sleep
        self._bucket: AbstractBucket | None = None
        self._reserved = 0
        # A pyrate bucket records its last verdict on itself: one reservation at a time in this process.
        self._lock = threading.Lock()
        # Reservations wait on a file lock or the network: in a thread of their own, so they never hold
        # up the threads the event loop resolves names and connects with (the default executor).
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ncbi-rate-limit")

    @classmethod
    def in_memory(cls, spacing: float, *, clock: Clock = wall_clock_ms, sleep: Sleep = asyncio.sleep) -> PacedLimiter:
        """A limiter shared only by the users of this object (tests, a tool on its own)."""
        from pyrate_limiter import InMemoryBucket, Rate

        return cls(
            lambda interval: InMemoryBucket([Rate(1, interval)]),
            spacing,
            name="local",
            where="this process",
            fix="",
            clock=clock,
            sleep=sleep,
        )

    async def __call__(self) -> None:
        """So a limiter can be passed straight as ``before_request``."""
        await self.acquire()

    async def acquire(self) -> None:
        """Wait until the slot reserved for this request; ``confirm`` checks it again at sending time."""
        while True:
            slot = await asyncio.get_running_loop().run_in_executor(self._executor, self.reserve)
            wait = (slot - self._clock()) / 1000
            if wait > 0:
                logger.debug("rate_limit_wait", seconds=round(wait, 3), where=self.where)
                await self._sleep(wait)
            _held_slot.set((id(self), slot))
            if not self._missed(slot):
                return

    async def confirm(self) -> None:
        """Called the moment the request is written (after any connection set-up). A request that missed
        its slot (a cold connection, a busy event loop) would land closer to the next slot's request than
        the spacing allows, so it gives the slot up and waits for the next free one."""
        held = _held_slot.get()
        if held is not None and held[0] == id(self) and self._missed(held[1]):
            await self.acquire()

    def _missed(self, slot: int) -> bool:
        late = self._clock() - slot
        if late <= LATE_TOLERANCE_MS:
            return False
        logger.debug("rate_limit_slot_missed", late_ms=late, where=self.where)
        return True

    def reserve(self) -> int:
        """Reserve the earliest free slot and return its time in milliseconds (now, or later)."""
        with self._lock:
            try:
                if self._bucket is None:
                    # The log admits one entry per ``spacing - 1`` ms, and its entries are 1 ms past the
                    # window's bound (pyrate's bound is inclusive): slots come exactly ``spacing`` apart.
                    self._bucket = self._open_bucket(max(1, _ms(self.spacing) - 1))
                return self._reserve(self._bucket)
            except self._errors as error:
                problem = str(error).rstrip(". ")
                raise SearchError(f"the NCBI rate limit kept in {self.where} failed: {problem}.{self._fix}") from error

    def _reserve(self, bucket: AbstractBucket) -> int:
        # In SQLite the file lock makes asking and taking one step for every process; Redis checks and
        # takes atomically, so there a slot taken in between is simply asked for again.
        from pyrate_limiter import RateItem

        with bucket.limiter_lock() or contextlib.nullcontext():  # type: ignore[attr-defined]
            item = RateItem(self._name, self._clock())
            for _ in range(_MAX_RESERVATION_TRIES):
                if _settled(bucket.put(item)):
                    self._reserved += 1
                    if self._reserved % _LEAK_EVERY == 0:
                        bucket.leak(self._clock())
                    return item.timestamp
                item = RateItem(self._name, item.timestamp + max(1, int(_settled(bucket.waiting(item)))))
        raise SearchError(f"the NCBI rate limit kept in {self.where} stayed busy; try again")


def _settled(value: Any) -> Any:
    # Sync buckets answer at once; an awaitable here means an async client slipped in.
    if asyncio.iscoroutine(value):
        value.close()
        raise TypeError("the rate-limit bucket must use a synchronous client")
    return value


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def sqlite_limiter(path: Path, name: str, spacing: float, *, clock: Clock = wall_clock_ms) -> PacedLimiter:
    """Shared by every process on the machine: a SQLite bucket at ``path`` under a file lock beside it."""

    def open_bucket(interval: int) -> AbstractBucket:
        from pyrate_limiter import Rate, SQLiteBucket

        path.parent.mkdir(parents=True, exist_ok=True)
        return SQLiteBucket.init_from_file(
            [Rate(1, interval)], table=name, db_path=str(path), create_new_table=True, use_file_lock=True
        )

    return PacedLimiter(
        open_bucket,
        spacing,
        name=name,
        where=str(path),
        fix=" Fix: make DEEPCRITICAL_HOME a writable directory.",
        clock=clock,
    )


def redis_limiter(url: str, name: str, spacing: float, *, clock: Clock = wall_clock_ms) -> PacedLimiter:
    """Shared by every machine using this Redis: pyrate-limiter's Redis bucket (an atomic Lua script)."""
    parts = urlsplit(url)
    where = f"Redis at {parts.hostname or 'localhost'}:{parts.port or 6379}"  # never the password
    from redis.exceptions import RedisError

    def open_bucket(interval: int) -> AbstractBucket:
        from pyrate_limiter import Rate, RedisBucket
        from redis import Redis

        client = Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        bucket: AbstractBucket = RedisBucket.init([Rate(1, interval)], client, f"deepcritical:{name}")
        return bucket

    return PacedLimiter(
        open_bucket,
        spacing,
        name=name,
        where=where,
        fix=" Fix: start that Redis server, or unset REDIS_URL to share the limit on this machine only.",
        clock=clock,
        errors=(sqlite3.Error, OSError, RedisError),
    )


def ncbi_limiter(settings: Settings) -> PacedLimiter:
    """The NCBI limiter for these settings: in Redis when ``REDIS_URL`` is set, else under the home."""
    spacing = ncbi_spacing(settings.ncbi_api_key is not None)
    name = ncbi_bucket_name(settings.ncbi_api_key)
    if settings.redis_url is not None:
        return redis_limiter(settings.redis_url.get_secret_value(), name, spacing)
    return sqlite_limiter(settings.home / RATE_LIMIT_FILE, name, spacing)
