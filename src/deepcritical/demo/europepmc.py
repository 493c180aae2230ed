"""Stand-in for Europe PMC's REST search (``GET https://www.ebi.ac.uk/europepmc/webservices/rest/search``) over
the demo corpus: ``format=json``, ``resultType=core``, ``pageSize`` and ``cursorMark`` as the real service takes
them. Europe PMC holds PubMed's records, so the demo PubMed records are served too (source ``MED``), beside
the preprints only Europe PMC has (source ``PPR``)."""

from __future__ import annotations

import re
import zlib
from datetime import date

import httpx2

from deepcritical.demo import fulltext
from deepcritical.demo.corpus import hits, page_offset, page_token
from deepcritical.demo.records import CollectiveAuthor, EuropePmcRecord, PubmedRecord, entry_date, month_number

REST_PATH = "/europepmc/webservices/rest/"
SEARCH_PATH = REST_PATH + "search"
DEFAULT_PAGE_SIZE = 25  # the service's default
MAX_PAGE_SIZE = 1000
# ``AND FIRST_PDATE:[2026-05-01 TO 3000-12-31]``: Europe PMC's first-publication date range.
_FIRST_PDATE = re.compile(r"\s*\bAND\s+FIRST_PDATE:\[(\d{4}-\d{2}-\d{2}) TO (\d{4}-\d{2}-\d{2})\]", re.IGNORECASE)


def _abstract_html(sections: tuple[tuple[str | None, str], ...]) -> str:
    """Europe PMC writes a structured abstract's labels as HTML headings."""
    return "".join(f"<h4>{label.capitalize()}</h4>{text}" if label else text for label, text in sections)


def _cited_by(identifier: str) -> int:
    return zlib.crc32(identifier.encode()) % 120  # deterministic, synthetic


def _date(record: PubmedRecord) -> str:
    date = record.pub_date
    if not date.year:
        return (date.medline_date or "")[:4]
    number = f"{found:02d}" if (found := month_number(date.month)) else date.month or ""
    return "-".join(part for part in (date.year, number, (date.day or "").zfill(2) if date.day else "") if part)


def pubmed_result(record: PubmedRecord) -> dict[str, object]:
    """A PubMed record as Europe PMC's ``core`` result for source MED."""
    authors: list[dict[str, str]] = []
    for person in record.authors:
        if isinstance(person, CollectiveAuthor):
            authors.append({"collectiveName": person.collective_name})
        else:
            authors.append(
                {
                    "fullName": f"{person.last_name} {person.initials}",
                    "firstName": person.fore_name,
                    "lastName": person.last_name,
                    "initials": person.initials,
                }
            )
    result: dict[str, object] = {
        "id": record.pmid,
        "source": "MED",
        "pmid": record.pmid,
        "title": record.title,
        "authorString": ", ".join(a.get("fullName") or a.get("collectiveName", "") for a in authors) + ".",
        "authorList": {"author": authors},
        "journalInfo": {
            "volume": record.journal.volume,
            "issue": record.journal.issue,
            "journal": {"title": record.journal.title, "isoabbreviation": record.journal.iso_abbreviation},
            "printPublicationDate": _date(record),
        },
        "pubYear": (record.pub_date.year or record.pub_date.medline_date or "")[:4],
        "pubTypeList": {"pubType": list(record.publication_types)},
        "isOpenAccess": "Y" if record.pmcid else "N",
        "citedByCount": _cited_by(record.pmid),
        "firstPublicationDate": _date(record),
    }
    if record.abstract:
        result["abstractText"] = _abstract_html(tuple((s.label, s.text) for s in record.abstract))
    if record.doi:
        result["doi"] = record.doi
    if record.pmcid:
        result["pmcid"] = record.pmcid
    if record.mesh_headings:
        result["meshHeadingList"] = {
            "meshHeading": [{"majorTopic_YN": "N", "descriptorName": name} for name in record.mesh_headings]
        }
    corrections = [
        {"id": pmid, "source": "MED", "type": kind, "note": "", "orderIn": 0}
        for kind, pmid in (
            ("Retraction in", record.retraction_in),
            ("Expression of concern in", record.expression_of_concern_in),
        )
        if pmid
    ]
    if corrections:
        result["commentCorrectionList"] = {"commentCorrection": corrections}
    return result


def preprint_result(record: EuropePmcRecord) -> dict[str, object]:
    """A preprint as Europe PMC's ``core`` result for source PPR."""
    return {
        "id": record.ppr_id,
        "source": "PPR",
        "doi": record.doi,
        "title": record.title,
        "authorString": ", ".join(record.authors) + ".",
        "authorList": {"author": [{"fullName": name} for name in record.authors]},
        "pubYear": record.first_publication_date[:4],
        "abstractText": _abstract_html(tuple((s.label, s.text) for s in record.abstract)),
        "pubTypeList": {"pubType": list(record.publication_types)},
        "bookOrReportDetails": {
            "publisher": record.publisher,
            "yearOfPublication": int(record.first_publication_date[:4]),
        },
        "isOpenAccess": "Y",
        "citedByCount": _cited_by(record.ppr_id),
        "firstPublicationDate": record.first_publication_date,
    }


def search(request: httpx2.Request) -> httpx2.Response:
    params = request.url.params
    query = params.get("query", "").strip()
    if not query:
        return httpx2.Response(400, json={"errCode": 400, "errMsg": "demo Europe PMC stand-in: query is required"})
    try:
        size = int(params.get("pageSize", DEFAULT_PAGE_SIZE))
    except ValueError:
        size = -1
    cursor = params.get("cursorMark", "*")
    offset = 0 if cursor == "*" else page_offset(cursor)
    if not 0 < size <= MAX_PAGE_SIZE or offset is None:
        return httpx2.Response(
            400, json={"errCode": 400, "errMsg": "demo Europe PMC stand-in: bad pageSize or cursorMark"}
        )
    since, until = date.min, date.max
    if ranged := _FIRST_PDATE.search(query):
        since, until = date.fromisoformat(ranged[1]), date.fromisoformat(ranged[2])
        query = _FIRST_PDATE.sub("", query).strip()
    found = sorted(
        (
            hit
            for hit in (*hits("pubmed", query), *hits("europepmc", query))
            if since <= entry_date(hit.record) <= until
        ),
        key=lambda hit: -hit.score,
    )
    results: list[dict[str, object]] = []
    for hit in found:
        if isinstance(hit.record, PubmedRecord):
            results.append(pubmed_result(hit.record))
        elif isinstance(hit.record, EuropePmcRecord):
            results.append(preprint_result(hit.record))
    page = results[offset : offset + size]
    body: dict[str, object] = {
        "version": "6.9",
        "hitCount": len(results),
        "request": {"queryString": query, "resultType": params.get("resultType", "lite"), "pageSize": size},
        "resultList": {"result": page},
    }
    if offset + size < len(results):
        body["nextCursorMark"] = page_token(offset + size)
    return httpx2.Response(200, json=body)


def respond(request: httpx2.Request) -> httpx2.Response | None:
    """The Europe PMC stand-in's answer (search, an article's full text), or None for a path it does not serve."""
    path = request.url.path.rstrip("/")
    if request.method == "GET" and path == SEARCH_PATH:
        return search(request)
    if request.method == "GET" and path.startswith(REST_PATH) and path.endswith(fulltext.FULLTEXT_SUFFIX):
        return fulltext.europepmc_full_text(request)
    return None
