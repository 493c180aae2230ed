"""Stand-in for OpenAlex's works search (``GET https://api.openalex.org/works?search=...``) over the demo corpus,
in OpenAlex's documented format: ``meta`` (``count``, ``page``, ``per_page``) and ``results``, each a Work
with its abstract as an inverted index. OpenAlex indexes the journal literature PubMed holds, so the demo
PubMed records are its works; ``per-page``, ``page`` and ``filter=from_publication_date:`` work as the real
service takes them."""

from __future__ import annotations

import re
import zlib
from datetime import date

import httpx2

from deepcritical.demo.corpus import hits
from deepcritical.demo.records import CollectiveAuthor, PubmedRecord, entry_date

WORKS_PATH = "/works"
DEFAULT_PER_PAGE = 25  # the service's default
MAX_PER_PAGE = 200
_FROM = re.compile(r"(?:^|,)from_publication_date:(\d{4}-\d{2}-\d{2})(?:,|$)")
_WORD = re.compile(r"\S+")
_TYPES = {"Review": "review", "Systematic Review": "review", "Meta-Analysis": "review", "Letter": "letter"}


def _inverted(text: str) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for position, word in enumerate(_WORD.findall(text)):
        index.setdefault(word, []).append(position)
    return index


def work(record: PubmedRecord) -> dict[str, object]:
    """A PubMed record as an OpenAlex Work."""
    work_id = f"https://openalex.org/W{zlib.crc32(record.pmid.encode())}"  # deterministic, synthetic
    published = entry_date(record)
    kind = next((_TYPES[name] for name in record.publication_types if name in _TYPES), "article")
    abstract = " ".join(f"{s.label.capitalize()}: {s.text}" if s.label else s.text for s in record.abstract)
    ids: dict[str, str] = {"openalex": work_id, "pmid": f"https://pubmed.ncbi.nlm.nih.gov/{record.pmid}"}
    if record.doi:
        ids["doi"] = f"https://doi.org/{record.doi}"
    if record.pmcid:
        ids["pmcid"] = f"https://www.ncbi.nlm.nih.gov/pmc/articles/{record.pmcid.removeprefix('PMC')}"
    authorships = [
        {
            "author_position": "first" if index == 0 else "middle",
            "author": {
                "id": None,
                "display_name": person.collective_name
                if isinstance(person, CollectiveAuthor)
                else f"{person.fore_name} {person.last_name}",
            },
        }
        for index, person in enumerate(record.authors)
    ]
    return {
        "id": work_id,
        "doi": ids.get("doi"),
        "title": record.title,
        "display_name": record.title,
        "publication_year": published.year,
        "publication_date": published.isoformat(),
        "ids": ids,
        "type": kind,
        "primary_location": {
            "is_oa": bool(record.pmcid),
            "landing_page_url": ids.get("doi") or ids["pmid"],
            "source": {"display_name": record.journal.title, "type": "journal"},
        },
        "open_access": {"is_oa": bool(record.pmcid)},
        "authorships": authorships,
        "cited_by_count": zlib.crc32(record.pmid.encode()) % 300,
        "is_retracted": bool(record.retraction_in),
        "mesh": [{"descriptor_name": name, "is_major_topic": False} for name in record.mesh_headings],
        "abstract_inverted_index": _inverted(abstract) if abstract else None,
    }


def works(request: httpx2.Request) -> httpx2.Response:
    params = request.url.params
    search = params.get("search", "").strip()
    try:
        per_page, page = int(params.get("per-page", DEFAULT_PER_PAGE)), int(params.get("page", 1))
    except ValueError:
        per_page = page = -1
    if not 0 < per_page <= MAX_PER_PAGE or page < 1:
        return httpx2.Response(
            400, json={"error": "Invalid query parameters error.", "message": "per-page or page out of range"}
        )
    since = date.min
    if filters := params.get("filter", ""):
        if not (found := _FROM.search(filters)):
            return httpx2.Response(
                400, json={"error": "Invalid query parameters error.", "message": f"unknown filter {filters}"}
            )
        since = date.fromisoformat(found[1])
    records = (
        [
            hit.record
            for hit in sorted(hits("pubmed", search), key=lambda hit: -hit.score)
            if isinstance(hit.record, PubmedRecord) and entry_date(hit.record) >= since
        ]
        if search
        else []
    )
    start = (page - 1) * per_page
    body = {
        "meta": {"count": len(records), "db_response_time_ms": 1, "page": page, "per_page": per_page},
        "results": [work(record) for record in records[start : start + per_page]],
        "group_by": [],
    }
    return httpx2.Response(200, json=body)


def respond(request: httpx2.Request) -> httpx2.Response | None:
    """The OpenAlex stand-in's answer, or None for a path it does not serve."""
    if request.method == "GET" and request.url.path.rstrip("/") == WORKS_PATH:
        return works(request)
    return None
