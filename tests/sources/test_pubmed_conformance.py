"""The PubMed parsers against every real NCBI response in ../shared/data/ncbi.

Expected values are computed here, independently, with ElementTree and json: never by calling the
parser under test.
"""

from __future__ import annotations

import calendar
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from deepcritical.errors import SearchError
from deepcritical.sources.ncbi_esearch import parse_esearch
from deepcritical.sources.ncbi_parse import parse_efetch

NCBI = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "ncbi"
MATHML = "{http://www.w3.org/1998/Math/MathML}"
MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_abbr) if name}


def files(pattern: str) -> list[str]:
    """Paths under ncbi/ for parametrisation at collection time; one placeholder when the data is
    absent (the ncbi_data fixture then skips the test with a reason)."""
    names = sorted(str(path.relative_to(NCBI)) for path in NCBI.glob(pattern))
    return names or ["<shared data absent>"]


def text_of(element: ET.Element | None) -> str:
    """The element's text in document order, whitespace collapsed; a MathML formula reads as its
    symbols run together (the whitespace between formula elements is layout)."""
    if element is None:
        return ""
    parts: list[str] = []

    def walk(node: ET.Element) -> None:
        parts.append(node.text or "")
        for child in node:
            if child.tag.startswith(MATHML):
                parts.append(" " + "".join(piece.strip() for piece in child.itertext()) + " ")
            else:
                walk(child)
            parts.append(child.tail or "")

    walk(element)
    return " ".join("".join(parts).split())


def expected_date(pub_date: ET.Element | None) -> str:
    if pub_date is None:
        return "Unknown"
    year = text_of(pub_date.find("Year"))
    if not year:
        found = re.search(r"\d{4}", text_of(pub_date.find("MedlineDate")))
        return found.group(0) if found else "Unknown"
    month = text_of(pub_date.find("Month"))
    number = int(month) if month.isdigit() else MONTHS.get(month[:3].lower())
    if not number:
        return year
    day = text_of(pub_date.find("Day"))
    return f"{year}-{number:02d}-{int(day):02d}" if day else f"{year}-{number:02d}"


@dataclass
class Expected:
    pmid: str
    title: str
    abstract: str
    date: str
    authors: tuple[str, ...]
    journal: str
    doi: str | None


def expected_record(record: ET.Element) -> Expected:
    article = record.find("MedlineCitation/Article")
    assert article is not None
    sections = []
    for part in article.findall("Abstract/AbstractText"):
        text = text_of(part)
        if text:
            label = part.get("Label", "").strip()
            sections.append(f"{label}: {text}" if label else text)
    authors = []
    for author in article.findall("AuthorList/Author"):
        if author.get("ValidYN") == "N":
            continue
        collective = text_of(author.find("CollectiveName"))
        given = text_of(author.find("Initials")) or text_of(author.find("ForeName"))
        authors.append(collective or f"{text_of(author.find('LastName'))} {given}".strip())
    pub_date = expected_date(article.find("Journal/JournalIssue/PubDate"))
    dois = [el.text for el in record.findall("PubmedData/ArticleIdList/ArticleId") if el.get("IdType") == "doi"]
    return Expected(
        pmid=text_of(record.find("MedlineCitation/PMID")),
        title=text_of(article.find("ArticleTitle")),
        abstract=" ".join(sections),
        date=pub_date if pub_date != "Unknown" else expected_date(article.find("ArticleDate")),
        authors=tuple(authors),
        journal=text_of(article.find("Journal/Title")),
        doi=dois[0].strip().lower() if dois and dois[0] else None,
    )


def check_efetch_file(path: Path) -> None:
    # Some files hold an empty PubmedArticleSet (what efetch answers for an unknown PMID).
    records = [expected_record(r) for r in ET.parse(path).getroot().findall("PubmedArticle")]
    wanted = [r for r in records if r.title and r.abstract]

    batch = parse_efetch(path.read_text(encoding="utf-8"))

    assert batch.records == len(records)
    assert batch.without_abstract == sum(1 for r in records if not r.abstract)
    assert batch.malformed == 0
    by_pmid = {e.citation.pmid or "": e for e in batch.evidence}
    assert sorted(by_pmid) == sorted(r.pmid for r in wanted)
    for expected in wanted:
        evidence = by_pmid[expected.pmid]
        citation = evidence.citation
        assert citation.title == expected.title
        assert evidence.content == expected.abstract
        assert citation.date == expected.date
        assert citation.authors == expected.authors
        assert citation.journal == expected.journal
        assert citation.doi == expected.doi
        assert citation.url == f"https://pubmed.ncbi.nlm.nih.gov/{expected.pmid}/"
        assert citation.source == "pubmed"


@pytest.mark.parametrize("name", files("efetch_single/*.xml"))
def test_every_single_record_file(ncbi_data: Path, name: str) -> None:
    check_efetch_file(ncbi_data / name)


@pytest.mark.parametrize("name", files("efetch_multi/*.xml"))
def test_every_multi_record_file(ncbi_data: Path, name: str) -> None:
    check_efetch_file(ncbi_data / name)


@pytest.mark.parametrize("name", files("efetch_*/*.xml"))
def test_every_file_cut_short_is_a_search_error(ncbi_data: Path, name: str) -> None:
    """A body cut short (a dropped connection) at many points is a SearchError, never another exception."""
    text = (ncbi_data / name).read_text(encoding="utf-8")
    end = text.index("</PubmedArticleSet>")
    for cut in range(1, end, max(1, end // 25)):
        with pytest.raises(SearchError, match=r"^pubmed: efetch returned malformed or truncated XML"):
            parse_efetch(text[:cut])


def expected_esearch(path: Path) -> tuple[list[str], bool]:
    """The ids in the file, and whether it reports an error that leaves the search unusable."""
    if path.suffix == ".json":
        result = json.loads(path.read_text(encoding="utf-8"))["esearchresult"]
        errors = any(result.get("errorlist", {}).values())
        ids = list(result.get("idlist", []))
        return ids, "ERROR" in result or (errors and not ids)
    root = ET.parse(path).getroot()
    ids = [el.text or "" for el in root.findall("IdList/Id")]
    return ids, root.find("ERROR") is not None or (len(root.findall("ErrorList/*")) > 0 and not ids)


@pytest.mark.parametrize("name", files("esearch/*"))
def test_every_esearch_file(ncbi_data: Path, name: str) -> None:
    path = ncbi_data / name
    ids, unusable = expected_esearch(path)
    if unusable:
        with pytest.raises(SearchError, match=r"^pubmed: esearch "):
            parse_esearch(path.read_text(encoding="utf-8"))
        return
    result = parse_esearch(path.read_text(encoding="utf-8"))
    assert result.ids == ids
    assert result.count >= len(ids)


def test_the_named_esearch_cases(ncbi_data: Path) -> None:
    folder = ncbi_data / "esearch"
    assert parse_esearch((folder / "esearch_json_unique_term.json").read_text()).ids == ["29440426"]
    with pytest.raises(SearchError, match="Empty term and query_key"):
        parse_esearch((folder / "esearch_json_undefined_term.json").read_text())
    with pytest.raises(SearchError, match="phrasesnotfound"):
        parse_esearch((folder / "esearch_json_empty_term.json").read_text())
    with pytest.raises(SearchError, match="PhraseNotFound: abcXYZ"):
        parse_esearch((folder / "biopython_esearch8.xml").read_text())
