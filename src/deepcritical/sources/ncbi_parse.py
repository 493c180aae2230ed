"""PubMed efetch responses to Evidence. No requests here: text in, results out."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pydantic
import structlog

from deepcritical.models import Citation, Evidence
from deepcritical.sources.grading import grade_record, is_retracted
from deepcritical.sources.ncbi_body import (
    as_list,
    attr,
    decode_body,
    fail,
    flatten_text,
    get,
    raise_error_text,
    raise_for_unexpected_root,
)
from deepcritical.text import collapse_whitespace, shorten

logger = structlog.get_logger(__name__)

PUBMED_ARTICLE_URL = "https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
MAX_TITLE_CHARS = 500
_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTHS = {name: number for number, name in enumerate(_MONTH_NAMES, 1)}
_PMID = re.compile(r"[0-9]{1,10}")
_DOI = re.compile(r"10\.[0-9]{4,9}/\S+")
_NCT = re.compile(r"NCT[0-9]{8}")


@dataclass(frozen=True)
class ParsedBatch:
    """What one efetch body gave: evidence in esearch order, and what was left out and why."""

    evidence: list[Evidence]
    records: int = 0
    without_abstract: int = 0
    malformed: int = 0


def relevance_for_rank(rank: int) -> float:
    """PubMed's relevance order is all we know; decay gently so rank 0 is 1.0 and nothing drops below 0.5."""
    return max(0.5, 1.0 - 0.02 * rank)


def _date(pub_date: object) -> str:
    """YYYY, YYYY-MM or YYYY-MM-DD from Year/Month/Day (Month may be 'Jan' or '01'); the year of a
    MedlineDate ('1998 Dec-1999 Jan'); 'Unknown' when there is no year."""
    year = flatten_text(get(pub_date, "Year"))
    if not re.fullmatch(r"[0-9]{4}", year):
        medline = re.search(r"(?<![0-9])[0-9]{4}(?![0-9])", flatten_text(get(pub_date, "MedlineDate")))
        return medline.group(0) if medline else "Unknown"
    month_text = flatten_text(get(pub_date, "Month")).lower()
    month = int(month_text) if re.fullmatch(r"[0-9]{1,2}", month_text) else _MONTHS.get(month_text[:3], 0)
    if not 1 <= month <= 12:
        return year
    day_text = flatten_text(get(pub_date, "Day"))
    day = int(day_text) if re.fullmatch(r"[0-9]{1,2}", day_text) else 0
    return f"{year}-{month:02d}-{day:02d}" if 1 <= day <= 31 else f"{year}-{month:02d}"


def _first_date(*candidates: object) -> str:
    for candidate in candidates:
        if candidate is not None and (date := _date(candidate)) != "Unknown":
            return date
    return "Unknown"


def _authors(author_lists: object) -> tuple[str, ...]:
    """'Last Initials' (PubMed's own style) or a collective name; editors and invalid names left out."""
    names: list[str] = []
    for author_list in as_list(author_lists):
        if attr(author_list, "Type") not in (None, "authors"):
            continue
        for author in as_list(get(author_list, "Author")):
            if attr(author, "ValidYN") == "N":
                continue
            if collective := flatten_text(get(author, "CollectiveName")):
                names.append(collective)
            elif last := flatten_text(get(author, "LastName")):
                given = flatten_text(get(author, "Initials")) or flatten_text(get(author, "ForeName"))
                names.append(f"{last} {given}".strip())
    return tuple(names)


def _abstract(abstract: object) -> str:
    """Sections joined in order; a labelled section keeps its label ('METHODS: ...')."""
    sections = []
    for part in as_list(get(abstract, "AbstractText")):
        text = flatten_text(part)
        if not text:
            continue
        label = collapse_whitespace(attr(part, "Label") or "")
        sections.append(f"{label}: {text}" if label else text)
    return " ".join(sections)


