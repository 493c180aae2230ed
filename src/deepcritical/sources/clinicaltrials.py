"""ClinicalTrials.gov (API v2, ``GET /api/v2/studies``): registered trials as Evidence.

Request building and parsing only; the error policy is ``SearchTool.search``'s. A registry entry is a
registration, not a result: it is graded ``registered_trial`` (outside the evidence scale) and carries
the registry's facts in ``Citation.registration``. Its first results publication (a PMID the registry
lists with type ``RESULT``) is one of its identities, so the entry merges with that PubMed record.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

import structlog

from deepcritical.errors import SearchError, SourceHTTPError
from deepcritical.models import Citation, Evidence, Registration, SourceName
from deepcritical.source_table import BY_NAME
from deepcritical.sources.base import JsonApiTool, json_count, json_list, json_object
from deepcritical.sources.grading import grade_registration, registry_phase
from deepcritical.sources.query import without_field_tags
from deepcritical.sources.web import MAX_TITLE_CHARS, rank_relevance, text_of
from deepcritical.text import shorten

logger = structlog.get_logger(__name__)

CLINICALTRIALS_BASE_URL = BY_NAME["clinicaltrials"].base_url or ""
STUDY_URL = "https://clinicaltrials.gov/study/{nct_id}"
MAX_PAGE_SIZE = 1000  # the API's limit
MAX_PAGES = 5
MAX_SUMMARY_CHARS = 1500
_NCT = re.compile(r"NCT\d{8}")
_PMID = re.compile(r"\d{1,9}")
REFUSED_MESSAGE = (
    "HTTP 403 from {host}: ClinicalTrials.gov refused this client. It turns away some HTTP "
    "clients by their TLS fingerprint, whatever User-Agent they send; this is not a problem with the query. "
    "Try another network, or point CLINICALTRIALS_BASE_URL at a mirror."
)


def _texts(values: object) -> tuple[str, ...]:
    return tuple(text for value in json_list(values) if (text := text_of(value)))


def _date(struct: object) -> str | None:
    """A ``{"date": "2019-03"}`` date struct's date (YYYY, YYYY-MM or YYYY-MM-DD), or None."""
    date = text_of(json_object(struct).get("date"))
    return date if re.fullmatch(r"\d{4}(?:-\d{2}(?:-\d{2})?)?", date) else None


def _words(enum: str | None) -> str:
    """``ACTIVE_NOT_RECRUITING`` as "active, not recruiting"; ``RANDOMIZED`` as "randomized"."""
    if not enum:
        return ""
    return enum.lower().replace("_not_", ", not ").replace("_", " ")


def _enrollment(design: Mapping[str, Any]) -> tuple[int | None, str | None]:
    info = json_object(design.get("enrollmentInfo"))
    return json_count(info.get("count")), text_of(info.get("type")) or None


