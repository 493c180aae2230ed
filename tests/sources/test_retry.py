"""The one retry policy (``sources.retry``) through a source's GET: what a server asks for is waited, in
seconds or until an HTTP date; a transport error is asked again after a back-off. The sleep is recorded."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx2
import pytest

from deepcritical.sources.base import get_with_retry
from deepcritical.sources.retry import retry_after_seconds

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


def scripted(*replies: Callable[[httpx2.Request], httpx2.Response]) -> tuple[httpx2.AsyncClient, list[str]]:
    queue, seen = list(replies), []

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        return queue.pop(0)(request)

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handle)), seen


async def get(client: httpx2.AsyncClient, sleeps: list[float]) -> str:
    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    return await get_with_retry(
        client, "https://example.org/x", source="web", read=lambda r: r.text, sleep=sleep, now=NOW.timestamp
    )


@pytest.mark.parametrize(
    "asked", ["9", format_datetime(NOW + timedelta(seconds=9), usegmt=True)], ids=["seconds", "http-date"]
)
async def test_the_wait_a_busy_server_asks_for_is_the_wait_before_asking_again(asked: str) -> None:
    client, seen = scripted(
        lambda r: httpx2.Response(503, headers={"Retry-After": asked}), lambda r: httpx2.Response(200, text="ok")
    )
    sleeps: list[float] = []
    assert await get(client, sleeps) == "ok"
    assert sleeps == [9.0]  # a policy that backs off on its own (1 s) fails here
    assert len(seen) == 2


async def test_a_dropped_connection_is_asked_again_after_a_back_off() -> None:
    def refused(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    client, seen = scripted(refused, refused, lambda r: httpx2.Response(200, text="ok"))
    sleeps: list[float] = []
    assert await get(client, sleeps) == "ok"
    assert sleeps == [1.0, 2.0]
    assert len(seen) == 3


def test_a_retry_after_that_is_neither_seconds_nor_a_date_is_no_wait_asked() -> None:
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({}) is None
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=NOW.timestamp) == 0.0
