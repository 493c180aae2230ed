"""A reference manager's export (Zotero, EndNote, Mendeley): RIS (rispy), BibTeX (bibtexparser, LaTeX
decoded by pylatexenc) and CSL-JSON (the standard library's json), the libraries ``report/exports.py``
already writes these formats with.

Each record becomes a document of its title and abstract, with its identifiers normalised to the ones
PubMed items carry, so a paper added from Zotero and the same paper found on PubMed are one item: the DOI
from its field or a doi.org link, the PMID and PMCID from their fields, a PubMed or PMC link, or a
"PMID: …" note (Zotero keeps them in Extra, EndNote's PubMed import in the accession number).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import rispy
from bibtexparser.entrypoint import parse_string
from pylatexenc.latex2text import LatexNodes2Text

from deepcritical.documents.model import (
    Block,
    DocumentFormat,
    DocumentMeta,
    ParsedDocument,
    clean_doi,
    clean_pmcid,
    clean_pmid,
)
from deepcritical.errors import DocumentError
from deepcritical.models import PUBMED_URL
from deepcritical.text import collapse_whitespace

_PMID_NOTE = re.compile(r"\bPMID:?\s*(\d{1,9})\b", re.IGNORECASE)
_PMCID_NOTE = re.compile(r"\b(PMC\d{1,9})\b")
_PMC_URL = re.compile(r"ncbi\.nlm\.nih\.gov/(?:pmc/)?articles/(PMC\d+)", re.IGNORECASE)
_DOI_URL = re.compile(r"^https?://(?:dx\.)?doi\.org/(\S+)$", re.IGNORECASE)
_YEAR = re.compile(r"\b(1[89]\d\d|2\d\d\d)\b")
_DATE = re.compile(r"^(\d{4})(?:[-/](\d{1,2}))?(?:[-/](\d{1,2}))?")
_LATEX = LatexNodes2Text(math_mode="verbatim")


def _text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(_text(part) for part in value)
    return collapse_whitespace(str(value)) if value is not None else ""


def _all_text(values: Iterable[Any]) -> str:
    return " ".join(_text(value) for value in values)


def _date(value: str) -> str:
    """'2020/05/01/' or '2020-5' as '2020-05-01' or '2020-05'; a year found anywhere; else Unknown."""
    match = _DATE.match(value.strip())
    if match:
        parts = [match.group(1)] + [f"{int(part):02d}" for part in match.groups()[1:] if part]
        if all(1 <= int(part) <= 31 for part in parts[1:]):
            return "-".join(parts)
        return parts[0]
    year = _YEAR.search(value)
    return year.group(1) if year else "Unknown"


def _identifiers(
    doi: str | None, pmid: str | None, pmcid: str | None, urls: Iterable[str], notes: str
) -> dict[str, str | None]:
    """The record's DOI, PMID and PMCID, from its fields first, then its links, then its notes."""
    urls = [url.strip() for url in urls if url and url.strip()]
    for url in urls:
        if doi is None and (match := _DOI_URL.match(url)):
            doi = match.group(1)
        if pmid is None and (match := PUBMED_URL.match(url)):
            pmid = match.group(1)
        if pmcid is None and (match := _PMC_URL.search(url)):
            pmcid = match.group(1)
    if pmid is None and (match := _PMID_NOTE.search(notes)):
        pmid = match.group(1)
    if pmcid is None and (match := _PMCID_NOTE.search(notes)):
        pmcid = match.group(1)
    return {"doi": clean_doi(doi), "pmid": clean_pmid(pmid), "pmcid": clean_pmcid(pmcid), "url": next(iter(urls), None)}


def _record(form: DocumentFormat, meta: DocumentMeta, abstract: str) -> ParsedDocument | None:
    blocks = []
    if meta.title:
        blocks.append(Block(text=meta.title, section="Title", kind="title"))
    if abstract:
        blocks.append(Block(text=abstract, section="Abstract", kind="abstract"))
    if not blocks:
        return None
    return ParsedDocument(format=form, meta=meta, blocks=tuple(blocks), full_text=False)


def _ris_record(entry: Mapping[str, Any]) -> ParsedDocument | None:
    title = _text(entry.get("title") or entry.get("primary_title") or entry.get("short_title"))
    authors = [_text(name) for key in ("authors", "first_authors") for name in entry.get(key, [])]
    journal = _text(
        entry.get("journal_name")
        or entry.get("secondary_title")
        or entry.get("alternate_title3")
        or entry.get("alternate_title1")
    )
    notes = _all_text(entry.get(key) for key in ("notes", "custom2", "custom1", "research_notes", "extra"))
    accession = _text(entry.get("accession_number"))
    database = _text(entry.get("name_of_database")).lower()
    pmid = accession if accession and ("pubmed" in database or "medline" in database or not database) else None
    ids = _identifiers(
        _text(entry.get("doi")) or None, clean_pmid(pmid), None, entry.get("urls", []) or [], f"{notes} {accession}"
    )
    meta = DocumentMeta(
        title=title,
        authors=tuple(name for name in authors if name),
        date=_date(_text(entry.get("date") or entry.get("year") or entry.get("publication_year"))),
        journal=journal or None,
        keywords=tuple(_text(word) for word in entry.get("keywords", []) if _text(word)),
        publication_types=tuple(_text(kind) for kind in [entry.get("type_of_work")] if _text(kind)),
        **ids,
    )
    return _record("ris", meta, _text(entry.get("abstract") or entry.get("notes_abstract")))


