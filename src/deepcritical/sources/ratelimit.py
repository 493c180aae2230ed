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
import hashlib
import sqlite3
import threading
import time
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import structlog
from pydantic import SecretStr
from pyrate_limiter import AbstractBucket, InMemoryBucket, Rate, RateItem, RedisBucket, SQLiteBucket
from redis import Redis
from redis.exceptions import RedisError

from deepcritical.config import Settings
from deepcritical.errors import SearchError

logger = structlog.get_logger(__name__)

NCBI_RATE_WITHOUT_KEY = 3
NCBI_RATE_WITH_KEY = 10
# Added to NCBI's one-second window; measured with bench/ncbi_politeness.py (phases/05_reliability.md).
NCBI_JITTER_MARGIN_SECONDS = 0.08
RATE_LIMIT_FILE = "ratelimit.sqlite"
# The bucket keeps one row per request; rows older than the spacing are dropped every so many requests.
_LEAK_EVERY = 100

Clock = Callable[[], int]  # milliseconds
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
    """At most one acquisition every ``spacing`` seconds among everyone sharing the bucket.

    The bucket is pyrate-limiter's (a sliding-window log of one request per ``spacing``): in memory it is
    shared by the threads of one process, in SQLite by every process on the machine, in Redis by every
    machine. It is opened on first use, so a store that cannot be opened fails the source's search,
    never the run. Bucket calls run in a worker thread, so the event loop never waits on a file lock or
    the network; within one event loop the waiting tasks queue in order and only the first one polls.
    """

    def __init__(
        self,
        open_bucket: Callable[[float], AbstractBucket],
        spacing: float,
        *,
        name: str,
        where: str,
        fix: str,
        clock: Clock = wall_clock_ms,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if spacing <= 0:
            raise ValueError("spacing must be positive")
        self.spacing = spacing
        self.where = where
        self._open_bucket = open_bucket
        self._name = name
        self._fix = fix
        self._clock = clock
        self._sleep = sleep
        self._bucket: AbstractBucket | None = None
        self._admitted = 0
        # A pyrate bucket records its last verdict on itself: one put (and its wait) at a time.
        self._lock = threading.Lock()
        self._turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()

    @classmethod
    def in_memory(cls, spacing: float, *, clock: Clock = wall_clock_ms, sleep: Sleep = asyncio.sleep) -> PacedLimiter:
        """A limiter shared only by the users of this object (tests, a tool on its own)."""
        return cls(
            lambda seconds: InMemoryBucket([Rate(1, _ms(seconds))]),
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
        """Wait until a request may be sent."""
        async with self._turn():
            while (wait := await asyncio.to_thread(self._take)) > 0:
                logger.debug("rate_limit_wait", seconds=round(wait, 3), where=self.where)
                await self._sleep(wait)

    def _turn(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._lock:
            return self._turns.setdefault(loop, asyncio.Lock())

    def _take(self) -> float:
        """Take the slot if it is free (0.0), else the seconds until it frees up."""
        with self._lock:
            try:
                if self._bucket is None:
                    self._bucket = self._open_bucket(self.spacing)
                item = RateItem(self._name, self._clock())
                if _settled(self._bucket.put(item)):
                    self._admitted += 1
                    if self._admitted % _LEAK_EVERY == 0:
                        self._bucket.leak(item.timestamp)
                    return 0.0
                wait_ms = int(_settled(self._bucket.waiting(item)))
            except (sqlite3.Error, OSError, RedisError) as error:
                raise SearchError(f"the NCBI rate limit kept in {self.where} failed: {error}.{self._fix}") from error
        return max(wait_ms, 1) / 1000


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

    def open_bucket(seconds: float) -> AbstractBucket:
        path.parent.mkdir(parents=True, exist_ok=True)
        return SQLiteBucket.init_from_file(
            [Rate(1, _ms(seconds))], table=name, db_path=str(path), create_new_table=True, use_file_lock=True
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

    def open_bucket(seconds: float) -> AbstractBucket:
        client = Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        bucket: AbstractBucket = RedisBucket.init([Rate(1, _ms(seconds))], client, f"deepcritical:{name}")
        return bucket

    return PacedLimiter(
        open_bucket,
        spacing,
        name=name,
        where=where,
        fix=" Fix: start that Redis server, or unset REDIS_URL to share the limit on this machine only.",
        clock=clock,
    )


def ncbi_limiter(settings: Settings) -> PacedLimiter:
    """The NCBI limiter for these settings: in Redis when ``REDIS_URL`` is set, else under the home."""
    spacing = ncbi_spacing(settings.ncbi_api_key is not None)
    name = ncbi_bucket_name(settings.ncbi_api_key)
    if settings.redis_url is not None:
        return redis_limiter(settings.redis_url.get_secret_value(), name, spacing)
    return sqlite_limiter(settings.home / RATE_LIMIT_FILE, name, spacing)
