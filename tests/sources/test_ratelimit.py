"""NCBI's limit holds for everyone who shares it: concurrent searches and tools in one process, every
process on the machine (SQLite under the home), every machine (Redis, a real server started here)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
from pydantic import SecretStr

from deepcritical.config import Settings
from deepcritical.errors import SearchError
from deepcritical.sources.pubmed import PubMedTool
from deepcritical.sources.ratelimit import (
    NCBI_RATE_WITH_KEY,
    NCBI_RATE_WITHOUT_KEY,
    RATE_LIMIT_FILE,
    PacedLimiter,
    ncbi_bucket_name,
    ncbi_limiter,
    ncbi_spacing,
    redis_limiter,
    sqlite_limiter,
)
from helpers.eutils import eutils_handler
from helpers.servers import free_port


class VirtualTime:
    """A fake clock and sleep. Sleepers wake in time order, and the clock only moves forward to the
    earliest sleeper's wake time, so whatever runs between two wake-ups sees one instant."""

    def __init__(self) -> None:
        self.now = 0.0
        self._wakes: list[float] = []

    def clock_ms(self) -> int:
        return round(self.now * 1000)

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


def smallest_gap(stamps: list[int]) -> int:
    ordered = sorted(stamps)
    return min(later - earlier for earlier, later in itertools.pairwise(ordered))


@pytest.mark.parametrize(("api_key", "limit"), [(None, NCBI_RATE_WITHOUT_KEY), (SecretStr("k"), NCBI_RATE_WITH_KEY)])
async def test_twenty_concurrent_searches_from_separate_tools_share_one_limit(
    api_key: SecretStr | None, limit: int
) -> None:
    virtual = VirtualTime()
    limiter = PacedLimiter.in_memory(ncbi_spacing(api_key is not None), clock=virtual.clock_ms, sleep=virtual.sleep)
    stamps: list[float] = []
    transport = httpx2.MockTransport(eutils_handler(stamps, lambda: virtual.now))
    async with httpx2.AsyncClient(transport=transport) as client:
        tools = [PubMedTool(client, api_key=api_key, limiter=limiter) for _ in range(20)]
        results = await asyncio.gather(*(tool.search(f"statins sepsis {n}", 5) for n, tool in enumerate(tools)))

    assert [len(found) for found in results] == [2] * 20
    assert len(stamps) == 40
    assert max_in_any_window(stamps) <= limit
    # The limit was reached, not merely never tested: some window is full.
    assert max_in_any_window(stamps) == limit


def test_spacing_leaves_a_margin_inside_ncbis_second_and_uses_nine_tenths_of_the_rate() -> None:
    for has_key, rate in ((False, NCBI_RATE_WITHOUT_KEY), (True, NCBI_RATE_WITH_KEY)):
        spacing = ncbi_spacing(has_key)
        assert rate * spacing >= 1.05  # rate + 1 requests span NCBI's second and 50 ms more for jitter
        assert 1 / (rate * spacing) >= 0.9  # at least 90 % of the allowed rate is used


async def test_a_request_that_missed_its_slot_waits_for_the_next_free_one() -> None:
    virtual = VirtualTime()
    limiter = PacedLimiter.in_memory(0.5, clock=virtual.clock_ms, sleep=virtual.sleep)
    await limiter.acquire()  # slot 0.0
    virtual.now = 0.2  # the connection took 200 ms to open: the request would go out late
    await limiter.confirm()
    assert virtual.now == 0.5  # it waited for the next slot instead
    await limiter.confirm()  # on time now: no further wait
    assert virtual.now == 0.5


