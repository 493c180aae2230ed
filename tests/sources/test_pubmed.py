"""PubMedTool requests and error paths, against scripted E-utilities answers (no network). Bodies that
usually pass when asked again (maintenance pages, cut-off bodies), timeouts and size limits: test_faults.py."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import httpx2
import pytest
import structlog
from pydantic import SecretStr

from deepcritical.errors import RateLimitError, SearchError
from deepcritical.source_table import NCBI_EUTILS_URL
from deepcritical.sources.pubmed import PubMedTool
from deepcritical.sources.query import to_pubmed_query

Reply = httpx2.Response | Callable[[httpx2.Request], httpx2.Response]


def esearch_json(*ids: str, count: int | None = None) -> httpx2.Response:
    result = {"count": str(len(ids) if count is None else count), "idlist": list(ids)}
    return httpx2.Response(200, json={"header": {"type": "esearch"}, "esearchresult": result})


def article(pmid: str, title: str = "", abstract: str | None = "An abstract.") -> str:
    abstract_xml = f"<Abstract><AbstractText>{abstract}</AbstractText></Abstract>" if abstract is not None else ""
    return (
        f'<PubmedArticle><MedlineCitation><PMID Version="1">{pmid}</PMID><Article>'
        f"<Journal><JournalIssue><PubDate><Year>2020</Year></PubDate></JournalIssue><Title>J</Title></Journal>"
        f"<ArticleTitle>{title or f'Title {pmid}'}</ArticleTitle>{abstract_xml}</Article></MedlineCitation>"
        "</PubmedArticle>"
    )


def efetch_xml(*articles: str) -> httpx2.Response:
    return httpx2.Response(200, text=f'<?xml version="1.0"?><PubmedArticleSet>{"".join(articles)}</PubmedArticleSet>')


@dataclass
class Script:
    """Answers each endpoint from its own queue of replies and records every request."""

    esearch: list[Reply] = field(default_factory=list)
    efetch: list[Reply] = field(default_factory=list)
    requests: list[httpx2.Request] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)
    gate_calls: int = 0

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        queue = self.esearch if request.url.path.endswith("/esearch.fcgi") else self.efetch
        assert queue, f"unexpected request {request.url.path}"
        reply = queue.pop(0)
        return reply(request) if callable(reply) else reply

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)

    async def gate(self) -> None:
        self.gate_calls += 1

    def params(self, endpoint: str) -> list[dict[str, str]]:
        return [dict(r.url.params) for r in self.requests if r.url.path.endswith(f"/{endpoint}.fcgi")]


@pytest.fixture
async def client_and_script() -> AsyncIterator[tuple[httpx2.AsyncClient, Script]]:
    script = Script()
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(script.handle)) as client:
        yield client, script


def make_tool(
    client: httpx2.AsyncClient,
    script: Script,
    *,
    api_key: SecretStr | None = None,
    email: str | None = None,
    tool: str = "deepcritical",
) -> PubMedTool:
    return PubMedTool(client, api_key=api_key, email=email, tool=tool, limiter=script.gate, sleep=script.sleep)


async def test_esearch_then_one_efetch_with_ncbi_identity(client_and_script: tuple[httpx2.AsyncClient, Script]) -> None:
    client, script = client_and_script
    script.esearch.append(esearch_json("11", "22", "33"))
    script.efetch.append(efetch_xml(article("11"), article("22"), article("33")))
    tool = make_tool(client, script, api_key=SecretStr("s3cret"), email="me@example.org", tool="dc-test")

    found = await tool.search("Could metformin help treat Alzheimer's disease?", max_results=3)

    assert [r.url.path for r in script.requests] == ["/entrez/eutils/esearch.fcgi", "/entrez/eutils/efetch.fcgi"]
    assert str(script.requests[0].url).startswith(NCBI_EUTILS_URL)
    identity = {"tool": "dc-test", "email": "me@example.org", "api_key": "s3cret"}
    assert script.params("esearch") == [
        {"db": "pubmed", "term": "metformin treat Alzheimer's disease", "retmode": "json", "sort": "relevance"}
        | {"retmax": "3"}
        | identity
    ]
    assert script.params("efetch") == [
        {"db": "pubmed", "id": "11,22,33", "retmode": "xml", "rettype": "abstract"} | identity
    ]
    assert [e.citation.pmid for e in found] == ["11", "22", "33"]
    assert script.gate_calls == 2


async def test_optional_identity_is_left_out_when_not_given(
    client_and_script: tuple[httpx2.AsyncClient, Script],
) -> None:
    client, script = client_and_script
    script.esearch.append(esearch_json("11"))
    script.efetch.append(efetch_xml(article("11")))
    await make_tool(client, script, email="  ").search("statins", 5)
    for params in (*script.params("esearch"), *script.params("efetch")):
        assert params["tool"] == "deepcritical"
        assert "email" not in params
        assert "api_key" not in params


async def test_results_follow_esearch_order_with_decaying_relevance(
    client_and_script: tuple[httpx2.AsyncClient, Script],
) -> None:
    client, script = client_and_script
    script.esearch.append(esearch_json("3", "1", "2"))
    script.efetch.append(efetch_xml(article("1"), article("2"), article("3")))  # efetch sorts by PMID

    found = await make_tool(client, script).search("sepsis", 10)

    assert [e.citation.pmid for e in found] == ["3", "1", "2"]
    assert [e.relevance for e in found] == pytest.approx([1.0, 0.98, 0.96])
    assert found[0].citation.url == "https://pubmed.ncbi.nlm.nih.gov/3/"
    assert found[0].found_by == ("pubmed",)


async def test_records_without_abstract_are_left_out_and_counted_in_the_log(
    client_and_script: tuple[httpx2.AsyncClient, Script],
) -> None:
    client, script = client_and_script
    script.esearch.append(esearch_json("1", "2"))
    script.efetch.append(efetch_xml(article("1", abstract=None), article("2")))

    with structlog.testing.capture_logs() as logs:
        found = await make_tool(client, script).search("sepsis", 10)

    assert [e.citation.pmid for e in found] == ["2"]
    parsed = [entry for entry in logs if entry["event"] == "pubmed_efetch_parsed"]
    assert parsed[0]["without_abstract"] == 1
    assert parsed[0]["evidence"] == 1


async def test_empty_idlist_returns_nothing_without_efetch(
    client_and_script: tuple[httpx2.AsyncClient, Script],
) -> None:
    client, script = client_and_script
    script.esearch.append(esearch_json(count=0))
    assert await make_tool(client, script).search("zzzz unheard-of term", 10) == []
    assert script.params("efetch") == []


async def test_zero_max_results_sends_nothing(client_and_script: tuple[httpx2.AsyncClient, Script]) -> None:
    client, script = client_and_script
    assert await make_tool(client, script).search("sepsis", 0) == []
    assert script.requests == []


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (httpx2.Response(200, json={"esearchresult": {"ERROR": "Invalid query"}}), "returned an error: Invalid query"),
        (httpx2.Response(200, json={"error": "Unknown database"}), "returned an error: Unknown database"),
        (
            httpx2.Response(
                200, json={"esearchresult": {"count": "0", "idlist": [], "errorlist": {"phrasesnotfound": ["abcXYZ"]}}}
            ),
            "phrasesnotfound: abcXYZ",
        ),
        (
            httpx2.Response(200, text="<eSearchResult><ERROR>Search Backend failed</ERROR></eSearchResult>"),
            "Search Backend failed",
        ),
    ],
)
async def test_esearch_error_bodies_become_search_errors(
    client_and_script: tuple[httpx2.AsyncClient, Script], reply: httpx2.Response, message: str
) -> None:
    client, script = client_and_script
    script.esearch.append(reply)
    with pytest.raises(SearchError, match=message) as caught:
        await make_tool(client, script).search("sepsis", 5)
    assert str(caught.value).startswith("pubmed: esearch")
    assert script.params("efetch") == []


async def test_rate_limit_error_body_is_a_rate_limit_error(
    client_and_script: tuple[httpx2.AsyncClient, Script],
) -> None:
    client, script = client_and_script
    script.esearch.append(httpx2.Response(200, json={"error": "API rate limit exceeded", "count": "11"}))
    with pytest.raises(RateLimitError, match="rate limit"):
        await make_tool(client, script).search("sepsis", 5)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (
            httpx2.Response(200, text="<eFetchResult><ERROR>Empty id list - nothing todo</ERROR></eFetchResult>"),
            "returned an error: Empty id list - nothing todo",
        ),
        (httpx2.Response(200, text="<ERROR>Cannot retrieve</ERROR>"), "returned an error: Cannot retrieve"),
        (httpx2.Response(200, json={"error": "Unknown id"}), "returned an error: Unknown id"),
        (httpx2.Response(200, text="<eSummaryResult/>"), "returned <eSummaryResult> instead of <PubmedArticleSet>"),
    ],
)
async def test_efetch_error_bodies_become_search_errors(
    client_and_script: tuple[httpx2.AsyncClient, Script], reply: httpx2.Response, message: str
) -> None:
    client, script = client_and_script
    script.esearch.append(esearch_json("1"))
    script.efetch.append(reply)
    with pytest.raises(SearchError, match=message) as caught:
        await make_tool(client, script).search("sepsis", 5)
    assert str(caught.value).startswith("pubmed: efetch")


async def test_429_honours_retry_after_then_succeeds(client_and_script: tuple[httpx2.AsyncClient, Script]) -> None:
    client, script = client_and_script
    script.esearch += [httpx2.Response(429, headers={"Retry-After": "7"}), esearch_json("1")]
    script.efetch.append(efetch_xml(article("1")))

    found = await make_tool(client, script).search("sepsis", 5)

    assert [e.citation.pmid for e in found] == ["1"]
    assert script.sleeps == [7.0]
    assert script.gate_calls == 3  # the retry waited on the rate limiter too


async def test_503_until_retries_run_out_is_a_search_error(
    client_and_script: tuple[httpx2.AsyncClient, Script],
) -> None:
    client, script = client_and_script
    script.esearch += [httpx2.Response(503, text="Service Unavailable")] * 3
    with pytest.raises(SearchError, match="HTTP 503 after 3 attempt") as caught:
        await make_tool(client, script).search("sepsis", 5)
    assert not isinstance(caught.value, RateLimitError)
    assert script.sleeps == [1.0, 2.0]


async def test_429_until_retries_run_out_is_a_rate_limit_error(
    client_and_script: tuple[httpx2.AsyncClient, Script],
) -> None:
    client, script = client_and_script
    script.esearch.append(esearch_json("1"))
    script.efetch += [httpx2.Response(429)] * 3
    with pytest.raises(RateLimitError, match="429"):
        await make_tool(client, script).search("sepsis", 5)
    assert len(script.params("efetch")) == 3


async def test_the_api_key_never_reaches_an_error_message_or_the_log(
    client_and_script: tuple[httpx2.AsyncClient, Script],
) -> None:
    client, script = client_and_script
    # A server error page that echoes the request URL, key and all.
    script.esearch += [lambda request: httpx2.Response(500, text=f"Internal error for {request.url}")] * 3

    with structlog.testing.capture_logs() as logs, pytest.raises(SearchError) as caught:
        await make_tool(client, script, api_key=SecretStr("s3cret-key")).search("sepsis", 5)

    assert "s3cret-key" not in str(caught.value)
    assert "***" in str(caught.value)
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None
    assert "s3cret-key" not in json.dumps(logs, default=str)


async def test_the_question_is_converted_before_searching(client_and_script: tuple[httpx2.AsyncClient, Script]) -> None:
    client, script = client_and_script
    script.esearch.append(esearch_json())
    question = 'What is the role of "gut microbiome" in long-COVID fatigue?'
    await make_tool(client, script).search(question, 5)
    assert (
        script.params("esearch")[0]["term"] == to_pubmed_query(question) == 'role "gut microbiome" long-COVID fatigue'
    )
