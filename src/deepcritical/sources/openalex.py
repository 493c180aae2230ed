"""OpenAlex (``GET https://api.openalex.org/works?search=...``): scholarly works of every field as Evidence,
parsed from OpenAlex's documented Work object (the abstract rebuilt from its inverted index). A work with a PMID
or a DOI merges with the PubMed or Europe PMC record of the same article (identity keys in ``models``)."""

from __future__ import annotations

import re
from typing import ClassVar

import structlog

from deepcritical.errors import SearchError
from deepcritical.models import DOI_PATTERN, Citation, Evidence, SourceName, normalize_doi
from deepcritical.sources.base import JsonApiTool, json_count, json_list, json_object
from deepcritical.sources.grading import grade_record
from deepcritical.sources.query import without_field_tags
from deepcritical.sources.web import MAX_TITLE_CHARS, rank_relevance, text_of
from deepcritical.text import collapse_whitespace, shorten

logger = structlog.get_logger(__name__)

MAX_PER_PAGE = 200  # the API's limit
_DATE = re.compile(r"\d{4}(?:-\d{2}(?:-\d{2})?)?")
_PMID = re.compile(r"(\d{1,9})/?$")
_PMCID = re.compile(r"(?:PMC)?(\d+)/?$", re.IGNORECASE)
# OpenAlex's work types as the publication types the grader reads (PubMed's words).
_TYPES = {
    "review": "Review",
    "letter": "Letter",
    "editorial": "Editorial",
    "erratum": "Published Erratum",
    "retraction": "Retraction of Publication",
    "preprint": "Preprint",
}
NO_ABSTRACT = "(OpenAlex has no abstract for this work: judge it by its title and type only.)"


def abstract_text(inverted: object) -> str:
    """The abstract from OpenAlex's inverted index (``{"word": [0, 5], ...}``): each word at its positions."""
    placed: dict[int, str] = {}
    for word, positions in json_object(inverted).items():
        for position in json_list(positions):
            if json_count(position) is not None:
                placed[position] = str(word)
    return " ".join(placed[position] for position in sorted(placed))


def _tail(url: object, pattern: re.Pattern[str]) -> str | None:
    match = pattern.search(text_of(url))
    return match.group(1) if match else None


def parse_work(work: object, position: int) -> Evidence | None:
    """One element of ``results``; None without an id or a title. A work without an abstract is kept with its
    title, identifiers and grade, and its text says so."""
    work = json_object(work)
    ids = json_object(work.get("ids"))
    openalex_id = text_of(work.get("id")) or text_of(ids.get("openalex"))
    title = collapse_whitespace(text_of(work.get("display_name")) or text_of(work.get("title")))
    if not openalex_id or not title:
        return None
    doi = normalize_doi(text_of(ids.get("doi")) or text_of(work.get("doi")))
    pmid = _tail(ids.get("pmid"), _PMID)
    pmcid = _tail(ids.get("pmcid"), _PMCID)
    location = json_object(work.get("primary_location"))
    journal = text_of(json_object(location.get("source")).get("display_name")) or None
    published = text_of(work.get("publication_date")) or text_of(work.get("publication_year"))
    kind = text_of(work.get("type")).lower()
    types = (_TYPES[kind],) if kind in _TYPES else ()
    mesh = tuple(
        name for item in json_list(work.get("mesh")) if (name := text_of(json_object(item).get("descriptor_name")))
    )
    authors = tuple(
        name
        for authorship in json_list(work.get("authorships"))
        if (name := text_of(json_object(json_object(authorship).get("author")).get("display_name")))
    )
    is_oa = json_object(work.get("open_access")).get("is_oa")
    abstract = abstract_text(work.get("abstract_inverted_index"))
    title = shorten(title, MAX_TITLE_CHARS)
    citation = Citation(
        source="openalex",
        title=title,
        url=text_of(location.get("landing_page_url")) or (f"https://doi.org/{doi}" if doi else openalex_id),
        date=published if _DATE.fullmatch(published) else "Unknown",
        authors=authors,
        journal=journal,
        doi=doi if DOI_PATTERN.fullmatch(doi) else None,
        pmid=pmid,
        pmcid=f"PMC{pmcid}" if pmcid else None,
        publication_types=types,
        mesh_headings=mesh,
        cited_by_count=json_count(work.get("cited_by_count")),
        open_access=is_oa if isinstance(is_oa, bool) else None,
    )
    grade = grade_record(title=title, text=abstract, publication_types=types, mesh_headings=mesh)
    if kind == "preprint" and grade.design != "preprint":  # the type says so when the text does not
        grade = grade.model_copy(update={"design": "preprint", "level": None, "basis": "source"})
    return Evidence(
        content=abstract or f"{title} {NO_ABSTRACT}",
        citation=citation,
        relevance=rank_relevance(position),
        grade=grade,
        retracted=work.get("is_retracted") is True,
    )


def parse_works(data: object) -> list[Evidence]:
    """Evidence from a ``/works`` body in OpenAlex's relevance order. A body that is not a works list raises
    SearchError (OpenAlex reports a bad filter with a 4xx and an ``error`` body, which the base turns into one)."""
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise SearchError("unexpected response: no 'results' list", source="openalex")
    results = data["results"]
    found = [item for position, work in enumerate(results) if (item := parse_work(work, position))]
    if len(found) < len(results):  # said, not silent
        logger.warning("openalex_works_skipped", skipped=len(results) - len(found), reason="no id or no title")
    return found


class OpenAlexTool(JsonApiTool):
    """Searches OpenAlex's works (titles, abstracts and full texts it indexes), most relevant first."""

    name: ClassVar[SourceName] = "openalex"

    async def _search(self, query: str, max_results: int) -> list[Evidence]:
        words = without_field_tags(query)
        params: dict[str, str | int] = {"search": words, "per-page": max(1, min(max_results, MAX_PER_PAGE))}
        if self.since is not None:  # published on or after ``since``
            params["filter"] = f"from_publication_date:{self.since:%Y-%m-%d}"
        evidence = parse_works(await self.get_json("/works", params))
        logger.info("openalex_parsed", search=words, results=len(evidence))
        return evidence
