"""The PMC full-text fetcher: Europe PMC first, E-utilities (through the NCBI limiter) second, a closed
article kept as its abstract, a second run served from the library, and the key studies chosen by level
of evidence then relevance."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx2
from pydantic import SecretStr

from deepcritical.demo.transport import demo_transport
from deepcritical.documents.model import Document
from deepcritical.models import Citation, Evidence, Grade
from deepcritical.sources.fulltext import FullTextFetcher, fetch_full_texts, key_studies

DEMO_PMCID = "PMC99000105"  # a randomised trial of the demo corpus


class CountingLimiter:
    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self) -> None:
        self.calls += 1


async def _no_sleep(_: float) -> None:
    return None


def _fetcher(handler: Callable[[httpx2.Request], httpx2.Response], limiter: CountingLimiter) -> FullTextFetcher:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    return FullTextFetcher(client, limiter=limiter, sleep=_no_sleep, api_key=SecretStr("sekret-key-123"))


def _routed(europepmc: Callable[[httpx2.Request], httpx2.Response]) -> Callable[[httpx2.Request], httpx2.Response]:
    """The demo stand-ins, with Europe PMC's full-text answers replaced by ``europepmc``."""
    demo = demo_transport()

    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.endswith("/fullTextXML"):
            return europepmc(request)
        return demo.handler(request)  # type: ignore[no-any-return]

    return handler


async def test_a_demo_article_is_fetched_from_europe_pmc_without_spending_the_ncbi_budget() -> None:
    limiter = CountingLimiter()
    async with httpx2.AsyncClient(transport=demo_transport()) as client:
        fetcher = FullTextFetcher(client, limiter=limiter, sleep=_no_sleep)
        result = await fetcher.fetch(DEMO_PMCID)
    assert result.outcome == "fetched"
    assert result.source == "europepmc"
    assert limiter.calls == 0
    document = result.document
    assert document is not None
    assert document.id == "pmid:99000105"
    assert document.meta.pmcid == DEMO_PMCID
    sections = {passage.section for passage in document.passages}
    assert {"Abstract", "Introduction", "Methods", "Results", "Discussion"} <= sections


async def test_without_europe_pmc_the_article_comes_from_efetch_through_the_limiter() -> None:
    limiter = CountingLimiter()
    fetcher = _fetcher(_routed(lambda request: httpx2.Response(404, text="not found")), limiter)
    result = await fetcher.fetch(DEMO_PMCID)
    assert (result.outcome, result.source) == ("fetched", "pmc")
    assert limiter.calls == 1
    assert result.document is not None
    assert result.document.id == "pmid:99000105"


async def test_a_closed_article_keeps_its_abstract() -> None:
    """efetch db=pmc answers a closed article with its front matter only; Europe PMC with 404."""
    closed = (
        b'<?xml version="1.0"?><pmc-articleset><article><front><article-meta>'
        b'<article-id pub-id-type="pmc">1234</article-id><title-group><article-title>Closed</article-title>'
        b"</title-group></article-meta></front></article></pmc-articleset>"
    )

    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.endswith("/fullTextXML"):
            return httpx2.Response(404, text="not found")
        return httpx2.Response(200, content=closed, headers={"Content-Type": "text/xml"})

    result = await _fetcher(handler, CountingLimiter()).fetch("PMC1234")
    assert result.outcome == "not_open_access"
    assert result.document is None


async def test_failing_services_give_one_reason_without_the_key() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(503, text=f"down for maintenance {request.url}")

    result = await _fetcher(handler, CountingLimiter()).fetch("PMC1234")
    assert result.outcome == "failed"
    assert result.reason is not None
    assert "HTTP 503" in result.reason
    assert "sekret-key-123" not in result.reason


async def test_a_real_pmc_article_is_parsed_as_served(fulltext_data: Path) -> None:
    path = sorted((fulltext_data / "jats").glob("*.nxml"))[0]

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=path.read_bytes(), headers={"Content-Type": "application/xml"})

    result = await _fetcher(handler, CountingLimiter()).fetch("PMC3166277")
    assert result.outcome == "fetched"
    assert result.document is not None
    assert result.document.id.startswith("pmid:")
    assert len(result.document.passages) > 10


def _item(key: str, level: int | None, relevance: float, pmcid: str | None, retracted: bool = False) -> Evidence:
    citation = Citation(
        source="pubmed", title=f"Study {key}", url=f"https://pubmed.ncbi.nlm.nih.gov/{key}/", pmid=key, pmcid=pmcid
    )
    return Evidence(
        content="Abstract.",
        citation=citation,
        relevance=relevance,
        grade=Grade(design="cohort", level=level) if level else Grade(),
        retracted=retracted,
    )


def test_key_studies_are_the_best_graded_then_most_relevant_with_a_pmcid() -> None:
    items = [
        _item("1", 3, 0.9, "PMC1"),
        _item("2", 2, 0.1, "PMC2"),
        _item("3", 2, 0.8, "PMC3"),
        _item("4", 1, 0.5, None),  # no PMCID: no full text to fetch
        _item("5", 1, 0.5, "PMC5", retracted=True),
        _item("6", None, 1.0, "PMC6"),
    ]
    assert [item.citation.pmid for item in key_studies(items, 3)] == ["3", "2", "1"]
    assert [item.citation.pmid for item in key_studies(items, 10)] == ["3", "2", "1", "6"]


class MemoryCache:
    """The library's part: passages kept by PMCID, as evidence items."""

    def __init__(self) -> None:
        self.kept: dict[str, list[Evidence]] = {}

    async def full_text(self, pmcid: str) -> list[Evidence]:
        return self.kept.get(pmcid, [])

    async def keep_full_text(self, document: Document) -> list[Evidence]:
        assert document.meta.pmcid is not None
        citation = Citation(source="library", title=document.meta.title, url=f"library://documents/{document.id}")
        items = [Evidence(content=passage.text, citation=citation) for passage in document.passages]
        self.kept[document.meta.pmcid] = items
        return items


async def test_a_second_run_reads_the_library_instead_of_fetching() -> None:
    items = [_item("99000105", 2, 0.9, DEMO_PMCID), _item("77", 2, 0.5, "PMC77")]  # PMC77 is not in the demo
    requests: list[str] = []
    demo = demo_transport()

    def handler(request: httpx2.Request) -> httpx2.Response:
        requests.append(str(request.url))
        return demo.handler(request)  # type: ignore[no-any-return]

    cache = MemoryCache()
    fetcher = _fetcher(handler, CountingLimiter())
    first = await fetch_full_texts(fetcher, items, max_articles=5, cache=cache)
    assert [r.outcome for r in first.results] == ["fetched", "not_open_access"]
    assert first.summary == "Full text: 1 of 2 key studies read; 1 not open access, abstract kept."
    asked = len(requests)
    second = await fetch_full_texts(fetcher, items, max_articles=5, cache=cache)
    assert [r.outcome for r in second.results] == ["cached", "not_open_access"]
    assert second.passages == first.passages
    assert second.passages
    assert all("99000105" not in url for url in requests[asked:])
    assert second.summary.startswith("Full text: 1 of 2 key studies read (1 from the library)")
