"""The real source tools, unchanged, over the demo transport: demo mode runs the live parsing code."""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import httpx2
import pytest
from pydantic import SecretStr

from deepcritical.demo.ddgs import DemoDDGS
from deepcritical.demo.records import (
    DEMO_HOST,
    DEMO_PMID_RANGE,
    PubmedRecord,
    SearxngRecord,
    WebRecord,
    YouRecord,
    load_corpus,
)
from deepcritical.demo.transport import demo_transport
from deepcritical.models import Evidence
from deepcritical.source_table import DEMO_SEARXNG_URL
from deepcritical.sources.handler import SearchHandler
from deepcritical.sources.pubmed import PubMedTool
from deepcritical.sources.searxng import SearxngTool
from deepcritical.sources.web import WebTool
from deepcritical.sources.you import ResearchEngine

TOPIC_OF_PMID = {r.pmid: r.topic for r in load_corpus().records if isinstance(r, PubmedRecord)}
TOPIC_OF_URL = {r.url: r.topic for r in load_corpus().records if isinstance(r, WebRecord | SearxngRecord | YouRecord)}


async def _no_wait() -> None:
    """The NCBI rate limiter is not under test here; demo requests never leave the process."""


@pytest.fixture
async def client() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(transport=demo_transport()) as http:
        yield http


def _is_demo_web_evidence(item: Evidence) -> bool:
    return urlsplit(item.citation.url).hostname == DEMO_HOST and item.citation.title.startswith("[DEMO] ")


async def test_pubmed_tool_reads_the_demo_eutils(client: httpx2.AsyncClient) -> None:
    tool = PubMedTool(client, limiter=_no_wait)
    evidence = await tool.search("Can metformin be repurposed for Alzheimer's disease?", 10)
    assert len(evidence) >= 8
    for item in evidence:
        assert item.citation.source == "pubmed"
        assert item.citation.pmid is not None
        assert int(item.citation.pmid) in DEMO_PMID_RANGE
        assert TOPIC_OF_PMID[item.citation.pmid] == "metformin-alzheimers"
        assert item.citation.title.startswith("[DEMO] ")
        assert item.citation.doi is not None
        assert item.citation.doi.startswith("10.99999/demo.")
        assert item.citation.authors
    assert "99000113" not in {item.citation.pmid for item in evidence}, "a title-only letter is not evidence"
    by_pmid = {item.citation.pmid: item for item in evidence}
    assert by_pmid["99000108"].citation.pmcid == "PMC99000108"
    assert "Meta-Analysis" in by_pmid["99000108"].citation.publication_types


async def test_pubmed_tool_finds_other_topics_too(client: httpx2.AsyncClient) -> None:
    evidence = await PubMedTool(client, limiter=_no_wait).search("Do statins reduce mortality in sepsis?", 5)
    assert evidence
    assert all(TOPIC_OF_PMID[str(item.citation.pmid)] == "statins-sepsis" for item in evidence)


async def test_searxng_tool_reads_the_demo_instance(client: httpx2.AsyncClient) -> None:
    tool = SearxngTool(client, base_url=DEMO_SEARXNG_URL)
    evidence = await tool.search("statins sepsis mortality", 10)
    assert evidence
    assert all(item.citation.source == "searxng" and _is_demo_web_evidence(item) for item in evidence)
    assert all("statin" in (item.citation.title + item.content).lower() for item in evidence)


async def test_research_engine_reads_the_demo_you_api(client: httpx2.AsyncClient) -> None:
    engine = ResearchEngine(client, api_key=SecretStr("demo-key"))
    evidence = await engine.search("SGLT2 inhibitors heart failure", 5)
    assert evidence
    assert all(item.citation.source == "you" and _is_demo_web_evidence(item) for item in evidence)
    context = await engine.get_term_context("AMPK")
    assert "AMP-activated protein kinase" in context


async def test_research_engine_context_is_empty_when_the_demo_api_refuses_a_missing_key(
    client: httpx2.AsyncClient,
) -> None:
    # ResearchEngine never sends a request without a key; a blank one reaches the stand-in and gets 401.
    engine = ResearchEngine(client, api_key=SecretStr(" "))
    assert await engine.context("metformin") == ""


async def test_web_tool_uses_the_ddgs_stand_in() -> None:
    evidence = await WebTool(ddgs_factory=DemoDDGS).search("vitamin D depression", 5)
    assert evidence
    assert all(item.citation.source == "web" and _is_demo_web_evidence(item) for item in evidence)
    assert TOPIC_OF_URL[evidence[0].citation.url] == "vitamin-d-depression"


async def test_web_tool_treats_no_demo_match_as_empty() -> None:
    assert await WebTool(ddgs_factory=DemoDDGS).search("zzqxv blorft", 5) == []


async def test_handler_over_all_demo_sources(client: httpx2.AsyncClient) -> None:
    handler = SearchHandler(
        [
            PubMedTool(client, limiter=_no_wait),
            WebTool(ddgs_factory=DemoDDGS),
            SearxngTool(client, base_url=DEMO_SEARXNG_URL),
            ResearchEngine(client, api_key=SecretStr("demo-key")),
        ]
    )
    result = await handler.execute("metformin alzheimer's disease", 10)
    assert result.errors == []
    assert len(result.evidence) >= 10
    sources = {source for item in result.evidence for source in item.found_by}
    assert sources == {"pubmed", "web", "searxng", "you"}
    # The same news page, spelt differently by DuckDuckGo and SearXNG, is one item found by both.
    merged = [item for item in result.evidence if {"web", "searxng"} <= set(item.found_by)]
    assert merged
    assert result.total_found > len(result.evidence)
