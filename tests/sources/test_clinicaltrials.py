"""ClinicalTrials.gov API v2: requests as the service documents them, its study JSON parsed into graded
registry entries, paging with ``nextPageToken``, a 403 explained, and the merge with the PubMed record
of the trial's results. The fixture follows the API's documented study structure (protocolSection
modules, hasResults, nextPageToken)."""

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
from deepcritical.sources.clinicaltrials import (
    CLINICALTRIALS_BASE_URL,
    ClinicalTrialsTool,
    parse_studies,
)
from deepcritical.sources.factory import make_http_client

FIXTURE: dict[str, Any] = json.loads(
    (Path(__file__).parent / "fixtures" / "clinicaltrials_v2_studies.json").read_text(encoding="utf-8")
)


async def _no_wait(_seconds: float) -> None:
    return None


def tool(answer: Callable[[httpx2.Request], httpx2.Response], seen: list[httpx2.Request]) -> ClinicalTrialsTool:
    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return answer(request)

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    return ClinicalTrialsTool(client, sleep=_no_wait)


def test_a_study_becomes_a_graded_registry_entry() -> None:
    evidence, token = parse_studies(FIXTURE)
    assert token == "NF0g5JGBlPMu"
    assert [item.citation.nct_id for item in evidence] == ["NCT01234567", "NCT07654321"]  # malformed one skipped
    trial = evidence[0]
    citation = trial.citation
    assert citation.source == "clinicaltrials"
    assert citation.title == "Example Drug in Mild Cognitive Impairment"
    assert citation.url == "https://clinicaltrials.gov/study/NCT01234567"
    assert citation.date == "2019-02-14"  # first posted
    assert citation.authors == ("Example University",)
    assert trial.id == "url:https://clinicaltrials.gov/study/NCT01234567"
    registration = citation.registration
    assert registration is not None
    assert registration.status == "COMPLETED"
    assert registration.phases == ("PHASE2", "PHASE3")
    assert registration.allocation == "RANDOMIZED"
    assert (registration.enrollment, registration.enrollment_type) == (80, "ACTUAL")
    assert registration.conditions == ("Mild Cognitive Impairment", "Alzheimer Disease")
    assert registration.interventions == ("Drug: Example Drug", "Drug: Placebo")
    assert (registration.start_date, registration.completion_date) == ("2019-03-01", "2021-06")
    assert registration.has_results is True
    assert registration.sponsor == "Example University"
    assert registration.result_pmids == ("22222222", "33333333")
    assert registration.other_pmids == ("11111111",)
    grade = trial.grade
    assert (grade.design, grade.level, grade.population, grade.basis) == ("registered_trial", None, "humans", "source")
    assert (grade.phase, grade.sample_size) == ("2/3", 80)
    assert "results posted" in trial.content
    assert "phase 2/3, randomized allocation" in trial.content
    assert trial.content.startswith("This trial tests whether Example Drug improves memory")
    observational = evidence[1]
    assert observational.citation.registration is not None
    assert observational.citation.registration.has_results is False
    assert observational.grade.phase is None
    assert "active, not recruiting; results not posted" in observational.content


@pytest.mark.parametrize("body", [[], {"studies": "no"}, {"nextPageToken": "x"}])
def test_a_body_that_is_not_a_studies_response_is_an_error(body: object) -> None:
    with pytest.raises(SearchError, match="clinicaltrials: unexpected response"):
        parse_studies(body)


def test_the_first_results_publication_merges_the_entry_with_its_pubmed_record() -> None:
    registry = parse_studies(FIXTURE)[0][0]
    paper = Evidence(
        content="Eighty adults were randomised. Recall improved.",
        citation=Citation(
            source="pubmed",
            title="Example Drug in MCI: a randomised trial",
            url="https://pubmed.ncbi.nlm.nih.gov/22222222/",
            pmid="22222222",
            publication_types=("Randomized Controlled Trial",),
        ),
    )
    secondary = paper.model_copy(
        update={"citation": paper.citation.model_copy(update={"pmid": "33333333", "url": "https://x.org/33333333"})}
    )
    merged = merge_evidence([registry, paper, secondary])
    assert [item.id for item in merged] == ["pmid:22222222", "pmid:33333333"]  # a second paper stays apart
    kept = merged[0]
    assert kept.found_by == ("clinicaltrials", "pubmed")
    assert kept.citation.nct_id == "NCT01234567"
    assert kept.citation.registration is not None
    assert kept.citation.url == "https://pubmed.ncbi.nlm.nih.gov/22222222/"


