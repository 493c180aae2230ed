"""The NCBI limit holds process-wide: across tool instances, concurrent searches, event loops and threads."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable

import httpx2
import pytest
from pydantic import SecretStr

from deepcritical.sources import ratelimit
from deepcritical.sources.pubmed import PubMedTool
from deepcritical.sources.ratelimit import (
    NCBI_RATE_WITH_KEY,
    NCBI_RATE_WITHOUT_KEY,
    SlidingWindowLimiter,
    ncbi_limiter,
    new_ncbi_limiter,
)


class VirtualTime:
    """A fake clock and sleep. Sleepers wake in time order, and the clock only moves forward to the
    earliest sleeper's wake time, so whatever runs between two wake-ups sees one instant."""

    def __init__(self) -> None:
        self.now = 0.0
        self._wakes: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        wake = self.now + seconds
        self._wakes.append(wake)
        try:
            while self.now < wake:
                await asyncio.sleep(0)  # a yield, not a wait: lets every other task take its turn
                if wake <= min(self._wakes):
                    self.now = max(self.now, wake)
        finally:
            self._wakes.remove(wake)


def max_in_any_window(stamps: list[float], window: float = 1.0) -> int:
    """The most timestamps inside any half-open window [t, t + window)."""
    ordered = sorted(stamps)
    return max((sum(1 for s in ordered if start <= s < start + window) for start in ordered), default=0)


def eutils_handler(stamps: list[float], clock: Callable[[], float]) -> Callable[[httpx2.Request], httpx2.Response]:
    """Answers esearch with two PMIDs derived from the term, and efetch with an article per PMID."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        stamps.append(clock())
        if request.url.path.endswith("esearch.fcgi"):
            seed = int(request.url.params["term"].split()[-1])
            ids = [str(1000 + 2 * seed), str(1001 + 2 * seed)]
            body = {"esearchresult": {"count": "2", "idlist": ids}}
            return httpx2.Response(200, text=json.dumps(body))
        articles = "".join(
            f"<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article><ArticleTitle>Title {pmid}</ArticleTitle>"
            f"<Abstract><AbstractText>Abstract {pmid}.</AbstractText></Abstract></Article></MedlineCitation>"
            "</PubmedArticle>"
            for pmid in request.url.params["id"].split(",")
        )
        return httpx2.Response(200, text=f"<PubmedArticleSet>{articles}</PubmedArticleSet>")

    return handle


@pytest.fixture
def virtual_registry(monkeypatch: pytest.MonkeyPatch) -> VirtualTime:
    """The process-wide registry, swapped for limiters on virtual time for the length of one test."""
    virtual = VirtualTime()
    registry = {
        has_key: new_ncbi_limiter(has_key, clock=virtual.clock, sleep=virtual.sleep) for has_key in (False, True)
    }
    monkeypatch.setattr(ratelimit, "_registry", registry)
    return virtual


@pytest.mark.parametrize(("api_key", "limit"), [(None, NCBI_RATE_WITHOUT_KEY), (SecretStr("k"), NCBI_RATE_WITH_KEY)])
async def test_twenty_concurrent_searches_from_separate_tools_share_one_limit(
    virtual_registry: VirtualTime, api_key: SecretStr | None, limit: int
) -> None:
    stamps: list[float] = []
    transport = httpx2.MockTransport(eutils_handler(stamps, virtual_registry.clock))
    async with httpx2.AsyncClient(transport=transport) as client:
        tools = [PubMedTool(client, api_key=api_key) for _ in range(20)]
        results = await asyncio.gather(*(tool.search(f"statins sepsis {n}", 5) for n, tool in enumerate(tools)))

    assert [len(found) for found in results] == [2] * 20
    assert len(stamps) == 40
    assert max_in_any_window(stamps) <= limit
    # The limit was reached, not merely never tested: some window is full.
    assert max_in_any_window(stamps) == limit


def test_registry_hands_out_one_shared_limiter_per_key_situation() -> None:
    assert ncbi_limiter(has_key=False) is ncbi_limiter(has_key=False)
    assert ncbi_limiter(has_key=True) is ncbi_limiter(has_key=True)
    assert ncbi_limiter(has_key=False).max_calls == NCBI_RATE_WITHOUT_KEY == 3
    assert ncbi_limiter(has_key=True).max_calls == NCBI_RATE_WITH_KEY == 10


def test_tools_without_an_injected_limiter_use_the_registry(virtual_registry: VirtualTime) -> None:
    client = httpx2.AsyncClient()
    assert PubMedTool(client).limiter is ncbi_limiter(has_key=False)
    assert PubMedTool(client, api_key=SecretStr("k")).limiter is ncbi_limiter(has_key=True)
    assert PubMedTool(client, api_key=SecretStr("  ")).limiter is ncbi_limiter(has_key=False)


def test_slots_are_first_come_first_served_and_a_full_period_apart() -> None:
    now = [0.0]
    limiter = SlidingWindowLimiter(3, 1.0, clock=lambda: now[0])
    assert [limiter.reserve() for _ in range(4)] == [0.0, 0.0, 0.0, 1.0]
    now[0] = 0.5
    assert [limiter.reserve() for _ in range(3)] == [0.5, 0.5, 1.5]
    now[0] = 10.0
    assert limiter.reserve() == 0.0


def test_one_limiter_serves_several_event_loops_and_threads() -> None:
    waits: list[float] = []
    lock = threading.Lock()

    async def record(seconds: float) -> None:
        with lock:
            waits.append(round(seconds, 6))

    limiter = SlidingWindowLimiter(3, 1.0, clock=lambda: 0.0, sleep=record)

    def run_loop() -> None:
        async def three() -> None:
            for _ in range(3):
                await limiter.acquire()

        asyncio.run(three())

    threads = [threading.Thread(target=run_loop) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Nine acquisitions at one instant from three loops: three now, three a period later, three two later.
    assert sorted(waits) == [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]


@pytest.mark.parametrize(("calls", "period"), [(0, 1.0), (3, 0.0)])
def test_nonsense_limits_are_refused(calls: int, period: float) -> None:
    with pytest.raises(ValueError, match="must be"):
        SlidingWindowLimiter(calls, period)