# The end of a RIS record as rispy reads it: a line starting "ER  -" (CRLF or LF).
_RIS_END = re.compile(rb"^ER  -[^\n]*(?:\n|$)", re.MULTILINE)


def ris_records(data: bytes) -> int:
    """How many records a RIS file announces (its end tags), for progress before any is parsed."""
    return sum(1 for _ in _RIS_END.finditer(data))


def ris_parts(data: bytes, records: int) -> list[tuple[int, int]]:
    """``data`` cut after every ``records``-th end tag: (start, end) byte spans that ``parse_ris`` reads one at
    a time and that together give the file's records. A cut falls after a line break, never inside a
    character; text after the last end tag stays with the last part (rispy ignores it, as in the whole file)."""
    spans: list[tuple[int, int]] = []
    start = last_end = 0
    for count, match in enumerate(_RIS_END.finditer(data), start=1):
        last_end = match.end()
        if count % records == 0:
            spans.append((start, last_end))
            start = last_end
    if last_end > start or not spans:  # records after the last cut (or none at all): a part of their own
        spans.append((start, len(data)))
    elif start < len(data):
        spans[-1] = (spans[-1][0], len(data))
    return spans


def parse_ris(data: bytes) -> list[ParsedDocument]:
    text = data.decode("utf-8-sig", errors="replace")
    try:
        entries = rispy.loads(text, skip_unknown_tags=True)
    except (OSError, ValueError) as error:  # rispy raises OSError subclasses for a broken file
        raise DocumentError(f"not a readable RIS file ({error})") from None
    return [record for entry in entries if (record := _ris_record(entry)) is not None]


def _latex(value: str) -> str:
    """BibTeX's LaTeX as text: braces, accents and escapes decoded."""
    try:
        return collapse_whitespace(_LATEX.latex_to_text(value))
    except (IndexError, ValueError):  # a broken macro: the raw text is better than nothing
        return collapse_whitespace(value.replace("{", "").replace("}", ""))


def _bibtex_record(fields: Mapping[str, str]) -> ParsedDocument | None:
    def field(*names: str) -> str:
        return next((_latex(fields[name]) for name in names if fields.get(name)), "")

    eprint_type = field("eprinttype", "archiveprefix").lower()
    pmid = field("pmid") or (field("eprint") if eprint_type == "pubmed" else "")
    pmcid = field("pmcid") or (field("eprint") if eprint_type == "pmc" else "")
    year, month = field("year"), field("month")
    date = _date(f"{year}-{month}" if year and month.isdigit() else year or field("date"))
    meta = DocumentMeta(
        title=field("title"),
        authors=tuple(name.strip() for name in re.split(r"\s+and\s+", field("author")) if name.strip()),
        date=date,
        journal=field("journal", "journaltitle", "booktitle") or None,
        keywords=tuple(word.strip() for word in re.split(r"[;,]", field("keywords")) if word.strip()),
        **_identifiers(field("doi") or None, pmid or None, pmcid or None, [field("url")], field("note", "annote")),
    )
    return _record("bibtex", meta, field("abstract"))


def parse_bibtex(data: bytes) -> list[ParsedDocument]:
    library = parse_string(data.decode("utf-8-sig", errors="replace"))
    if not library.entries and library.failed_blocks:
        raise DocumentError(f"not a readable BibTeX file ({len(library.failed_blocks)} broken entries, none read)")
    records = []
    for entry in library.entries:
        fields = {key.lower(): str(value.value) for key, value in entry.fields_dict.items()}
        if (record := _bibtex_record(fields)) is not None:
            records.append(record)
    return records


def _csl_name(name: Any) -> str:
    if not isinstance(name, dict):
        return _text(name)
    if literal := _text(name.get("literal")):
        return literal
    return " ".join(part for part in (_text(name.get("family")), _text(name.get("given"))) if part)


def _csl_date(value: Any) -> str:
    if isinstance(value, dict):
        parts = value.get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            return _date("-".join(str(part) for part in parts[0]))
        if raw := _text(value.get("raw") or value.get("literal")):
            return _date(raw)
    return "Unknown"


def _csl_record(item: Mapping[str, Any]) -> ParsedDocument | None:
    meta = DocumentMeta(
        title=_text(item.get("title")),
        authors=tuple(name for name in (_csl_name(person) for person in item.get("author") or []) if name),
        date=_csl_date(item.get("issued")),
        journal=_text(item.get("container-title")) or None,
        keywords=tuple(word.strip() for word in re.split(r"[;,]", _text(item.get("keyword"))) if word.strip()),
        **_identifiers(
            _text(item.get("DOI")) or None,
            _text(item.get("PMID")) or None,
            _text(item.get("PMCID")) or None,
            [_text(item.get("URL"))],
            _text(item.get("note")),
        ),
    )
    return _record("csljson", meta, _text(item.get("abstract")))


def parse_csljson(data: bytes) -> list[ParsedDocument]:
    try:
        items = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DocumentError(f"not readable CSL-JSON ({error})") from None
    if isinstance(items, dict):
        items = items.get("items", [items])
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise DocumentError("not CSL-JSON: expected a list of items (objects with 'title', 'author', …)")
    return [record for item in items if (record := _csl_record(item)) is not None]