class TracingTransport(httpx2.AsyncBaseTransport):
    """Reports httpcore's trace events, as the real transport does, then answers."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        trace = request.extensions["trace"]
        for event in ("connection.connect_tcp.started", "http11.send_request_headers.started"):
            self.events.append(event)
            await trace(event, {})
        self.events.append("sent")
        return httpx2.Response(200, text="ok")


async def test_the_slot_is_confirmed_after_the_connection_is_ready_just_before_sending() -> None:
    from deepcritical.sources.base import get_with_retry

    events: list[str] = []

    async def before_request() -> None:
        events.append("acquire")

    async def before_send() -> None:
        events.append("confirm")

    async with httpx2.AsyncClient(transport=TracingTransport(events)) as client:
        await get_with_retry(
            client, "https://x.org", source="pubmed", read=str, before_request=before_request, before_send=before_send
        )
    assert events == [
        "acquire",
        "connection.connect_tcp.started",
        "http11.send_request_headers.started",
        "confirm",
        "sent",
    ]


def test_the_bucket_is_named_after_a_hash_of_the_key_never_the_key() -> None:
    assert ncbi_bucket_name(None) == "ncbi_anonymous"
    named = ncbi_bucket_name(SecretStr("0123456789abcdef0123456789abcdef0123"))
    assert named.startswith("ncbi_key_")
    assert "0123456789" not in named
    assert named == ncbi_bucket_name(SecretStr(" 0123456789abcdef0123456789abcdef0123 "))
    assert named != ncbi_bucket_name(SecretStr("another-key-entirely"))


def test_two_connections_to_one_file_reserve_slots_in_turn(tmp_path: Path) -> None:
    """What two processes see: two SQLite connections and two file-lock handles on the same file."""
    now = [10_000]
    first = sqlite_limiter(tmp_path / RATE_LIMIT_FILE, "ncbi_anonymous", 0.36, clock=lambda: now[0])
    second = sqlite_limiter(tmp_path / RATE_LIMIT_FILE, "ncbi_anonymous", 0.36, clock=lambda: now[0])
    # All asking at one instant: each gets the next free slot, exactly the spacing apart.
    assert [first.reserve(), second.reserve(), first.reserve()] == [10_000, 10_360, 10_720]
    now[0] = 20_000  # long after: free at once
    assert second.reserve() == 20_000


async def test_concurrent_waiters_sleep_until_their_own_slot_a_spacing_apart() -> None:
    virtual = VirtualTime()
    limiter = PacedLimiter.in_memory(0.5, clock=virtual.clock_ms, sleep=virtual.sleep)
    sent: list[tuple[int, float]] = []

    async def request(number: int) -> None:
        await limiter()
        sent.append((number, virtual.now))

    await asyncio.gather(*(request(n) for n in range(4)))
    assert sorted(time for _, time in sent) == [0.0, 0.5, 1.0, 1.5]


def test_the_limiter_lives_under_the_home_or_in_redis(tmp_path: Path) -> None:
    local = ncbi_limiter(Settings(_env_file=None, DEEPCRITICAL_HOME=str(tmp_path)))  # type: ignore[call-arg]
    assert local.where == str(tmp_path / RATE_LIMIT_FILE)
    assert local.spacing == ncbi_spacing(False)
    shared = ncbi_limiter(
        Settings(_env_file=None, REDIS_URL="redis://:hunter22@10.1.2.3:6380/0", NCBI_API_KEY="abcd1234")  # type: ignore[call-arg]
    )
    assert shared.where == "Redis at 10.1.2.3:6380"
    assert shared.spacing == ncbi_spacing(True)


async def test_a_home_that_cannot_hold_the_limit_fails_pubmed_saying_what_to_fix(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    limiter = ncbi_limiter(Settings(_env_file=None, DEEPCRITICAL_HOME=str(blocker / "home")))  # type: ignore[call-arg]
    transport = httpx2.MockTransport(eutils_handler([], time.monotonic))
    async with httpx2.AsyncClient(transport=transport) as client:
        with pytest.raises(
            SearchError, match=rf"^pubmed: the NCBI rate limit kept in {blocker}/home/.*DEEPCRITICAL_HOME"
        ):
            await PubMedTool(client, limiter=limiter).search("statins 1", 5)


async def test_an_unreachable_redis_fails_pubmed_naming_it_without_its_password() -> None:
    limiter = redis_limiter(f"redis://:hunter22@127.0.0.1:{free_port()}/0", "ncbi_anonymous", 0.36)
    transport = httpx2.MockTransport(eutils_handler([], time.monotonic))
    async with httpx2.AsyncClient(transport=transport) as client:
        with pytest.raises(
            SearchError, match=r"^pubmed: the NCBI rate limit kept in Redis at 127\.0\.0\.1:\d+"
        ) as raised:
            await PubMedTool(client, limiter=limiter).search("statins 1", 5)
    assert "REDIS_URL" in str(raised.value)
    assert "hunter22" not in str(raised.value)


# A search process as a run builds it: settings from the environment, sources from run/setup.py, every
# request answered by a local E-utilities stand-in (no network).
SEARCHER = """
import asyncio, json, sys
sys.path.insert(0, {tests!r})
import httpx2
from helpers.eutils import eutils_handler
from deepcritical.config import load_settings
from deepcritical.run import setup
from deepcritical.sources.factory import make_http_client