async def test_the_request_is_the_documented_one_and_pages_follow_the_token() -> None:
    seen: list[httpx2.Request] = []
    second_page = {"studies": [FIXTURE["studies"][1]]}

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json=second_page if request.url.params.get("pageToken") else FIXTURE)

    found = await tool(answer, seen).search("Can example drug be repurposed for Alzheimer's disease?", 3)
    assert [item.citation.nct_id for item in found] == ["NCT01234567", "NCT07654321", "NCT07654321"]
    first, second = seen
    assert str(first.url).startswith(f"{CLINICALTRIALS_BASE_URL}/studies?")
    assert first.url.params["query.term"] == "example drug repurposed Alzheimer's disease"
    assert first.url.params["pageSize"] == "3"
    assert first.url.params["format"] == "json"
    assert "pageToken" not in first.url.params
    assert second.url.params["pageToken"] == "NF0g5JGBlPMu"
    assert second.url.params["pageSize"] == "1"
    assert [item.relevance for item in found] == sorted((item.relevance for item in found), reverse=True)


async def test_paging_stops_when_there_is_no_token() -> None:
    seen: list[httpx2.Request] = []
    body = {"studies": FIXTURE["studies"][:1]}
    found = await tool(lambda _request: httpx2.Response(200, json=body), seen).search("example", 10)
    assert len(found) == 1
    assert len(seen) == 1


async def test_a_403_says_the_service_refused_this_client() -> None:
    seen: list[httpx2.Request] = []
    refused = tool(lambda _request: httpx2.Response(403, text="<html>Forbidden</html>"), seen)
    with pytest.raises(SearchError) as caught:
        await refused.search("example", 5)
    message = str(caught.value)
    assert message.startswith("clinicaltrials: HTTP 403 from clinicaltrials.gov")
    assert "TLS fingerprint" in message
    assert "CLINICALTRIALS_BASE_URL" in message
    assert len(seen) == 1  # a refusal is not retried


async def test_other_failures_follow_the_common_policy() -> None:
    seen: list[httpx2.Request] = []
    with pytest.raises(SearchError, match=r"clinicaltrials: HTTP 400 after 1 attempt\(s\): bad pageSize"):
        await tool(lambda _request: httpx2.Response(400, text="bad pageSize"), seen).search("example", 5)
    with pytest.raises(SearchError, match=r"^clinicaltrials: not JSON from clinicaltrials\.gov \(text/plain"):
        await tool(lambda _request: httpx2.Response(200, text="<html>maintenance</html>"), []).search("example", 5)
    attempts: list[httpx2.Request] = []
    with pytest.raises(SearchError, match="HTTP 503"):
        await tool(lambda _request: httpx2.Response(503, text="busy"), attempts).search("example", 5)
    assert len(attempts) == 3


async def test_pubmed_field_tags_are_not_sent_to_the_registry() -> None:
    seen: list[httpx2.Request] = []
    registry = tool(lambda _request: httpx2.Response(200, json={"studies": []}), seen)
    await registry.search("metformin[tiab] AND dementia", 5)
    assert seen[0].url.params["query.term"] == "metformin AND dementia"


async def test_the_demo_stand_in_speaks_the_same_format() -> None:
    async with make_http_client(demo_transport()) as client:
        found = await ClinicalTrialsTool(client).search("metformin Alzheimer's disease", 2)
        more = await ClinicalTrialsTool(client).search("metformin Alzheimer's disease", 10)
    assert len(found) == 2
    assert len(more) == 3  # the corpus' three metformin entries, across pages of the stand-in
    assert all(item.citation.nct_id and item.citation.nct_id.startswith("NCT99000") for item in more)
    assert all(item.citation.title.startswith("[DEMO] ") for item in more)
    pilot = next(item for item in more if item.citation.nct_id == "NCT99000101")
    assert pilot.citation.registration is not None
    assert pilot.citation.registration.result_pmids == ("99000105",)
    assert pilot.grade.phase == "2"


async def test_the_demo_stand_in_pages_with_its_token() -> None:
    transport = demo_transport()
    async with make_http_client(transport) as client:
        first = await client.get(
            f"{CLINICALTRIALS_BASE_URL}/studies", params={"query.term": "metformin", "pageSize": 1}
        )
        token = first.json()["nextPageToken"]
        second = await client.get(
            f"{CLINICALTRIALS_BASE_URL}/studies", params={"query.term": "metformin", "pageSize": 1, "pageToken": token}
        )
        bad = await client.get(f"{CLINICALTRIALS_BASE_URL}/studies", params={"query.term": "x", "pageSize": 0})
    ids = [
        study["protocolSection"]["identificationModule"]["nctId"]
        for study in (*first.json()["studies"], *second.json()["studies"])
    ]
    assert len(set(ids)) == 2
    assert bad.status_code == 400
