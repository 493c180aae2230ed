"""SearchHandler: concurrency, failure isolation, cross-source merging, ordering."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from deepcritical.errors import RateLimitError, SearchError
from deepcritical.models import Citation, Evidence, SourceFailure, SourceName, merge_evidence
from deepcritical.sources.base import SearchTool
from deepcritical.sources.handler import SearchHandler


def item(source: SourceName, url: str, *, relevance: float = 0.5, **fields: str) -> Evidence:
    citation = Citation.model_validate({"source": source, "title": f"{source} {url}", "url": url, **fields})
    return Evidence(content=f"text from {source} at {url}", citation=citation, relevance=relevance)


class FakeTool(SearchTool):
    name: ClassVar[SourceName] = "web"

    def __init__(self, name: SourceName, results: list[Evidence] | None = None, error: Exception | None = None):
        self.name = name  # type: ignore[misc]
        self.results = results or []
        self.error = error
        self.queries: list[str] = []

    async def _search(self, query: str, max_results: int) -> list[Evidence]:
        self.queries.append(query)
        if self.error is not None:
            raise self.error
        return self.results


class HangingTool(FakeTool):
    async def _search(self, query: str, max_results: int) -> list[Evidence]:
        await asyncio.Event().wait()  # never set: only the handler's deadline ends this
        return []


async def test_one_failing_source_leaves_the_others_intact() -> None:
    web = FakeTool("web", [item("web", "https://a.org/1")])
    pubmed = FakeTool("pubmed", error=SearchError("HTTP 503 after 3 attempt(s)", source="pubmed"))
    # A failure raised without a source is attributed to the tool it came from, named once.
    you = FakeTool("you", error=RateLimitError("rate limited (HTTP 429) after 3 attempt(s)"))
    result = await SearchHandler([web, pubmed, you]).execute("metformin")
    assert [e.citation.url for e in result.evidence] == ["https://a.org/1"]
    assert result.sources_searched == ["web", "pubmed", "you"]
    assert result.failures == [
        SourceFailure(source="pubmed", reason="HTTP 503 after 3 attempt(s)"),
        SourceFailure(source="you", reason="rate limited (HTTP 429) after 3 attempt(s)"),
    ]
    assert result.errors == [
        "pubmed: HTTP 503 after 3 attempt(s)",
        "you: rate limited (HTTP 429) after 3 attempt(s)",
    ]
    assert result.failed_sources == {"pubmed": "pubmed: HTTP 503 after 3 attempt(s)", "you": result.errors[1]}
    assert result.answered_sources == ["web"]


async def test_a_failure_is_attributed_to_its_source_without_reading_its_text() -> None:
    # A reason that looks like another source's prefix is not mistaken for one: the source is a field.
    tool = FakeTool("europepmc", error=SearchError("pubmed: looks like a prefix", source="europepmc"))
    result = await SearchHandler([tool]).execute("q")
    assert result.failures == [SourceFailure(source="europepmc", reason="pubmed: looks like a prefix")]
    assert result.failed_sources == {"europepmc": "europepmc: pubmed: looks like a prefix"}


async def test_a_source_past_its_deadline_is_reported_not_awaited_naming_its_timeout_setting() -> None:
    hanging = HangingTool("searxng")
    handler = SearchHandler([hanging, FakeTool("web", [item("web", "https://a.org")])], timeouts={"searxng": 0.01})
    result = await handler.execute("q")
    assert len(result.evidence) == 1
    assert result.failures == [
        SourceFailure(
            source="searxng",
            reason="no answer within 0.01 s (the deadline of the whole search); "
            "if it is slow rather than down, raise SEARXNG_TIMEOUT (now 30)",
        )
    ]


async def test_a_crashing_source_is_reported_with_its_exception() -> None:
    result = await SearchHandler([FakeTool("web", error=KeyError("title"))]).execute("q")
    assert result.evidence == []
    assert result.errors == ["web: unexpected KeyError: 'title'"]


async def test_disabled_sources_are_named_apart_from_failures() -> None:
    result = await SearchHandler([], unavailable={"searxng": "SEARXNG_BASE_URL is not set"}).execute("q")
    assert result.errors == []
    assert result.failed_sources == {}
    assert result.disabled == {"searxng": "SEARXNG_BASE_URL is not set"}


async def test_same_paper_from_pubmed_and_web_is_one_item_listing_both() -> None:
    pubmed = item("pubmed", "https://pubmed.ncbi.nlm.nih.gov/7/", pmid="7", doi="10.5555/XY", relevance=0.8)
    web = item("web", "https://doi.org/10.5555/xy", relevance=0.6)
    result = await SearchHandler([FakeTool("pubmed", [pubmed]), FakeTool("web", [web])]).execute("q")
    assert result.total_found == 2
    assert [(e.id, e.found_by) for e in result.evidence] == [("pmid:7", ("pubmed", "web"))]


async def test_url_variants_merge_and_results_sort_by_relevance() -> None:
    web = [
        item("web", "https://Example.org/a/?utm_source=x", relevance=0.4),
        item("web", "https://b.org", relevance=0.9),
    ]
    searxng = [item("searxng", "https://example.org/a", relevance=0.7)]
    result = await SearchHandler([FakeTool("web", web), FakeTool("searxng", searxng)]).execute("q")
    assert [(e.id, e.found_by, e.relevance) for e in result.evidence] == [
        ("url:https://b.org", ("web",), 0.9),
        ("url:https://example.org/a", ("web", "searxng"), 0.7),
    ]


def test_an_item_bridging_two_groups_joins_them() -> None:
    by_doi = item("pubmed", "https://pubmed.ncbi.nlm.nih.gov/9/", pmid="9", doi="10.9999/z")
    by_url = item("web", "https://journal.org/z")
    bridge = item("searxng", "https://journal.org/z/", doi="10.9999/Z")
    merged = merge_evidence([by_doi, by_url, bridge, item("you", "https://journal.org/z?utm_medium=m")])
    assert [(e.id, set(e.found_by)) for e in merged] == [("pmid:9", {"pubmed", "web", "searxng", "you"})]


async def test_sources_run_concurrently() -> None:
    started: list[str] = []
    both_started = asyncio.Event()

    class Rendezvous(FakeTool):
        async def _search(self, query: str, max_results: int) -> list[Evidence]:
            started.append(self.name)
            if len(started) == 2:
                both_started.set()
            await both_started.wait()  # deadlocks (and times out) if the handler ran tools one by one
            return []

    result = await SearchHandler([Rendezvous("web"), Rendezvous("pubmed")], default_timeout=5).execute("q")
    assert result.errors == []
    assert sorted(started) == ["pubmed", "web"]