async def main(first):
    settings = load_settings()
    async with make_http_client(httpx2.MockTransport(eutils_handler([], lambda: 0.0))) as client:
        handler = setup.sources(settings, client).handler
        results = await asyncio.gather(*(handler.execute(f"statins sepsis {{n}}", 5) for n in range(first, first + 5)))
    print(json.dumps([len(result.evidence) for result in results]))

asyncio.run(main(int(sys.argv[1])))
"""


def run_searchers(*envs: dict[str, str]) -> None:
    """One search process per environment, all at once; each runs five concurrent PubMed searches."""
    script = SEARCHER.format(tests=str(Path(__file__).parents[1]))
    base = {key: value for key, value in os.environ.items() if key not in {"CHROMA_HOST", "REDIS_URL", "DEMO_MODE"}}
    base |= {"DEEPCRITICAL_SOURCES": "pubmed", "NCBI_API_KEY": "test-key-for-the-limit"}
    started = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(10 * n)],
            env=base | env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n, env in enumerate(envs)
    ]
    for process in started:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
        assert json.loads(stdout.strip().splitlines()[-1]) == [2] * 5


@pytest.mark.slow
def test_two_processes_on_one_machine_share_one_limit(tmp_path: Path) -> None:
    run_searchers({"DEEPCRITICAL_HOME": str(tmp_path)}, {"DEEPCRITICAL_HOME": str(tmp_path)})
    table = ncbi_bucket_name(SecretStr("test-key-for-the-limit"))
    with sqlite3.connect(tmp_path / RATE_LIMIT_FILE) as database:
        granted = [row[0] for row in database.execute(f"SELECT item_timestamp FROM '{table}'")]
    # Every request of both processes (2 x 5 searches x esearch + efetch) took a slot in one shared log,
    # and no two slots are closer than the spacing. A request that missed its slot gave it up and took
    # the next free one (``PacedLimiter.confirm``), so the log may hold a few more slots than requests.
    assert 20 <= len(granted) <= 30
    assert smallest_gap(granted) >= round(ncbi_spacing(True) * 1000)


def test_processes_anywhere_using_one_redis_share_one_limit(tmp_path: Path, redis_url: str) -> None:
    from redis import Redis

    # Two homes: as two machines would have, so only Redis can make them share.
    run_searchers(
        {"DEEPCRITICAL_HOME": str(tmp_path / "one"), "REDIS_URL": redis_url},
        {"DEEPCRITICAL_HOME": str(tmp_path / "two"), "REDIS_URL": redis_url},
    )
    key = "deepcritical:" + ncbi_bucket_name(SecretStr("test-key-for-the-limit"))
    granted = [int(score) for _, score in Redis.from_url(redis_url).zrange(key, 0, -1, withscores=True)]
    # As on one machine: one slot per request at least, more where a late request forfeited its slot.
    assert 20 <= len(granted) <= 30
    assert smallest_gap(granted) >= round(ncbi_spacing(True) * 1000)
    assert not (tmp_path / "one" / RATE_LIMIT_FILE).exists()
