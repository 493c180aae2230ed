"""A watch's re-run asks each source with a date filter for what it added since the last run, in the
source's own syntax; without ``since`` the request is as before. The demo stand-ins honour the same
filters on the demo clock."""

from __future__ import annotations

from datetime import date

import httpx2
import pytest

from deepcritical.config import load_settings
from deepcritical.demo.clock import ClockedTransport
from deepcritical.demo.transport import demo_transport
from deepcritical.sources.clinicaltrials import ClinicalTrialsTool
from deepcritical.sources.europepmc import EuropePmcTool
from deepcritical.sources.factory import build_sources
from deepcritical.sources.pubmed import PubMedTool

SINCE = date(2026, 3, 1)


async def _no_pacing() -> None:
    return None


def _recording(answer: dict[str, object]) -> tuple[httpx2.AsyncClient, list[httpx2.Request]]:
    seen: list[httpx2.Request] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=answer)

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handle)), seen


@pytest.mark.parametrize("since", [SINCE, None])
async def test_pubmed_asks_by_entrez_date_from_since(since: date | None) -> None:
    client, seen = _recording({"esearchresult": {"count": "0", "idlist": []}})
    async with client:
        await PubMedTool(client, limiter=_no_pacing, since=since).search("vitamin D depression", 5)
    params = seen[0].url.params
    if since is None:
        assert not {"datetype", "mindate", "maxdate"} & set(params)
    else:
        assert (params["datetype"], params["mindate"]) == ("edat", "2026/03/01")
        assert params["maxdate"] > "2026/03/01"


@pytest.mark.parametrize("since", [SINCE, None])
async def test_europepmc_adds_a_first_publication_range(since: date | None) -> None:
    client, seen = _recording({"resultList": {"result": []}})
    async with client:
        await EuropePmcTool(client, since=since).search("vitamin D depression", 5)
    query = seen[0].url.params["query"]
    if since is None:
        assert query == "vitamin D depression"
    else:
        assert query.startswith("(vitamin D depression) AND FIRST_PDATE:[2026-03-01 TO ")


@pytest.mark.parametrize("since", [SINCE, None])
async def test_clinicaltrials_filters_by_last_update(since: date | None) -> None:
    client, seen = _recording({"studies": []})
    async with client:
        await ClinicalTrialsTool(client, since=since).search("vitamin D depression", 5)
    params = seen[0].url.params
    expected = "AREA[LastUpdatePostDate]RANGE[2026-03-01,MAX]" if since else None
    assert params.get("filter.advanced") == expected


def test_the_setting_reaches_the_sources_built_for_a_run() -> None:
    settings = load_settings(search_since="2026-03-01", sources="pubmed,europepmc,clinicaltrials,web")
    tools = build_sources(settings, httpx2.AsyncClient()).handler.tools
    dated = {tool.name: getattr(tool, "since", "no filter") for tool in tools}
    assert dated == {"pubmed": SINCE, "europepmc": SINCE, "clinicaltrials": SINCE, "web": "no filter"}


async def test_the_demo_pubmed_shows_a_record_only_from_its_entry_date_and_a_retraction_from_its_date() -> None:
    async def pmids(today: date, **params: str) -> list[str]:
        async with httpx2.AsyncClient(transport=ClockedTransport(demo_transport(), today)) as client:
            tool = PubMedTool(client, limiter=_no_pacing, since=date.fromisoformat(params["since"]) if params else None)
            return [item.citation.pmid or "" for item in await tool.search("vitamin D depression trial", 20)]

    assert "99000508" not in await pmids(date(2026, 3, 1))
    assert "99000508" in await pmids(date(2026, 7, 1))
    assert await pmids(date(2026, 7, 1), since="2026-03-01") == ["99000508"]  # only what entered since
    async with httpx2.AsyncClient(transport=ClockedTransport(demo_transport(), date(2026, 3, 1))) as client:
        before = await PubMedTool(client, limiter=_no_pacing).fetch(["99000505"])
    async with httpx2.AsyncClient(transport=ClockedTransport(demo_transport(), date(2026, 7, 1))) as client:
        after = await PubMedTool(client, limiter=_no_pacing).fetch(["99000505"])
    assert [item.retracted for item in before + after] == [False, True]


async def test_the_demo_stand_ins_honour_europepmc_and_registry_date_filters() -> None:
    async with httpx2.AsyncClient(transport=ClockedTransport(demo_transport(), date(2026, 7, 1))) as client:
        found = await EuropePmcTool(client, since=SINCE).search("vitamin D depression trial", 20)
        trials = await ClinicalTrialsTool(client, since=SINCE).search("vitamin D depression", 20)
        every_trial = await ClinicalTrialsTool(client).search("vitamin D depression", 20)
    assert [item.citation.pmid for item in found] == ["99000508"]
    assert trials == []
    assert every_trial
