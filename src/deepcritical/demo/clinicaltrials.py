"""Stand-in for ClinicalTrials.gov API v2 (``GET https://clinicaltrials.gov/api/v2/studies``) over the demo
corpus: ``query.term``, ``pageSize`` and ``pageToken`` as the real service takes them, studies in its
JSON layout (``protocolSection`` modules, ``hasResults``, ``nextPageToken``)."""

from __future__ import annotations

import re
from datetime import date

import httpx2

from deepcritical.demo.corpus import page_offset, page_token
from deepcritical.demo.corpus import search as corpus_search
from deepcritical.demo.records import ClinicalTrialsRecord, entry_date

STUDIES_PATH = "/api/v2/studies"
DEFAULT_PAGE_SIZE = 10  # the service's default
MAX_PAGE_SIZE = 1000
_MATCHES = 1000
# The one advanced filter served: entries updated on or after a date. A demo entry is never updated after it
# is first posted, so its first posting is its last update.
_LAST_UPDATE = re.compile(r"AREA\[LastUpdatePostDate\]RANGE\[(\d{4}-\d{2}-\d{2}),\s*MAX\]")


def _text(status: int, message: str) -> httpx2.Response:
    # The real service answers a bad parameter with a plain-text 400.
    return httpx2.Response(status, text=message, headers={"Content-Type": "text/plain"})


def study(record: ClinicalTrialsRecord) -> dict[str, object]:
    """One study in the API's layout (the modules DeepCritical reads, as the registry fills them)."""
    status: dict[str, object] = {
        "overallStatus": record.overall_status,
        "startDateStruct": {"date": record.start_date},
        "studyFirstPostDateStruct": {"date": record.first_posted, "type": "ACTUAL"},
    }
    if record.completion_date:
        kind = "ACTUAL" if record.overall_status in ("COMPLETED", "TERMINATED") else "ESTIMATED"
        status["completionDateStruct"] = {"date": record.completion_date, "type": kind}
    design: dict[str, object] = {
        "studyType": record.study_type,
        "enrollmentInfo": {"count": record.enrollment, "type": record.enrollment_type},
    }
    if record.phases:
        design["phases"] = list(record.phases)
    if record.allocation:
        design["designInfo"] = {"allocation": record.allocation}
    protocol: dict[str, object] = {
        "identificationModule": {
            "nctId": record.nct_id,
            "briefTitle": record.title,
            "officialTitle": record.official_title,
        },
        "statusModule": status,
        "sponsorCollaboratorsModule": {"leadSponsor": {"name": record.sponsor, "class": "OTHER"}},
        "descriptionModule": {"briefSummary": record.brief_summary},
        "conditionsModule": {"conditions": list(record.conditions)},
        "designModule": design,
        "armsInterventionsModule": {
            "interventions": [{"type": item.type, "name": item.name} for item in record.interventions]
        },
    }
    if record.references:
        protocol["referencesModule"] = {
            "references": [{"pmid": ref.pmid, "type": ref.type, "citation": ref.citation} for ref in record.references]
        }
    return {"protocolSection": protocol, "hasResults": record.has_results}


def studies(request: httpx2.Request) -> httpx2.Response:
    params = request.url.params
    if params.get("format", "json") != "json":
        return _text(400, "demo ClinicalTrials.gov stand-in: only format=json is served")
    try:
        size = int(params.get("pageSize", DEFAULT_PAGE_SIZE))
    except ValueError:
        return _text(400, "Parameter `pageSize` has incorrect format")
    if not 0 < size <= MAX_PAGE_SIZE:
        return _text(400, f"Parameter `pageSize` must be between 1 and {MAX_PAGE_SIZE}")
    offset = 0
    if token := params.get("pageToken"):
        found = page_offset(token)
        if found is None:
            return _text(400, "Parameter `pageToken` has incorrect format")
        offset = found
    query = " ".join(params.get(name, "") for name in ("query.term", "query.cond", "query.intr")).strip()
    since = date.min
    if ranged := _LAST_UPDATE.fullmatch(params.get("filter.advanced", "")):
        since = date.fromisoformat(ranged[1])
    records = [
        r
        for r in corpus_search("clinicaltrials", query, k=_MATCHES)
        if isinstance(r, ClinicalTrialsRecord) and entry_date(r) >= since
    ]
    page = records[offset : offset + size]
    body: dict[str, object] = {"studies": [study(record) for record in page]}
    if offset + size < len(records):
        body["nextPageToken"] = page_token(offset + size)
    if params.get("countTotal") == "true":
        body["totalCount"] = len(records)
    return httpx2.Response(200, json=body)


def respond(request: httpx2.Request) -> httpx2.Response | None:
    """The ClinicalTrials.gov stand-in's answer, or None for a path it does not serve."""
    if request.method == "GET" and request.url.path.rstrip("/") == STUDIES_PATH:
        return studies(request)
    return None