def _ids(*id_lists: object) -> dict[str, str]:
    """ArticleId values by IdType (doi, pmc, pubmed ...), first one of each type."""
    found: dict[str, str] = {}
    for id_list in id_lists:
        for item in as_list(get(id_list, "ArticleId")):
            kind, value = (attr(item, "IdType") or "").lower(), flatten_text(item)
            if kind and value:
                found.setdefault(kind, value)
    return found


def _doi(ids: dict[str, str], locations: object) -> str | None:
    candidates = [ids.get("doi", "")]
    candidates += [
        flatten_text(loc) for loc in as_list(locations) if attr(loc, "EIdType") == "doi" and attr(loc, "ValidYN") != "N"
    ]
    return next((value for value in candidates if _DOI.fullmatch(value)), None)


def _pmcid(ids: dict[str, str]) -> str | None:
    digits = ids.get("pmc", "").upper().removeprefix("PMC")
    return f"PMC{digits}" if re.fullmatch(r"[0-9]+", digits) else None


def _texts(node: object) -> tuple[str, ...]:
    return tuple(text for text in (flatten_text(item) for item in as_list(node)) if text)


def _mesh(citation: object) -> tuple[str, ...]:
    """MeSH descriptor names, in the record's order (qualifiers left out)."""
    return tuple(
        name
        for heading in as_list(get(citation, "MeshHeadingList", "MeshHeading"))
        if (name := flatten_text(get(heading, "DescriptorName")))
    )


def _corrections(citation: object) -> set[str]:
    """The ``RefType`` of every CommentsCorrections entry: ``RetractionIn`` says this record was retracted
    (``RetractionOf`` is the notice itself), ``ExpressionOfConcernIn`` that the journal raised a concern."""
    return {
        kind
        for entry in as_list(get(citation, "CommentsCorrectionsList", "CommentsCorrections"))
        if (kind := attr(entry, "RefType"))
    }


def _nct_id(article: object) -> str | None:
    """The ClinicalTrials.gov number a record declares in its DataBankList, if any."""
    for bank in as_list(get(article, "DataBankList", "DataBank")):
        if flatten_text(get(bank, "DataBankName")).lower().replace(".", "") != "clinicaltrialsgov":
            continue
        for number in as_list(get(bank, "AccessionNumberList", "AccessionNumber")):
            if _NCT.fullmatch(text := flatten_text(number).upper()):
                return text
    return None


@dataclass(frozen=True)
class _Record:
    pmid: str
    title: str
    abstract: str
    date: str
    authors: tuple[str, ...]
    journal: str | None
    doi: str | None
    pmcid: str | None
    publication_types: tuple[str, ...]
    mesh_headings: tuple[str, ...] = ()
    corrections: frozenset[str] = frozenset()
    nct_id: str | None = None


def _journal_record(record: object) -> _Record:
    citation = get(record, "MedlineCitation")
    article = get(citation, "Article")
    journal = get(article, "Journal")
    ids = _ids(get(record, "PubmedData", "ArticleIdList"))
    return _Record(
        pmid=flatten_text(get(citation, "PMID")),
        title=flatten_text(get(article, "ArticleTitle")) or flatten_text(get(article, "VernacularTitle")),
        abstract=_abstract(get(article, "Abstract")),
        date=_first_date(get(journal, "JournalIssue", "PubDate"), get(article, "ArticleDate")),
        authors=_authors(get(article, "AuthorList")),
        journal=flatten_text(get(journal, "Title"))
        or flatten_text(get(journal, "ISOAbbreviation"))
        or flatten_text(get(citation, "MedlineJournalInfo", "MedlineTA"))
        or None,
        doi=_doi(ids, get(article, "ELocationID")),
        pmcid=_pmcid(ids),
        publication_types=_texts(get(article, "PublicationTypeList", "PublicationType")),
        mesh_headings=_mesh(citation),
        corrections=frozenset(_corrections(citation)),
        nct_id=_nct_id(article),
    )


