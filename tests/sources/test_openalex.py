"""OpenAlex works search: the documented request (``/works?search=``, ``per-page``, ``filter=from_publication_date``),
its Work objects parsed into graded Evidence (the abstract rebuilt from its inverted index, ids from their URLs),
the merge with PubMed by PMID, and the demo stand-in answering in the same format. The fixture is written by
hand from OpenAlex's documented Work object (see its ``_note``), not recorded from the live API."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import httpx2
import pytest

from deepcritical.demo.transport import demo_transport
from deepcritical.errors import SearchError
from deepcritical.models import Citation, Evidence, merge_evidence
from deepcritical.sources.openalex import NO_ABSTRACT, OpenAlexTool, abstract_text, parse_works

FIXTURE: dict[str, Any] = json.loads(
    (Path(__file__).parent / "fixtures" / "openalex_works_search.json").read_text(encoding="utf-8")
)


def test_a_work_becomes_graded_evidence_with_its_identifiers() -> None:
    found = parse_works(FIXTURE)
    assert [item.id for item in found] == ["pmid:22222222", "doi:10.1101/2024.05.02.24300001"]  # no title: left out
    article = found[0]
    citation = article.citation
    assert citation.source == "openalex"
    assert (citation.pmid, citation.pmcid, citation.doi) == ("22222222", "PMC7654321", "10.1000/example.2021.001")
    assert citation.authors == ("Jane Smith", "Anna B. Müller")
    assert (citation.journal, citation.date, citation.cited_by_count, citation.open_access) == (
        "Journal of Example Research",
        "2021-04-12",
        57,
        True,
    )
    assert citation.mesh_headings == ("Humans", "Metformin")
    assert article.content == "Background: In this randomized trial, metformin slowed decline."
    assert article.grade is not None
    assert article.grade.design == "randomized_controlled_trial"
    preprint = found[1]
    assert preprint.grade is not None
    assert preprint.grade.design == "preprint"
    assert preprint.retracted
    assert preprint.content.endswith(NO_ABSTRACT)
    assert preprint.citation.url == "https://doi.org/10.1101/2024.05.02.24300001"


def test_the_inverted_index_is_read_in_word_order_whatever_its_key_order() -> None:
    assert abstract_text({"world": [1, 3], "hello": [0], "again": [2]}) == "hello world again world"
    assert abstract_text(None) == ""


def test_a_body_without_results_is_a_search_error() -> None:
    with pytest.raises(SearchError, match="results"):
        parse_works({"error": "Invalid query parameters error."})


def test_a_work_merges_with_the_pubmed_record_of_its_pmid() -> None:
    pubmed = Evidence(content="abstract", citation=Citation(source="pubmed", title="t", url="u", pmid="22222222"))
    merged = merge_evidence([pubmed, parse_works(FIXTURE)[0]])
    assert len(merged) == 1
    assert merged[0].found_by == ("pubmed", "openalex")


async def test_the_request_is_the_documented_one() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=FIXTURE)

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    tool = OpenAlexTool(client, since=date(2024, 5, 1))
    result = await tool.search("metformin[tiab] alzheimer", max_results=7)
    assert len(result) == 2
    (request,) = seen
    assert (request.url.host, request.url.path) == ("api.openalex.org", "/works")
    assert dict(request.url.params) == {
        "search": "metformin alzheimer",
        "per-page": "7",
        "filter": "from_publication_date:2024-05-01",
    }


async def test_the_stand_in_answers_in_openalex_format_and_the_tool_reads_it() -> None:
    client = httpx2.AsyncClient(transport=demo_transport())
    found = await OpenAlexTool(client).search("metformin Alzheimer", max_results=5)
    assert found
    assert all(item.citation.source == "openalex" and item.citation.pmid for item in found)
    body = (await client.get("https://api.openalex.org/works", params={"search": "metformin", "per-page": 2})).json()
    assert set(body) == {"meta", "results", "group_by"}
    assert body["meta"]["per_page"] == 2
    assert len(body["results"]) <= 2
    assert isinstance(body["results"][0]["abstract_inverted_index"], dict)
    refused = await client.get("https://api.openalex.org/works", params={"search": "x", "filter": "is_oa:true"})
    assert refused.status_code == 400
