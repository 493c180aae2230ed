"""Europe PMC REST search: the documented request (``format=json``, ``resultType=core``), its core
result JSON parsed into graded Evidence (retraction and expression-of-concern flags, preprints), and the
merge with PubMed by PMID or DOI. The fixture follows the documented core result fields."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from deepcritical.demo.transport import demo_transport
from deepcritical.errors import SearchError
from deepcritical.models import Citation, Evidence, merge_evidence
from deepcritical.sources.europepmc import (
    EUROPEPMC_BASE_URL,
    NO_ABSTRACT,
    EuropePmcTool,
    parse_search,
    plain_text,
)
from deepcritical.sources.factory import make_http_client

FIXTURE: dict[str, Any] = json.loads(
    (Path(__file__).parent / "fixtures" / "europepmc_search_core.json").read_text(encoding="utf-8")
)


async def _no_wait(_seconds: float) -> None:
    return None


def tool(answer: Callable[[httpx2.Request], httpx2.Response], seen: list[httpx2.Request]) -> EuropePmcTool:
    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return answer(request)

    return EuropePmcTool(httpx2.AsyncClient(transport=httpx2.MockTransport(handler)), sleep=_no_wait)


def test_a_core_result_becomes_graded_evidence() -> None:
    found = parse_search(FIXTURE)
    assert [item.id for item in found] == [
        "pmid:22222222",
        "pmid:44444444",
        "doi:10.1101/2024.05.02.24300001",
        "pmid:77777777",
    ]
    article = found[0]
    citation = article.citation
    assert citation.source == "europepmc"
    assert citation.url == "https://europepmc.org/article/MED/22222222"
    assert (citation.pmid, citation.pmcid, citation.doi) == ("22222222", "PMC7654321", "10.1000/example.2021.001")
    assert citation.authors == ("Smith J", "Müller AB", "Example Study Group")
    assert citation.journal == "Journal of Example Research"
    assert citation.date == "2021-04-12"
    assert citation.publication_types == ("Randomized Controlled Trial", "research-article", "Journal Article")
    assert citation.mesh_headings == ("Humans", "Cognitive Dysfunction")
    assert (citation.cited_by_count, citation.open_access) == (17, True)
    assert article.content == (
        "Background: Example Drug may improve memory. Methods: Eighty adults with mild cognitive impairment were "
        "randomised to Example Drug or placebo. Results: Recall improved by 4.4 words (p=0.03). Conclusions: "
        "Example Drug modestly improved recall & was tolerated."
    )
    assert article.grade.label == "randomised controlled trial, humans, n = 80"
    assert (article.grade.level, article.grade.basis) == (2, "publication_type")
    assert not article.retracted
    assert not article.expression_of_concern


def test_a_record_without_an_abstract_is_kept_with_its_title_identifiers_and_grade() -> None:
    """A real Europe PMC answer with one hit and no abstract gave no item and no word of it."""
    only_hit = {"hitCount": 1, "resultList": {"result": [FIXTURE["resultList"]["result"][3]]}}
    [letter] = parse_search(only_hit)
    assert letter.id == "pmid:77777777"
    assert letter.citation.title == "A title without an abstract."
    assert letter.citation.date == "2020-01-01"
    assert letter.content == f"A title without an abstract. {NO_ABSTRACT}"
    assert letter.grade.design != "unknown"
    assert letter.grade.basis == "publication_type"


def test_retraction_and_concern_are_flagged() -> None:
    retracted = parse_search(FIXTURE)[1]
    assert retracted.retracted is True
    assert retracted.expression_of_concern is True
    only_notice = {
        "resultList": {
            "result": [
                {
                    **FIXTURE["resultList"]["result"][0],
                    "pubTypeList": {"pubType": ["Journal Article"]},
                    "commentCorrectionList": {"commentCorrection": [{"type": "Retraction in", "id": "1"}]},
                }
            ]
        }
    }
    assert parse_search(only_notice)[0].retracted is True
    the_notice = {
        "resultList": {
            "result": [
                {
                    **FIXTURE["resultList"]["result"][0],
                    "pubTypeList": {"pubType": ["Retraction of Publication"]},
                    "commentCorrectionList": {"commentCorrection": [{"type": "Retraction of", "id": "1"}]},
                }
            ]
        }
    }
    assert parse_search(the_notice)[0].retracted is False


def test_a_preprint_is_graded_preprint() -> None:
    preprint = parse_search(FIXTURE)[2]
    assert preprint.citation.url == "https://europepmc.org/article/PPR/PPR123456"
    assert preprint.citation.journal == "medRxiv"
    assert preprint.citation.title == "Example Drug use and plasma p-tau217 in older adults: a cohort study"
    assert (preprint.grade.design, preprint.grade.level, preprint.grade.basis) == ("preprint", None, "publication_type")
    untyped = {"resultList": {"result": [{**FIXTURE["resultList"]["result"][2], "pubTypeList": {"pubType": []}}]}}
    assert (parse_search(untyped)[0].grade.design, parse_search(untyped)[0].grade.basis) == ("preprint", "source")


def test_abstract_markup_becomes_text() -> None:
    assert plain_text("<h4>Objective:</h4>To test.<br/>Next<sup>2</sup> &lt;5") == "Objective: To test. Next2 <5"
    assert plain_text(None) == ""


@pytest.mark.parametrize("body", [[], {"hitCount": 0}, "text"])
def test_a_body_that_is_not_a_search_response_is_an_error(body: object) -> None:
    with pytest.raises(SearchError, match="europepmc: unexpected response"):
        parse_search(body)


def test_merges_with_the_pubmed_record_by_pmid_or_doi() -> None:
    from_epmc = parse_search(FIXTURE)
    by_pmid = Evidence(
        content="Short abstract.",
        citation=Citation(
            source="pubmed", title="Example", url="https://pubmed.ncbi.nlm.nih.gov/22222222/", pmid="22222222"
        ),
    )
    by_doi = Evidence(
        content="A page about the preprint.",
        citation=Citation(source="web", title="Preprint", url="https://doi.org/10.1101/2024.05.02.24300001"),
    )
    merged = merge_evidence([by_pmid, by_doi, *from_epmc])
    assert len(merged) == 4  # the two merged, the third article, and the record without an abstract
    first = merged[0]
    assert first.id == "pmid:22222222"
    assert first.found_by == ("pubmed", "europepmc")
    assert first.citation.pmcid == "PMC7654321"  # filled from Europe PMC
    assert first.grade.design == "randomized_controlled_trial"
    assert merged[1].found_by == ("web", "europepmc")
    assert merged[1].grade.design == "preprint"  # the publication type beats the web page's source grade


async def test_the_request_is_the_documented_one() -> None:
    seen: list[httpx2.Request] = []
    found = await tool(lambda _request: httpx2.Response(200, json=FIXTURE), seen).search(
        "Does example drug[tiab] help memory?", 2
    )
    assert len(found) == 2
    (request,) = seen
    assert str(request.url).startswith(f"{EUROPEPMC_BASE_URL}/search?")
    params = request.url.params
    assert params["query"] == "example drug memory"  # filler ("does", "help") dropped, field tag removed
    assert (params["format"], params["resultType"], params["pageSize"], params["cursorMark"]) == (
        "json",
        "core",
        "2",
        "*",
    )


async def test_failures_follow_the_common_policy() -> None:
    with pytest.raises(SearchError, match=r"^europepmc: not JSON from www\.ebi\.ac\.uk"):
        await tool(lambda _request: httpx2.Response(200, text="<html>down</html>"), []).search("x", 5)
    attempts: list[httpx2.Request] = []
    with pytest.raises(SearchError, match="HTTP 500"):
        await tool(lambda _request: httpx2.Response(500, text="oops"), attempts).search("x", 5)
    assert len(attempts) == 3


async def test_the_demo_stand_in_serves_pubmed_records_and_preprints() -> None:
    async with make_http_client(demo_transport()) as client:
        found = await EuropePmcTool(client).search("metformin Alzheimer's disease", 25)
        page = await client.get(
            f"{EUROPEPMC_BASE_URL}/search", params={"query": "metformin", "format": "json", "pageSize": 2}
        )
        following = await client.get(
            f"{EUROPEPMC_BASE_URL}/search",
            params={"query": "metformin", "format": "json", "pageSize": 2, "cursorMark": page.json()["nextCursorMark"]},
        )
    sources = {item.citation.url.split("/")[-2] for item in found}
    assert sources == {"MED", "PPR"}
    assert all(item.citation.title.startswith("[DEMO] ") for item in found)
    retracted = [item.id for item in found if item.retracted]
    concerned = [item.id for item in found if item.expression_of_concern]
    assert retracted == ["pmid:99000114"]
    assert concerned == ["pmid:99000115"]
    first_ids = [result["id"] for result in page.json()["resultList"]["result"]]
    next_ids = [result["id"] for result in following.json()["resultList"]["result"]]
    assert len(first_ids) == len(next_ids) == 2
    assert not set(first_ids) & set(next_ids)
