"""A run's references in the formats reference managers read: RIS (built with ``rispy``), BibTeX (built
with ``bibtexparser``; LaTeX escaping by ``pylatexenc``, its own dependency) and CSL-JSON (the JSON that
Zotero, Pandoc and citeproc read). Each entry carries authors, year, title, journal, DOI, PMID, URL and
the item's grade (design, level, population) as keywords and a note."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import rispy
from bibtexparser.entrypoint import write_string
from bibtexparser.library import Library
from bibtexparser.model import Entry, Field
from pylatexenc.latexencode import UnicodeToLatexEncoder

from deepcritical.models import Evidence
from deepcritical.text import one_line

ReferenceFormat = Literal["ris", "bibtex", "csljson"]
REFERENCE_FORMATS: tuple[ReferenceFormat, ...] = ("ris", "bibtex", "csljson")
# What ``deepcritical export`` writes: the references in a reference manager's format, or the study-results
# table as CSV (cli/export.py).
ExportFormat = Literal["ris", "bibtex", "csljson", "results-csv"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = (*REFERENCE_FORMATS, "results-csv")
FILE_NAMES: dict[ReferenceFormat, str] = {
    "ris": "references.ris",
    "bibtex": "references.bib",
    "csljson": "references.json",
}
# "Mockovic MJ": PubMed's (and Europe PMC's) "Last Initials" form; anything else is a name as written.
_PUBMED_NAME = re.compile(r"^(?P<family>\S(?:.*\S)?) (?P<initials>[A-Z]{1,4})$")
_DATE = re.compile(r"^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?$")
_LATEX = UnicodeToLatexEncoder(conversion_rules=["defaults"], unknown_char_policy="keep")


def _person(name: str) -> tuple[str, str] | None:
    """(family, given initials as "M. J.") for a PubMed-style name, else None (a group or a free-form name)."""
    match = _PUBMED_NAME.match(name.strip())
    if match is None:
        return None
    return match.group("family"), " ".join(f"{letter}." for letter in match.group("initials"))


def _date_parts(date: str) -> list[int]:
    match = _DATE.match(date.strip())
    return [int(part) for part in match.groups() if part] if match else []


def link(item: Evidence, *, synthetic: bool) -> str | None:
    """The item's web address for a reference manager: none for a synthetic demo record (its PMID or DOI
    names no real page) nor for a passage of a local document (``library://`` opens nothing elsewhere)."""
    url = item.citation.url
    return None if synthetic or url.startswith("library://") else url


def _kind(item: Evidence) -> Literal["article", "preprint", "registration", "web"]:
    design = item.grade.design
    if design == "registered_trial" or (item.citation.registration is not None and item.citation.pmid is None):
        return "registration"
    if design == "preprint":
        return "preprint"
    if item.citation.pmid or item.citation.doi or item.citation.source in ("pubmed", "europepmc"):
        return "article"
    return "web"


def keywords(item: Evidence) -> list[str]:
    """The grade as keywords a reference manager can filter on."""
    grade = item.grade
    words = [grade.label.split(", ")[0]]
    words.append(f"OCEBM level {grade.level}" if grade.level is not None else "outside the OCEBM scale")
    if grade.population != "unknown":
        words.append(grade.population.replace("_", " "))
    if item.expression_of_concern:
        words.append("expression of concern")
    if item.retracted:
        words.append("retracted")
    return words


def note(item: Evidence, *, synthetic: bool = False) -> str:
    parts = [f"DeepCritical evidence id {item.id}", f"design: {item.grade.label}"]
    if synthetic:
        parts.insert(0, "SYNTHETIC DEMO RECORD, not real literature")
    if item.citation.nct_id:
        parts.append(f"ClinicalTrials.gov {item.citation.nct_id}")
    if item.expression_of_concern:
        parts.append("the journal has published an expression of concern")
    if item.retracted:
        parts.append("RETRACTED")
    return "; ".join(parts)


# --- RIS ---

_RIS_TYPES = {"article": "JOUR", "preprint": "UNPB", "registration": "DBASE", "web": "ELEC"}


def ris_entry(item: Evidence, *, synthetic: bool = False) -> dict[str, Any]:
    citation = item.citation
    authors = []
    for name in citation.authors:
        person = _person(name)
        authors.append(f"{person[0]}, {person[1]}" if person else name)
    entry: dict[str, Any] = {
        "type_of_reference": _RIS_TYPES[_kind(item)],
        "title": citation.title,
        "keywords": keywords(item),
        "notes": [note(item, synthetic=synthetic)],
        "id": item.id,
    }
    if url := link(item, synthetic=synthetic):
        entry["urls"] = [url]
    if authors:
        entry["authors"] = authors
    if parts := _date_parts(citation.date):
        entry["year"] = str(parts[0])
        entry["date"] = "/".join(f"{part:02d}" if i else str(part) for i, part in enumerate(parts))
    if citation.journal:
        entry["secondary_title"] = citation.journal
    if citation.doi:
        entry["doi"] = citation.doi
    if citation.pmid:
        entry["accession_number"] = citation.pmid
        entry["name_of_database"] = "PubMed"
    if citation.pmcid:
        entry["custom2"] = citation.pmcid
    return entry


class _RisWriter(rispy.RisWriter):  # type: ignore[misc]
    """rispy's writer without its "1." line before each record, which is not RIS."""

    def set_header(self, count: int) -> str:
        return ""


def _one_line_values(entry: dict[str, Any]) -> dict[str, Any]:
    """RIS is one tag a line: a line break in outside text (a registry's or a search engine's title, an author)
    would end the record there and let the text that follows it forge tags and records."""
    return {
        tag: [one_line(value) for value in values] if isinstance(values, list) else one_line(values)
        for tag, values in entry.items()
    }


def to_ris(items: Sequence[Evidence], *, synthetic: bool = False) -> str:
    entries = [_one_line_values(ris_entry(item, synthetic=synthetic)) for item in items]
    return str(rispy.dumps(entries, implementation=_RisWriter))


# --- BibTeX ---


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def citation_key(item: Evidence, taken: set[str]) -> str:
    """ "mockovic2021metformin": first author's family name, year, first title word (ASCII), unique."""
    citation = item.citation
    first = citation.authors[0] if citation.authors else citation.source
    person = _person(first)
    family = re.sub(r"[^a-z]", "", _ascii(person[0] if person else first.split()[0]).lower()) or "anon"
    year = str(parts[0]) if (parts := _date_parts(citation.date)) else "nd"
    words = [w for w in re.findall(r"[a-z]+", _ascii(citation.title).lower()) if w not in ("demo", "a", "an", "the")]
    base = f"{family}{year}{words[0] if words else ''}"
    key, suffix = base, 0
    while key in taken:
        suffix += 1
        key = f"{base}{chr(ord('a') + suffix - 1)}" if suffix <= 26 else f"{base}{suffix}"
    taken.add(key)
    return key


def _tex(text: str) -> str:
    return str(_LATEX.unicode_to_latex(text))


def _bibtex_author(name: str) -> str:
    person = _person(name)
    if person is None:  # a group or a free-form name: braces keep BibTeX from splitting it
        return "{" + _tex(name) + "}"
    return f"{_tex(person[0])}, {person[1]}"


def bibtex_entry(item: Evidence, key: str, *, synthetic: bool = False) -> Entry:
    citation = item.citation
    kind = _kind(item)
    fields = [Field("title", _tex(citation.title))]
    if citation.authors:
        fields.append(Field("author", " and ".join(_bibtex_author(name) for name in citation.authors)))
    if parts := _date_parts(citation.date):
        fields.append(Field("year", str(parts[0])))
    if citation.journal:
        fields.append(Field("journal" if kind == "article" else "howpublished", _tex(citation.journal)))
    if citation.doi:
        fields.append(Field("doi", citation.doi))
    if citation.pmid:
        fields.append(Field("pmid", citation.pmid))
    if citation.pmcid:
        fields.append(Field("pmcid", citation.pmcid))
    if url := link(item, synthetic=synthetic):
        fields.append(Field("url", url))
    fields.append(Field("keywords", _tex(", ".join(keywords(item)))))
    fields.append(Field("note", _tex(note(item, synthetic=synthetic))))
    return Entry("article" if kind == "article" else "misc", key, fields)


def to_bibtex(items: Sequence[Evidence], *, synthetic: bool = False) -> str:
    taken: set[str] = set()
    library = Library([bibtex_entry(item, citation_key(item, taken), synthetic=synthetic) for item in items])
    return str(write_string(library))


# --- CSL-JSON ---

_CSL_TYPES = {"article": "article-journal", "preprint": "article", "registration": "report", "web": "webpage"}


def csl_item(item: Evidence, *, synthetic: bool = False) -> dict[str, Any]:
    citation = item.citation
    kind = _kind(item)
    entry: dict[str, Any] = {"id": item.id, "type": _CSL_TYPES[kind], "title": citation.title}
    if url := link(item, synthetic=synthetic):
        entry["URL"] = url
    authors: list[dict[str, str]] = []
    for name in citation.authors:
        person = _person(name)
        authors.append({"family": person[0], "given": person[1]} if person else {"literal": name})
    if authors:
        entry["author"] = authors
    if parts := _date_parts(citation.date):
        entry["issued"] = {"date-parts": [parts]}
    if citation.journal:
        entry["container-title" if kind == "article" else "publisher"] = citation.journal
    if kind == "registration":
        entry["genre"] = "Clinical trial registration"
        if citation.nct_id:
            entry["number"] = citation.nct_id
    if citation.doi:
        entry["DOI"] = citation.doi
    if citation.pmid:
        entry["PMID"] = citation.pmid
    if citation.pmcid:
        entry["PMCID"] = citation.pmcid
    entry["keyword"] = ", ".join(keywords(item))
    entry["note"] = note(item, synthetic=synthetic)
    return entry


def to_csl_json(items: Sequence[Evidence], *, synthetic: bool = False) -> str:
    return json.dumps([csl_item(item, synthetic=synthetic) for item in items], indent=2, ensure_ascii=False) + "\n"


EXPORTERS = {"ris": to_ris, "bibtex": to_bibtex, "csljson": to_csl_json}


def export(items: Sequence[Evidence], form: ReferenceFormat, *, synthetic: bool = False) -> str:
    """The items in ``form``; ``synthetic`` (a demo run's records) gives no link and says so in each note."""
    return EXPORTERS[form](items, synthetic=synthetic)


def referenced(references: Iterable[str], evidence: Mapping[str, Evidence]) -> list[Evidence]:
    """The report's references, in the report's order (ids not collected are skipped)."""
    return [evidence[ref] for ref in references if ref in evidence]
