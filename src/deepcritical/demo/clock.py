"""The stand-ins' clock: what "today" is for the demo services, so that a record dated later has not
appeared yet and a retraction dated later has not been issued. ``DEEPCRITICAL_DEMO_TODAY`` sets it (a
watch run twice at two demo dates sees the corpus grow, deterministically); unset, it is the real date.

The clock travels with the request, not the process: ``ClockedTransport`` sets it around each request it
passes to the stand-ins, so two runs at two demo dates in one process (a test, a server) never mix."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, date, datetime

import httpx2

_TODAY: ContextVar[date | None] = ContextVar("demo_today", default=None)


def today() -> date:
    """The stand-ins' today: the demo clock when a request set it, else the real date (UTC)."""
    return _TODAY.get() or datetime.now(UTC).date()


@contextmanager
def set_to(day: date | None) -> Iterator[None]:
    """The stand-ins' today is ``day`` within the block (None: the real date)."""
    token = _TODAY.set(day)
    try:
        yield
    finally:
        _TODAY.reset(token)


class ClockedTransport(httpx2.AsyncBaseTransport):
    """Passes every request to ``inner`` (the stand-ins) with the demo clock set to ``today``."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, today: date | None) -> None:
        self.inner = inner
        self.today = today

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        with set_to(self.today):
            return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()