def _pmids(references: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """PMIDs of the results publications, then of the others (background, derived)."""
    results: list[str] = []
    others: list[str] = []
    for reference in json_list(json_object(references).get("references")):
        pmid = text_of(json_object(reference).get("pmid"))
        if _PMID.fullmatch(pmid):
            (results if text_of(reference.get("type")) == "RESULT" else others).append(pmid)
    return tuple(dict.fromkeys(results)), tuple(dict.fromkeys(others))


def parse_registration(protocol: Mapping[str, Any], has_results: bool) -> Registration:
    status = json_object(protocol.get("statusModule"))
    design = json_object(protocol.get("designModule"))
    enrollment, enrollment_type = _enrollment(design)
    interventions = [
        f"{_words(text_of(item.get('type'))).capitalize()}: {name}" if text_of(item.get("type")) else name
        for item in json_list(json_object(protocol.get("armsInterventionsModule")).get("interventions"))
        if isinstance(item, dict) and (name := text_of(item.get("name")))
    ]
    result_pmids, other_pmids = _pmids(protocol.get("referencesModule"))
    return Registration(
        status=text_of(status.get("overallStatus")) or None,
        study_type=text_of(design.get("studyType")) or None,
        phases=_texts(design.get("phases")),
        allocation=text_of(json_object(design.get("designInfo")).get("allocation")) or None,
        enrollment=enrollment,
        enrollment_type=enrollment_type,
        conditions=_texts(json_object(protocol.get("conditionsModule")).get("conditions")),
        interventions=tuple(interventions),
        start_date=_date(status.get("startDateStruct")),
        completion_date=_date(status.get("completionDateStruct")),
        has_results=has_results,
        sponsor=text_of(
            json_object(json_object(protocol.get("sponsorCollaboratorsModule")).get("leadSponsor")).get("name")
        )
        or None,
        result_pmids=result_pmids,
        other_pmids=other_pmids,
    )


def describe(registration: Registration) -> str:
    """The registry's facts as sentences, after the summary: what a reader (or a model) needs to weigh it."""
    facts: list[str] = []
    status = _words(registration.status) or "unknown"
    facts.append(f"Registry status: {status}; results {'posted' if registration.has_results else 'not posted'}.")
    kind = _words(registration.study_type) or "unspecified"
    phase = registry_phase(registration.phases)
    allocation = _words(registration.allocation)
    facts.append(
        f"Study type: {kind}"
        + (f", phase {phase}" if phase else "")
        + (f", {allocation} allocation" if allocation and allocation != "na" else "")
        + "."
    )
    if registration.enrollment is not None:
        facts.append(f"Enrollment: {registration.enrollment} ({_words(registration.enrollment_type) or 'count'}).")
    if registration.conditions:
        facts.append(f"Conditions: {'; '.join(registration.conditions)}.")
    if registration.interventions:
        facts.append(f"Interventions: {'; '.join(registration.interventions)}.")
    dates = [
        f"{label} {date}"
        for label, date in (("start", registration.start_date), ("completion", registration.completion_date))
        if date
    ]
    if dates:
        facts.append(f"Dates: {', '.join(dates)}.")
    if registration.sponsor:
        facts.append(f"Sponsor: {registration.sponsor}.")
    if registration.result_pmids:
        facts.append(f"Results publications: PMID {', '.join(registration.result_pmids)}.")
    return " ".join(facts)


def parse_study(study: object, position: int) -> Evidence | None:
    """One element of ``studies``; None when it has no NCT id or no title."""
    protocol = json_object(json_object(study).get("protocolSection"))
    identification = json_object(protocol.get("identificationModule"))
    nct_id = text_of(identification.get("nctId")).upper()
    title = text_of(identification.get("briefTitle")) or text_of(identification.get("officialTitle"))
    if not _NCT.fullmatch(nct_id) or not title:
        return None
    has_results = json_object(study).get("hasResults") is True
    registration = parse_registration(protocol, has_results)
    summary = shorten(
        text_of(json_object(protocol.get("descriptionModule")).get("briefSummary")), MAX_SUMMARY_CHARS, on_word=True
    )
    status = json_object(protocol.get("statusModule"))
    citation = Citation(
        source="clinicaltrials",
        title=title[:MAX_TITLE_CHARS],
        url=STUDY_URL.format(nct_id=nct_id),
        date=_date(status.get("studyFirstPostDateStruct")) or registration.start_date or "Unknown",
        authors=(registration.sponsor,) if registration.sponsor else (),
        journal="ClinicalTrials.gov",
        nct_id=nct_id,
        registration=registration,
    )
    content = " ".join(part for part in (summary, describe(registration)) if part)
    return Evidence(
        content=content,
        citation=citation,
        relevance=rank_relevance(position),
        grade=grade_registration(registration.phases, registration.enrollment),
    )


def parse_studies(data: object) -> tuple[list[Evidence], str | None]:
    """Evidence from a ``/studies`` body, and its ``nextPageToken``. A body that is not a studies
    response raises SearchError."""
    if not isinstance(data, dict) or not isinstance(data.get("studies"), list):
        raise SearchError("unexpected response: no 'studies' list", source="clinicaltrials")
    evidence = [item for position, study in enumerate(data["studies"]) if (item := parse_study(study, position))]
    token = text_of(data.get("nextPageToken")) or None
    return evidence, token


class ClinicalTrialsTool(JsonApiTool):
    """Searches ClinicalTrials.gov's registry; results in the registry's relevance order, paged with
    ``nextPageToken`` until ``max_results`` are in hand."""

    name: ClassVar[SourceName] = "clinicaltrials"

    async def _page(self, term: str, size: int, token: str | None) -> tuple[list[Evidence], str | None]:
        params: dict[str, str | int] = {"query.term": term, "pageSize": size, "format": "json"}
        if self.since is not None:  # entries registered or updated on or after ``since``
            params["filter.advanced"] = f"AREA[LastUpdatePostDate]RANGE[{self.since:%Y-%m-%d},MAX]"
        if token:
            params["pageToken"] = token
        try:
            data = await self.get_json("/studies", params)
        except SourceHTTPError as error:
            if error.status == 403:
                raise error.restated(REFUSED_MESSAGE.format(host=self.host), source=self.name) from None
            raise
        return parse_studies(data)

    async def _search(self, query: str, max_results: int) -> list[Evidence]:
        term = without_field_tags(query)
        found: list[Evidence] = []
        token: str | None = None
        for _ in range(MAX_PAGES):
            page, token = await self._page(term, min(max_results - len(found), MAX_PAGE_SIZE), token)
            found += page
            if len(found) >= max_results or not token or not page:
                break
        # Relevance follows the registry's order across pages.
        ranked = [item.model_copy(update={"relevance": rank_relevance(rank)}) for rank, item in enumerate(found)]
        logger.info("clinicaltrials_parsed", term=term, studies=len(ranked))
        return ranked[:max_results]
