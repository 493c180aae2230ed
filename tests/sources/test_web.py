"""WebTool: DDGS results become Evidence; ddgs failures become our errors; the call stays off the event loop."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from ddgs.exceptions import DDGSException, RatelimitException
from ddgs.exceptions import TimeoutException as DdgsTimeoutException

from deepcritical.errors import RateLimitError, SearchError
from deepcritical.sources import web
from deepcritical.sources.web import WebTool, published_date, rank_relevance, web_url

# Long enough that a blocked event loop shows up as a failure, never as a hung test run.
BLOCK_GUARD_SECONDS = 5.0


def result(n: int) -> dict[str, str]:
    return {"title": f"Title {n}", "href": f"https://example.org/{n}", "body": f"Body {n}"}


class FakeDdgs:
    """A DdgsLike that answers from a list, or raises, and records its calls."""

    def __init__(self, results: Sequence[Mapping[str, Any]] = (), error: Exception | None = None) -> None:
        self.results = list(results)
        self.error = error
        self.calls: list[dict[str, Any]] = []

    def text(self, query: str, *, max_results: int, safesearch: str) -> list[Mapping[str, Any]]:
        self.calls.append({"query": query, "max_results": max_results, "safesearch": safesearch})
        if self.error is not None:
            raise self.error
        return self.results


def tool_for(fake: FakeDdgs, timeout: float = 20.0) -> WebTool:
    return WebTool(ddgs_factory=lambda: fake, timeout=timeout)


async def test_recorded_ddg_results_become_evidence(ddg_data: Path) -> None:
    recorded = json.loads((ddg_data / "ddg_text_results_flat.json").read_text(encoding="utf-8"))
    tool = tool_for(FakeDdgs(recorded))

    evidence = await tool.search("google", max_results=len(recorded))

    assert len(evidence) == len(recorded)
    for item, record in zip(evidence, recorded, strict=True):
        assert item.citation.title == record["title"].strip()[:500]
        assert item.citation.url == record["href"].strip()
        assert item.content == record["body"].strip()[:1000]
        assert item.citation.source == "web"
        assert item.citation.date == "Unknown"
        assert item.found_by == ("web",)
        assert item.id.startswith(("url:", "doi:", "pmid:"))


async def test_sends_query_limit_and_safesearch() -> None:
    fake = FakeDdgs([result(1)])

    await tool_for(fake).search("  statins sepsis  ", max_results=7)

    assert fake.calls == [{"query": "statins sepsis", "max_results": 7, "safesearch": "moderate"}]


async def test_relevance_decays_with_rank_and_floors_at_half() -> None:
    evidence = await tool_for(FakeDdgs([result(n) for n in range(15)])).search("q", max_results=15)

    assert [item.relevance for item in evidence[:3]] == pytest.approx([1.0, 0.95, 0.9])
    assert evidence[10].relevance == pytest.approx(0.5)
    assert evidence[14].relevance == pytest.approx(0.5)


async def test_incomplete_items_are_skipped_but_keep_their_rank() -> None:
    items: list[dict[str, Any]] = [
        result(0),
        {"title": "No body", "href": "https://example.org/x"},
        {"title": "", "href": "https://example.org/y", "body": "empty title"},
        {"title": "No link", "body": "text"},
        {"title": "Not a web link", "href": "javascript:alert(1)", "body": "text"},
        {"title": 42, "href": "https://example.org/z", "body": "title is not text"},
        {"title": "   ", "href": "https://example.org/w", "body": "blank title"},
        result(7),
    ]

    evidence = await tool_for(FakeDdgs(items)).search("q")

    assert [item.citation.title for item in evidence] == ["Title 0", "Title 7"]
    assert evidence[1].relevance == pytest.approx(rank_relevance(7))


async def test_long_title_and_body_are_truncated() -> None:
    long = {"title": "T" * 900, "href": "https://example.org/long", "body": "B" * 5000}

    [item] = await tool_for(FakeDdgs([long])).search("q")

    assert len(item.citation.title) == 500
    assert len(item.content) == 1000


@pytest.mark.parametrize(
    ("error", "expected", "fragment"),
    [
        (RatelimitException("202 Ratelimit"), RateLimitError, "rate limited"),
        (DDGSException(RatelimitException("engine said 429")), RateLimitError, "rate limited"),
        (DdgsTimeoutException("timed out"), SearchError, "timed out"),
        (DDGSException(DdgsTimeoutException("engine timed out")), SearchError, "timed out"),
        (DDGSException("ConnectError: dns failure"), SearchError, "search failed"),
    ],
)
async def test_ddgs_errors_map_to_project_errors(error: Exception, expected: type[SearchError], fragment: str) -> None:
    with pytest.raises(expected) as raised:
        await tool_for(FakeDdgs(error=error)).search("q")

    assert str(raised.value).startswith("web: ")
    assert fragment in str(raised.value)
    if expected is SearchError:
        assert not isinstance(raised.value, RateLimitError)


async def test_ddgs_no_results_is_an_empty_answer_not_an_error() -> None:
    assert await tool_for(FakeDdgs(error=DDGSException("No results found."))).search("zzzz") == []


async def test_other_exceptions_are_not_disguised() -> None:
    # A bug in a fake or in ddgs itself is reported by the handler as a crash, not as a search error.
    with pytest.raises(KeyError):
        await tool_for(FakeDdgs(error=KeyError("bug"))).search("q")


async def test_search_runs_off_the_event_loop() -> None:
    started, released = threading.Event(), threading.Event()

    class BlockingDdgs:
        def text(self, query: str, *, max_results: int, safesearch: str) -> list[dict[str, str]]:
            started.set()
            # If this ran on the event loop, release() below could never run: fail instead of hanging.
            if not released.wait(BLOCK_GUARD_SECONDS):
                raise AssertionError("the ddgs call blocked the event loop")
            return [result(1)]

    async def release() -> None:
        assert await asyncio.to_thread(started.wait, BLOCK_GUARD_SECONDS)
        released.set()

    try:
        evidence, _ = await asyncio.wait_for(
            asyncio.gather(WebTool(ddgs_factory=BlockingDdgs).search("q"), release()), timeout=2 * BLOCK_GUARD_SECONDS
        )
    finally:
        released.set()
    assert [item.citation.title for item in evidence] == ["Title 1"]


async def test_a_hung_backend_becomes_a_search_error() -> None:
    released = threading.Event()

    class HungDdgs:
        def text(self, query: str, *, max_results: int, safesearch: str) -> list[dict[str, str]]:
            released.wait(BLOCK_GUARD_SECONDS)
            return []

    try:
        with pytest.raises(SearchError, match=r"^web: no answer from .* within 0\.01 s .*raise WEB_TIMEOUT"):
            await WebTool(ddgs_factory=HungDdgs, timeout=0.01).search("q")
    finally:
        released.set()


async def test_default_factory_builds_ddgs_with_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int | None] = []

    class RecordingDDGS(FakeDdgs):
        def __init__(self, timeout: int | None = 5) -> None:
            super().__init__([result(1)])
            built.append(timeout)

    monkeypatch.setattr(web, "DDGS", RecordingDDGS)

    evidence = await WebTool(timeout=12.5).search("q")

    assert built == [13]
    assert len(evidence) == 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://Example.org/a", "https://Example.org/a"),
        (" http://example.org ", "http://example.org"),
        ("ftp://example.org/file", ""),
        ("/relative/path", ""),
        ("http://[::1", ""),
        (None, ""),
        (3, ""),
    ],
)
def test_web_url_accepts_only_absolute_http_links(value: object, expected: str) -> None:
    assert web_url(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2023-04-12T08:30:00", "2023-04-12"),
        ("2021-07", "2021-07"),
        ("1999", "1999"),
        ("yesterday", "Unknown"),
        ("", "Unknown"),
        (None, "Unknown"),
        (20230412, "Unknown"),
    ],
)
def test_published_date(value: object, expected: str) -> None:
    assert published_date(value) == expected