def _book_record(record: object) -> _Record:
    """A PubmedBookArticle (a book or a chapter, e.g. GeneReviews): a chapter's date is when it was
    contributed, not when the book series began."""
    document = get(record, "BookDocument")
    book = get(document, "Book")
    book_title = flatten_text(get(book, "BookTitle"))
    ids = _ids(get(record, "PubmedBookData", "ArticleIdList"), get(document, "ArticleIdList"))
    return _Record(
        pmid=flatten_text(get(document, "PMID")),
        title=flatten_text(get(document, "ArticleTitle")) or book_title,
        abstract=_abstract(get(document, "Abstract")),
        date=_first_date(get(document, "ContributionDate"), get(book, "PubDate")),
        authors=_authors(get(document, "AuthorList")) or _authors(get(book, "AuthorList")),
        journal=book_title or None,
        doi=_doi(ids, get(document, "ELocationID")),
        pmcid=_pmcid(ids),
        publication_types=_texts(get(document, "PublicationType")),
    )


def _evidence(record: _Record, rank: int) -> Evidence:
    title = shorten(record.title, MAX_TITLE_CHARS)
    citation = Citation(
        source="pubmed",
        title=title,
        url=PUBMED_ARTICLE_URL.format(pmid=record.pmid),
        date=record.date,
        authors=record.authors,
        journal=record.journal,
        doi=record.doi,
        pmid=record.pmid,
        pmcid=record.pmcid,
        publication_types=record.publication_types,
        mesh_headings=record.mesh_headings,
        nct_id=record.nct_id,
    )
    grade = grade_record(
        title=title,
        text=record.abstract,
        publication_types=record.publication_types,
        mesh_headings=record.mesh_headings,
    )
    return Evidence(
        content=record.abstract,
        citation=citation,
        relevance=relevance_for_rank(rank),
        grade=grade,
        retracted=is_retracted(record.publication_types) or "RetractionIn" in record.corrections,
        expression_of_concern="ExpressionOfConcernIn" in record.corrections,
    )


def parse_efetch_data(data: object, order: Sequence[str] = ()) -> ParsedBatch:
    """Evidence from an xmltodict tree of an efetch body, ranked by ``order`` (the esearch PMIDs).

    Records without an abstract are counted, not returned: a bare title is too weak to judge.
    """
    raise_for_unexpected_root("efetch", data, "PubmedArticleSet")
    root = get(data, "PubmedArticleSet")
    raw = [(_journal_record, item) for item in as_list(get(root, "PubmedArticle"))]
    raw += [(_book_record, item) for item in as_list(get(root, "PubmedBookArticle"))]
    rank_of = {pmid: rank for rank, pmid in reversed(list(enumerate(order)))}
    ranked: list[tuple[int, _Record]] = []
    without_abstract = malformed = 0
    for position, (read, item) in enumerate(raw):
        record = read(item)
        if not record.abstract:
            without_abstract += 1
        elif not _PMID.fullmatch(record.pmid) or not record.title:
            malformed += 1
        else:
            ranked.append((rank_of.get(record.pmid, len(order) + position), record))
    evidence: list[Evidence] = []
    seen: set[str] = set()
    for rank, record in sorted(ranked, key=lambda pair: pair[0]):
        if record.pmid in seen:
            continue
        seen.add(record.pmid)
        try:
            evidence.append(_evidence(record, rank))
        except pydantic.ValidationError as error:
            malformed += 1
            logger.warning("pubmed_record_invalid", pmid=record.pmid, error=str(error).splitlines()[0])
    return ParsedBatch(evidence, records=len(raw), without_abstract=without_abstract, malformed=malformed)


def parse_efetch(text: str, order: Sequence[str] = ()) -> ParsedBatch:
    """Parse an ``efetch db=pubmed retmode=xml`` body; anything unusable raises SearchError."""
    kind, data = decode_body(text, "efetch")
    if kind == "json":
        raise_error_text("efetch", get(data, "error"))
        fail("efetch", f"returned JSON instead of XML: {str(data)[:120]!r}")
    return parse_efetch_data(data, order)
