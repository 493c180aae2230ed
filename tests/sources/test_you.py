"""You.com ResearchEngine: cached context that never fails, and web results as Evidence."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx2
import pytest
from pydantic import SecretStr
from structlog.testing import capture_logs

from deepcritical.errors import SearchError, SourceDisabledError
from deepcritical.source_table import YOU_BASE_URL
from deepcritical.sources.you import ResearchEngine, parse_web_results

SECRET = "you-test-key-4f9c2e"

# The response shape of GET /v1/search (results.web with snippets, results.news, metadata).
RESPONSE: dict[str, Any] = {
    "results": {
        "web": [
            {
                "url": "https://www.alz.org/research/metformin",
                "title": "Metformin and Alzheimer's disease",
                "description": "An overview of metformin research in dementia.",
                "snippets": ["Snippet one.", "Snippet two.", "Snippet three."],
                "page_age": "2024-02-01T10:00:00",
                "authors": ["A. Author", "B. Author"],
                "favicon_url": "https://www.alz.org/favicon.ico",
            },
            {
                "url": "https://example.org/ampk",
                "title": "AMPK signalling",
                "description": "AMPK is a cellular energy sensor.",
                "snippets": ["Snippet four.", "Snippet five.", "Snippet six."],
            },
            {
                "url": "https://example.org/description-only",
                "title": "Description only",
                "description": "Only a description here.",
            },
        ],
        "news": [{"url": "https://news.example.org/1", "title": "News", "description": "A news item."}],
    },
    "metadata": {"request_uuid": "942ccbdd-7705-4d9c-9d37-4ef386658e90", "query": "metformin", "latency": 0.1},
}


class Recorder:
    def __init__(self, answer: Callable[[httpx2.Request], httpx2.Response]) -> None:
        self.answer = answer
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return self.answer(request)


def ok(data: Any = RESPONSE) -> Recorder:
    return Recorder(lambda request: httpx2.Response(200, json=data))


async def no_sleep(seconds: float) -> None:
    return None


def engine(recorder: Recorder, api_key: str | None = SECRET) -> ResearchEngine:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(recorder))
    return ResearchEngine(client, api_key=SecretStr(api_key) if api_key else None, sleep=no_sleep)


class TestContext:
    async def test_top_five_snippets_joined_by_newlines(self) -> None:
        text = await engine(ok()).context("metformin alzheimer")

        assert text == "Snippet one.\nSnippet two.\nSnippet three.\nSnippet four.\nSnippet five."

    async def test_request_endpoint_query_and_key_header(self) -> None:
        recorder = ok()

        await engine(recorder).context("metformin alzheimer")

        [request] = recorder.requests
        assert str(request.url.copy_with(query=None)) == f"{YOU_BASE_URL}/v1/search"
        assert dict(request.url.params) == {"query": "metformin alzheimer"}
        assert request.headers["X-API-Key"] == SECRET

    async def test_identical_queries_hit_the_cache(self) -> None:
        recorder = ok()
        research = engine(recorder)

        first = await research.context("metformin")
        second = await research.context("metformin")

        assert first == second != ""
        assert len(recorder.requests) == 1

    async def test_different_queries_are_cached_separately(self) -> None:
        recorder = ok()
        research = engine(recorder)

        await research.context("metformin")
        await research.context("AMPK")
        await research.context("metformin")
        await research.context("AMPK")

        assert [request.url.params["query"] for request in recorder.requests] == ["metformin", "AMPK"]

    async def test_concurrent_identical_queries_cost_one_call(self) -> None:
        arrived, gate = asyncio.Event(), asyncio.Event()
        requests: list[httpx2.Request] = []

        async def held(request: httpx2.Request) -> httpx2.Response:
            # Hold the first answer until every caller has had its turn, so they really overlap.
            requests.append(request)
            arrived.set()
            await gate.wait()
            return httpx2.Response(200, json=RESPONSE)

        client = httpx2.AsyncClient(transport=httpx2.MockTransport(held))
        research = ResearchEngine(client, api_key=SecretStr(SECRET))
        tasks = [asyncio.create_task(research.context("metformin")) for _ in range(5)]
        await arrived.wait()
        gate.set()
        answers = await asyncio.wait_for(asyncio.gather(*tasks), timeout=5)

        assert len(set(answers)) == 1
        assert answers[0] != ""
        assert len(requests) == 1

    async def test_cache_is_per_engine(self) -> None:
        recorder = ok()

        await engine(recorder).context("metformin")
        await engine(recorder).context("metformin")

        assert len(recorder.requests) == 2

    async def test_results_without_snippets_contribute_their_description(self) -> None:
        data = {"results": {"web": [RESPONSE["results"]["web"][2]]}}

        assert await engine(ok(data)).context("q") == "Only a description here."

    async def test_no_web_results_is_an_empty_but_cached_answer(self) -> None:
        recorder = ok({"results": {"news": RESPONSE["results"]["news"]}})
        research = engine(recorder)

        assert await research.context("q") == ""
        assert await research.context("q") == ""
        assert len(recorder.requests) == 1

    async def test_term_queries(self) -> None:
        recorder = ok()
        research = engine(recorder)

        await research.get_term_context("AMPK")
        await research.get_term_context("tau", domain="neurology")

        queries = [request.url.params["query"] for request in recorder.requests]
        assert queries[0] == "What is AMPK in biomedical research? Definition and mechanism."
        assert queries[1] == "What is tau in neurology? Definition and mechanism."
        assert len(queries) == 2

    async def test_blank_query_asks_nothing(self) -> None:
        recorder = ok()

        assert await engine(recorder).context("   ") == ""
        assert recorder.requests == []


def failing(kind: str) -> Recorder:
    def answer(request: httpx2.Request) -> httpx2.Response:
        if kind == "timeout":
            raise httpx2.ReadTimeout("read timed out", request=request)
        if kind == "connect":
            raise httpx2.ConnectError("connection refused", request=request)
        if kind == "status":
            return httpx2.Response(401, json={"detail": "Invalid API key"})
        if kind == "server":
            return httpx2.Response(503, text="unavailable")
        if kind == "json":
            return httpx2.Response(200, text="<html>not json</html>")
        return httpx2.Response(200, json={"unexpected": True})

    return Recorder(answer)


class TestContextFailures:
    @pytest.mark.parametrize("kind", ["timeout", "connect", "status", "server", "json", "shape"])
    async def test_failure_is_logged_and_answered_with_empty_text(self, kind: str) -> None:
        recorder = failing(kind)

        with capture_logs() as logs:
            text = await engine(recorder).context("metformin")

        assert text == ""
        warnings = [
            entry for entry in logs if entry["log_level"] == "warning" and entry["event"] == "you_context_failed"
        ]
        assert len(warnings) == 1
        assert warnings[0]["query"] == "metformin"
        assert SECRET not in repr(logs)

    async def test_missing_key_is_logged_and_sends_nothing(self) -> None:
        recorder = ok()

        with capture_logs() as logs:
            text = await engine(recorder, api_key=None).context("metformin")

        assert text == ""
        assert recorder.requests == []
        assert any("YOU_API_KEY" in str(entry.get("error")) for entry in logs)

    async def test_failures_are_not_cached(self) -> None:
        answers = iter([httpx2.Response(401, json={}), httpx2.Response(200, json=RESPONSE)])
        recorder = Recorder(lambda request: next(answers))
        research = engine(recorder)

        assert await research.context("metformin") == ""
        assert await research.context("metformin") != ""
        assert len(recorder.requests) == 2


class TestSearch:
    async def test_web_results_become_evidence(self) -> None:
        evidence = await engine(ok()).search("metformin", max_results=10)

        assert [item.citation.url for item in evidence] == [
            "https://www.alz.org/research/metformin",
            "https://example.org/ampk",
            "https://example.org/description-only",
        ]
        first = evidence[0]
        assert first.content == "Snippet one.\nSnippet two.\nSnippet three."
        assert first.citation.source == "you"
        assert first.found_by == ("you",)
        assert first.citation.title == "Metformin and Alzheimer's disease"
        assert first.citation.date == "2024-02-01"
        assert first.citation.authors == ("A. Author", "B. Author")
        assert evidence[1].citation.date == "Unknown"
        assert evidence[2].content == "Only a description here."
        assert [item.relevance for item in evidence] == pytest.approx([1.0, 0.95, 0.9])

    async def test_asks_for_max_results(self) -> None:
        recorder = ok()

        await engine(recorder).search("metformin", max_results=3)
        await engine(recorder).search("metformin", max_results=500)

        assert [request.url.params["count"] for request in recorder.requests] == ["3", "100"]
        assert all(request.headers["X-API-Key"] == SECRET for request in recorder.requests)

    async def test_items_without_url_or_text_are_skipped(self) -> None:
        data = {
            "results": {
                "web": [
                    {"title": "no url", "snippets": ["x"]},
                    {"url": "https://a.org", "title": "no text"},
                    {"url": "not a url", "snippets": ["x"]},
                    "junk",
                    {"url": "https://b.org", "snippets": ["kept", 7, ""]},
                ]
            }
        }

        [item] = await engine(ok(data)).search("q")

        assert (item.citation.url, item.citation.title, item.content) == ("https://b.org", "https://b.org", "kept")

    async def test_missing_key_disables_the_source(self) -> None:
        recorder = ok()

        with pytest.raises(SourceDisabledError, match=r"^you: YOU_API_KEY is not set$"):
            await engine(recorder, api_key=None).search("metformin")
        assert recorder.requests == []

    @pytest.mark.parametrize("kind", ["status", "server", "json", "shape", "timeout"])
    async def test_failures_raise_search_errors_without_the_key(self, kind: str) -> None:
        with pytest.raises(SearchError) as raised:
            await engine(failing(kind)).search("metformin")

        assert str(raised.value).startswith("you: ")
        assert SECRET not in str(raised.value)


@pytest.mark.parametrize("data", [None, [], "text", {"results": []}, {"results": None}, {}])
def test_parser_rejects_bodies_that_are_not_search_responses(data: Any) -> None:
    with pytest.raises(SearchError, match=r"^you: unexpected response"):
        parse_web_results(data)


def test_parser_tolerates_a_response_without_web_results() -> None:
    assert parse_web_results({"results": {"news": []}}) == []
    assert parse_web_results({"results": {"web": "oops"}}) == []
