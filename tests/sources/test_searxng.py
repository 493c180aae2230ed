"""The SearXNG source against a MockTransport that speaks SearXNG's JSON."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from deepcritical.errors import RateLimitError, SearchError
from deepcritical.sources.searxng import (
    SearxngSearchError,
    SearxngTool,
    parse_response,
    results_to_evidence,
)

BASE = "https://searx.example.org"

# The shape a SearXNG instance returns for format=json (fields as SearXNG serialises them:
# parsed_url is a urlparse tuple, publishedDate may be null, engines report [name, reason]).
RESPONSE: dict[str, Any] = {
    "query": "metformin alzheimer",
    "number_of_results": 1430,
    "results": [
        {
            "url": "https://www.nature.com/articles/s41598-023-00001",
            "title": "Metformin and dementia risk: a cohort study",
            "content": "Metformin use was associated with lower dementia incidence.",
            "engine": "google",
            "engines": ["google", "duckduckgo"],
            "parsed_url": ["https", "www.nature.com", "/articles/s41598-023-00001", "", "", ""],
            "publishedDate": "2023-04-12T00:00:00",
            "score": 4.0,
            "category": "general",
            "positions": [1, 2],
        },
        {
            "url": "https://clinicaltrials.gov/study/NCT00000001",
            "title": "Metformin in Amnestic MCI",
            "content": "A phase 2 trial of metformin in mild cognitive impairment.",
            "engine": "bing",
            "parsed_url": ["https", "clinicaltrials.gov", "/study/NCT00000001", "", "", ""],
            "publishedDate": None,
            "score": 2.0,
            "category": "general",
        },
        {
            "url": "https://example.org/no-snippet",
            "title": "A page without a snippet",
            "content": "",
            "parsed_url": ["https", "example.org", "/no-snippet", "", "", ""],
            "score": 1.0,
        },
    ],
    "answers": [],
    "corrections": [],
    "infoboxes": [],
    "suggestions": ["metformin dementia"],
    "unresponsive_engines": [["brave", "timeout"]],
}

Handler = Callable[[httpx2.Request], httpx2.Response]


class Recorder:
    """A MockTransport handler that records requests and answers with a fixed response."""

    def __init__(self, response: Callable[[httpx2.Request], httpx2.Response]) -> None:
        self.response = response
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return self.response(request)


def json_answer(data: Any, status: int = 200) -> Recorder:
    return Recorder(lambda request: httpx2.Response(status, json=data))


def client_for(handler: Handler) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


async def no_sleep(seconds: float) -> None:
    return None


def searxng(handler: Handler, **options: Any) -> SearxngTool:
    return SearxngTool(client_for(handler), base_url=options.pop("base_url", BASE), sleep=no_sleep, **options)


class TestClient:
    def test_empty_base_url_is_rejected(self) -> None:
        with pytest.raises(ValueError, match="base_url"):
            SearxngTool(client_for(json_answer(RESPONSE)), base_url="")
        with pytest.raises(ValueError, match="base_url"):
            SearxngTool(client_for(json_answer(RESPONSE)), base_url="   ")

    def test_trailing_slash_is_dropped(self) -> None:
        assert SearxngTool(client_for(json_answer(RESPONSE)), base_url=BASE + "/").base_url == BASE

    async def test_happy_path_request_and_normalised_results(self) -> None:
        recorder = json_answer(RESPONSE)

        results = await searxng(recorder).results("metformin alzheimer")

        [request] = recorder.requests
        assert request.method == "GET"
        assert str(request.url.copy_with(query=None)) == f"{BASE}/search"
        assert dict(request.url.params) == {
            "q": "metformin alzheimer",
            "format": "json",
            "pageno": "1",
            "categories": "general",
        }
        assert request.headers["Accept"] == "application/json"
        assert results.query == "metformin alzheimer"
        assert results.error is None
        assert results.total == 1430
        first = results.results[0]
        assert (first.title, first.url, first.snippet, first.source, first.rank) == (
            "Metformin and dementia risk: a cohort study",
            "https://www.nature.com/articles/s41598-023-00001",
            "Metformin use was associated with lower dementia incidence.",
            "www.nature.com",
            1,
        )
        assert [result.rank for result in results.results] == [1, 2, 3]

    async def test_defaults_from_the_constructor(self) -> None:
        recorder = json_answer(RESPONSE)
        client = searxng(
            recorder, default_categories=("science", "news"), default_language="en", default_time_range="year"
        )

        await client.results("q")

        params = recorder.requests[0].url.params
        assert params["categories"] == "science,news"
        assert params["language"] == "en"
        assert params["time_range"] == "year"

    async def test_per_call_overrides_beat_the_defaults(self) -> None:
        recorder = json_answer(RESPONSE)
        client = searxng(recorder, default_language="en", default_time_range="year")

        await client.results("q", page=3, categories=["science"], language="de", time_range="month")
        await client.results("q", page=0, categories=[], language="", time_range="")

        first, second = (request.url.params for request in recorder.requests)
        assert (first["pageno"], first["categories"], first["language"], first["time_range"]) == (
            "3",
            "science",
            "de",
            "month",
        )
        # Empty overrides switch a default off; a page below 1 is page 1.
        assert dict(second) == {"q": "q", "format": "json", "pageno": "1"}

    async def test_max_results_slices_client_side(self) -> None:
        results = await searxng(json_answer(RESPONSE)).results("q", max_results=1)

        assert len(results.results) == 1
        assert results.total == 1430

    async def test_raw_response_and_raw_items_are_preserved(self) -> None:
        results = await searxng(json_answer(RESPONSE)).results("q")

        assert results.raw == RESPONSE
        assert results.results[0].raw == RESPONSE["results"][0]
        assert results.results[0].raw["engines"] == ["google", "duckduckgo"]

    def test_raw_is_kept_out_of_serialisation(self) -> None:
        # What an agent receives from the tool: no engine metadata, no duplicated response body.
        dumped = parse_response("q", RESPONSE).model_dump()

        assert "raw" not in dumped
        assert "raw" not in dumped["results"][0]

    @pytest.mark.parametrize(("reported", "expected"), [(0, 3), (-4, 3), ("1430", 3), (True, 3), (12.5, 3), (7, 7)])
    def test_total_uses_number_of_results_only_when_it_is_a_positive_int(self, reported: Any, expected: int) -> None:
        assert parse_response("q", {**RESPONSE, "number_of_results": reported}).total == expected

    @pytest.mark.parametrize("results", [None, "oops", {"url": "x"}, 3])
    def test_missing_or_non_list_results_is_no_results_with_a_reason(self, results: Any) -> None:
        data = {"query": "q"} if results is None else {"query": "q", "results": results}

        parsed = parse_response("q", data)

        assert parsed.results == []
        assert parsed.total == 0
        assert parsed.error is not None
        assert "'results'" in parsed.error

    def test_empty_results_name_the_unresponsive_engines(self) -> None:
        data = {"results": [], "number_of_results": 0, "unresponsive_engines": [["brave", "timeout"], ["qwant", ""]]}

        parsed = parse_response("q", data)

        assert parsed.error == "No results found in SearXNG response (unresponsive engines: brave timeout, qwant)"

    def test_items_without_a_usable_url_are_skipped(self) -> None:
        data = {"results": ["text", {"title": "no url"}, {"url": "magnet:?xt=urn"}, {"url": "https://ok.org"}]}

        parsed = parse_response("q", data)

        assert [(r.url, r.title, r.rank) for r in parsed.results] == [("https://ok.org", "https://ok.org", 4)]

    def test_position_is_the_rank_when_the_instance_gives_one(self) -> None:
        data = {"results": [{"url": "https://a.org", "position": 5}, {"url": "https://b.org", "position": True}]}

        assert [r.rank for r in parse_response("q", data).results] == [5, 2]

    def test_source_prefers_the_source_field_then_the_host(self) -> None:
        data = {
            "results": [
                {"url": "https://a.org/x", "source": "PubMed Central", "parsed_url": ["https", "a.org"]},
                {"url": "https://b.org/x", "parsed_url": {"hostname": "b.org"}},
                {"url": "https://c.org/x", "parsed_url": "c.org"},
            ]
        }

        assert [r.source for r in parse_response("q", data).results] == ["PubMed Central", "b.org", None]

    @pytest.mark.parametrize("body", [[1, 2], "text", 3, None])
    def test_a_body_that_is_not_an_object_is_an_error(self, body: Any) -> None:
        with pytest.raises(SearxngSearchError, match=r"^searxng: expected a JSON object"):
            parse_response("q", body)


class TestClientErrors:
    async def test_server_error_is_retried_then_reported(self) -> None:
        recorder = Recorder(lambda request: httpx2.Response(502, text="Bad Gateway"))

        with pytest.raises(SearxngSearchError, match=r"^searxng: HTTP 502 after 3 attempt") as raised:
            await searxng(recorder).results("q")

        assert len(recorder.requests) == 3
        assert not isinstance(raised.value, RateLimitError)

    async def test_forbidden_explains_the_json_format_setting(self) -> None:
        recorder = Recorder(lambda request: httpx2.Response(403, text="Forbidden"))

        with pytest.raises(SearxngSearchError, match="HTTP 403") as raised:
            await searxng(recorder).results("q")

        assert "settings.yml" in str(raised.value)
        assert len(recorder.requests) == 1

    async def test_rate_limit_stays_a_rate_limit_error(self) -> None:
        recorder = Recorder(lambda request: httpx2.Response(429, headers={"Retry-After": "1"}))
        waits: list[float] = []

        async def record_sleep(seconds: float) -> None:
            waits.append(seconds)

        client = SearxngTool(client_for(recorder), base_url=BASE, sleep=record_sleep)

        with pytest.raises(RateLimitError, match=r"^searxng: rate limited"):
            await client.results("q")
        assert waits == [1.0, 1.0]

    @pytest.mark.parametrize(
        ("exception", "fragment"),
        [
            (httpx2.ReadTimeout("read timed out"), "no answer from"),
            (httpx2.ConnectTimeout("connect timed out"), "no answer from"),
            (httpx2.ConnectError("name or service not known"), "ConnectError"),
            (httpx2.RemoteProtocolError("peer closed connection"), "RemoteProtocolError"),
        ],
    )
    async def test_transport_failures_become_search_errors(self, exception: Exception, fragment: str) -> None:
        def fail(request: httpx2.Request) -> httpx2.Response:
            raise exception

        with pytest.raises(SearchError) as raised:
            await searxng(fail).search("q")

        assert str(raised.value).startswith("searxng: ")
        assert fragment in str(raised.value)

    async def test_invalid_json_is_an_error(self) -> None:
        recorder = Recorder(
            lambda r: httpx2.Response(200, text="<html>login</html>", headers={"content-type": "text/html"})
        )

        with pytest.raises(SearxngSearchError, match=r"^searxng: not JSON from searx\.example\.org \(text/html\)"):
            await searxng(recorder).results("q")

    async def test_redirect_is_an_error_not_a_parse_failure(self) -> None:
        recorder = Recorder(lambda r: httpx2.Response(302, headers={"Location": "https://searx.example.org/login"}))

        with pytest.raises(SearchError, match=r"^searxng: HTTP 302"):
            await searxng(recorder).results("q")


class TestTool:
    def tool(self, handler: Handler) -> SearxngTool:
        return SearxngTool(client_for(handler), base_url=BASE)

    async def test_results_become_evidence(self) -> None:
        evidence = await self.tool(json_answer(RESPONSE)).search("metformin alzheimer", max_results=10)

        # The third result has no snippet: a title alone is not evidence.
        assert [item.citation.url for item in evidence] == [
            "https://www.nature.com/articles/s41598-023-00001",
            "https://clinicaltrials.gov/study/NCT00000001",
        ]
        first, second = evidence
        assert first.citation.source == "searxng"
        assert first.found_by == ("searxng",)
        assert first.content == "Metformin use was associated with lower dementia incidence."
        assert first.citation.title == "Metformin and dementia risk: a cohort study"
        assert (first.citation.date, second.citation.date) == ("2023-04-12", "Unknown")

    async def test_relevance_is_the_score_relative_to_the_best(self) -> None:
        evidence = await self.tool(json_answer(RESPONSE)).search("q")

        assert [item.relevance for item in evidence] == pytest.approx([1.0, 0.5])

    async def test_relevance_falls_back_to_rank_decay_without_scores(self) -> None:
        data = {"results": [{"url": f"https://e.org/{n}", "content": f"text {n}", "score": "high"} for n in range(3)]}

        evidence = await self.tool(json_answer(data)).search("q")

        assert [item.relevance for item in evidence] == pytest.approx([1.0, 0.95, 0.9])

    async def test_long_fields_are_truncated_to_fit_evidence(self) -> None:
        data = {"results": [{"url": "https://e.org/1", "title": "T" * 800, "content": "C" * 4000}]}

        [item] = await self.tool(json_answer(data)).search("q")

        assert (len(item.citation.title), len(item.content)) == (500, 1000)

    async def test_empty_response_gives_no_evidence(self) -> None:
        assert await self.tool(json_answer({"results": []})).search("q") == []

    async def test_errors_surface_as_search_errors(self) -> None:
        with pytest.raises(SearchError, match=r"^searxng: "):
            await self.tool(Recorder(lambda r: httpx2.Response(404, text="nope"))).search("q")


def test_a_scholarly_results_doi_becomes_the_evidence_identity() -> None:
    data = {
        "results": [
            {"title": "Paper", "url": "https://journal.example/a1", "content": "Abstract text.", "doi": "10.5555/ABC"},
            {"title": "Page", "url": "https://blog.example/p", "content": "Some text.", "doi": "not a doi"},
        ]
    }
    paper, page = results_to_evidence(parse_response("q", data, max_results=5))
    assert paper.citation.doi == "10.5555/abc"
    assert paper.id == "doi:10.5555/abc"
    assert page.citation.doi is None
    assert page.id == "url:https://blog.example/p"
