"""A process-wide sliding-window rate limiter for NCBI E-utilities.

NCBI counts requests per IP (or per API key), not per tool instance or per event loop, so the
limit has to be shared by everything in the process. This module is the one deliberate piece of
process-wide state in DeepCritical.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable

import structlog

logger = structlog.get_logger(__name__)

NCBI_RATE_WITHOUT_KEY = 3
NCBI_RATE_WITH_KEY = 10
# Time passes between taking a slot and the request reaching NCBI (task wake-up, network), and it is
# not the same for every request; a window slightly longer than NCBI's one second absorbs that jitter.
NCBI_WINDOW_SECONDS = 1.1

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


class SlidingWindowLimiter:
    """At most ``max_calls`` acquisitions in any window of ``period`` seconds.

    Each caller reserves the earliest slot that keeps the window property, under a
    ``threading.Lock`` (held only while computing, never across an ``await``, so it works across
    threads and event loops), then sleeps until its slot. Slots are handed out first come, first
    served; a caller cancelled while waiting forfeits its slot, which only makes the limit stricter.
    """

    def __init__(
        self,
        max_calls: int,
        period: float = 1.0,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if max_calls < 1:
            raise ValueError("max_calls must be at least 1")
        if period <= 0:
            raise ValueError("period must be positive")
        self.max_calls = max_calls
        self.period = period
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        # Only the last max_calls slots matter: a new slot must be a full period after the oldest of them.
        self._slots: deque[float] = deque(maxlen=max_calls)

    def reserve(self) -> float:
        """Take the next free slot and return how many seconds to wait for it."""
        with self._lock:
            now = self._clock()
            slot = now if len(self._slots) < self.max_calls else max(now, self._slots[0] + self.period)
            self._slots.append(slot)
            return slot - now

    async def acquire(self) -> None:
        """Wait until a request may be sent."""
        wait = self.reserve()
        if wait > 0:
            logger.debug("rate_limit_wait", seconds=round(wait, 3), max_calls=self.max_calls)
            await self._sleep(wait)

    async def __call__(self) -> None:
        """So a limiter can be passed straight as ``before_request``."""
        await self.acquire()


def new_ncbi_limiter(
    has_key: bool, *, clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep
) -> SlidingWindowLimiter:
    """A limiter with NCBI's published rate: 3 requests per second without an API key, 10 with one."""
    rate = NCBI_RATE_WITH_KEY if has_key else NCBI_RATE_WITHOUT_KEY
    return SlidingWindowLimiter(rate, NCBI_WINDOW_SECONDS, clock=clock, sleep=sleep)


_registry: dict[bool, SlidingWindowLimiter] = {}
_registry_lock = threading.Lock()


def ncbi_limiter(has_key: bool) -> SlidingWindowLimiter:
    """The process-wide NCBI limiter: every PubMed tool in the process shares it."""
    with _registry_lock:
        if has_key not in _registry:
            _registry[has_key] = new_ncbi_limiter(has_key)
        return _registry[has_key]
