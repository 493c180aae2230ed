"""Who may start a run now: at most ``DEEPCRITICAL_RUNS_PER_MINUTE`` new runs per client in any sliding
minute, one limiter shared by every front end of a server (the HTTP API and MCP's ``research``), so that
a client cannot step around the limit by switching from one to the other."""

from __future__ import annotations

import time

from limits import RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import MovingWindowRateLimiter


class RunRateLimit:
    """At most ``per_minute`` new runs per client key (an address, or ``stdio``) in any sliding minute."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._item = RateLimitItemPerMinute(per_minute)
        self._storage = MemoryStorage()
        self._limiter = MovingWindowRateLimiter(self._storage)

    async def retry_after(self, client: str) -> int | None:
        """None when the client may start a run now (the run is counted); else seconds to wait."""
        if await self._limiter.hit(self._item, client):
            return None
        stats = await self._limiter.get_window_stats(self._item, client)
        return max(1, round(stats.reset_time - time.time()))

    def refusal(self, client: str) -> str:
        return f"too many runs started from {client}: at most {self.per_minute} a minute"
