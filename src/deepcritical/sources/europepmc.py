"""Europe PMC (REST ``GET /search?format=json&resultType=core``): journal articles, full-text records and
preprints as Evidence. A record with a PMID or a DOI merges with the PubMed record of the same article (identity
keys in ``models``); retractions are read as PubMed marks them, and preprints (source ``PPR``) graded so."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any, ClassVar

import structlog

from deepcritical.errors import SearchError
from deepcritical.models import DOI_PATTERN, Citation, Evidence, SourceName
from deepcritical.source_table import BY_NAME
from deepcritical.sources.base import JsonApiTool, json_count, json_object
from deepcritical.sources.grading import grade_record, is_retracted
from deepcritical.sources.query import without_field_tags
from deepcritical.sources.web import MAX_TITLE_CHARS, rank_relevance, text_of
from deepcritical.text import collapse_whitespace, shorten

logger = structlog.get_logger(__name__)

EUROPEPMC_BASE_URL = BY_NAME["europepmc"].base_url or ""
ARTICLE_URL = "https://europepmc.org/article/{source}/{id}"
MAX_PAGE_SIZE = 1000  # the API's limit
OPEN_END = "3000-12-31"  # the far end of a "since" date range
_PMID = re.compile(r"\d{1,9}")
_PMCID = re.compile(r"PMC\d+", re.IGNORECASE)
_DATE = re.compile(r"\d{4}(?:-\d{2}(?:-\d{2})?)?")
_HEADING = re.compile(r"<h[1-6][^>]*>(.*?)</h[1-6]>", re.IGNORECASE | re.DOTALL)
_BREAK = re.compile(r"<(?:br|/p|p)\b[^>]*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")


def _list(value: object) -> list[Any]:
    """Europe PMC gives a one-element list as a list, but be lenient with a bare value."""
    if isinstance(value, list):
        return value
    return [] if value is None else [value]


def plain_text(markup: object) -> str:
    """Europe PMC's abstract and title HTML as text: a section heading becomes "Heading: ", other tags
    go, entities are decoded."""
    if not isinstance(markup, str):
        return ""
    text = _HEADING.sub(lambda m: f" {_TAG.sub('', m.group(1)).strip().rstrip(':')}: ", markup)
    text = _TAG.sub("", _BREAK.sub(" ", text))
    return collapse_whitespace(html.unescape(text))


def _authors(record: Mapping[str, Any]) -> tuple[str, ...]:
    names = []
    for author in _list(json_object(record.get("authorList")).get("author")):
        author = json_object(author)
        if name := text_of(author.get("fullName")) or text_of(author.get("collectiveName")):
            names.append(name)
    if names:
        return tuple(names)
    return tuple(part.strip(" .") for part in text_of(record.get("authorString")).split(",") if part.strip(" ."))


def _date(record: Mapping[str, Any]) -> str:
    journal = json_object(record.get("journalInfo"))
    for candidate in (record.get("firstPublicationDate"), journal.get("printPublicationDate"), record.get("pubYear")):
        if (value := text_of(candidate)) and _DATE.fullmatch(value):
            return value
    return "Unknown"


def _journal(record: Mapping[str, Any]) -> str | None:
    journal = json_object(json_object(record.get("journalInfo")).get("journal"))
    return (
        text_of(journal.get("title"))
        or text_of(journal.get("isoabbreviation"))
        or text_of(json_object(record.get("bookOrReportDetails")).get("publisher"))
        or text_of(record.get("journalTitle"))
        or None
    )


def _corrections(record: Mapping[str, Any]) -> set[str]:
    """The lower-cased ``type`` of each comment or correction ("retraction in", "expression of concern in")."""
    entries = _list(json_object(record.get("commentCorrectionList")).get("commentCorrection"))
    return {text_of(json_object(entry).get("type")).lower() for entry in entries} - {""}


NO_ABSTRACT = "(Europe PMC has no abstract for this record: judge it by its title and type only.)"


def parse_result(record: object, position: int) -> Evidence | None:
    """One element of ``resultList.result``; None without an id or a title. A record without an abstract
    (a letter, an editorial, an older article) is kept with its title, identifiers and grade, and its text
    says that there is no abstract: a search that found one article should not answer with nothing."""
    record = json_object(record)
    source, record_id = text_of(record.get("source")).upper(), text_of(record.get("id"))
    title, abstract = plain_text(record.get("title")), plain_text(record.get("abstractText"))
    if not source or not record_id or not title:
        return None
    pmid = text_of(record.get("pmid"))
    pmcid = text_of(record.get("pmcid")).upper()
    doi = text_of(record.get("doi"))
    types = tuple(
        text for value in _list(json_object(record.get("pubTypeList")).get("pubType")) if (text := text_of(value))
    )
    mesh = tuple(
        name
        for heading in _list(json_object(record.get("meshHeadingList")).get("meshHeading"))
        if (name := text_of(json_object(heading).get("descriptorName")))
    )
    open_access = text_of(record.get("isOpenAccess")).upper()
    title = shorten(title, MAX_TITLE_CHARS)
    citation = Citation(
        source="europepmc",
        title=title,
        url=ARTICLE_URL.format(source=source, id=record_id),
        date=_date(record),
        authors=_authors(record),
        journal=_journal(record),
        doi=doi if DOI_PATTERN.fullmatch(doi) else None,
        pmid=pmid if _PMID.fullmatch(pmid) else None,
        pmcid=pmcid if _PMCID.fullmatch(pmcid) else None,
        publication_types=types,
        mesh_headings=mesh,
        cited_by_count=json_count(record.get("citedByCount")),
        open_access={"Y": True, "N": False}.get(open_access),
    )
    grade = grade_record(title=title, text=abstract, publication_types=types, mesh_headings=mesh)
    content = abstract or f"{title} {NO_ABSTRACT}"
    if source == "PPR" and grade.design != "preprint":  # the source says so when the types do not
        grade = grade.model_copy(update={"design": "preprint", "level": None, "basis": "source"})
    corrections = _corrections(record)
    return Evidence(
        content=content,
        citation=citation,
        relevance=rank_relevance(position),
        grade=grade,
        retracted=is_retracted(types) or any(kind.startswith("retraction in") for kind in corrections),
        expression_of_concern=any(kind.startswith("expression of concern in") for kind in corrections),
    )


def parse_search(data: object) -> list[Evidence]:
    """Evidence from a ``/search`` body in Europe PMC's relevance order. A body that is not a search
    response raises SearchError; Europe PMC reports a bad query inside the body."""
    if not isinstance(data, dict):
        raise SearchError("unexpected response: not a JSON object", source="europepmc")
    if "resultList" not in data:
        raise SearchError("unexpected response: no 'resultList'", source="europepmc")
    results = _list(json_object(data.get("resultList")).get("result"))
    found = [item for position, record in enumerate(results) if (item := parse_result(record, position))]
    if len(found) < len(results):  # said, not silent: a search with hits never turns to nothing unnoticed
        logger.warning("europepmc_records_skipped", skipped=len(results) - len(found), reason="no id or no title")
    return found


class EuropePmcTool(JsonApiTool):
    """Searches Europe PMC (PubMed, PMC full text, preprints, and more) with full records (``core``)."""

    name: ClassVar[SourceName] = "europepmc"

    async def _search(self, query: str, max_results: int) -> list[Evidence]:
        term = without_field_tags(query)
        if self.since is not None:  # first published (online or in print) on or after ``since``
            term = f"({term}) AND FIRST_PDATE:[{self.since:%Y-%m-%d} TO {OPEN_END}]"
        params: dict[str, str | int] = {
            "query": term,
            "format": "json",
            "resultType": "core",
            "pageSize": max(1, min(max_results, MAX_PAGE_SIZE)),
            "cursorMark": "*",
        }
        data = await self.get_json("/search", params)
        evidence = parse_search(data)
        logger.info("europepmc_parsed", term=term, results=len(evidence))
        return evidence
