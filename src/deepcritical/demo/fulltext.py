"""Stand-ins for PubMed Central's full text: Europe PMC's ``GET /{PMCID}/fullTextXML`` and E-utilities'
``efetch db=pmc``, answering synthetic JATS for the demo corpus's articles that have a PMCID.

The JATS follows PMC's layout (front matter with article ids, a structured abstract, a body of titled
sections, a table, a reference list), so the live fetcher and the JATS parser run unchanged. The body
restates the abstract's sections at full-text length and adds nothing that could pass for a finding:
its back matter says that the article is synthetic.
"""

from __future__ import annotations

import functools
import xml.etree.ElementTree as ET

import httpx2

from deepcritical.demo.records import CollectiveAuthor, PubmedRecord, load_corpus, month_number, strip_markup

FULLTEXT_SUFFIX = "/fullTextXML"
_XML_TYPE = "application/xml; charset=UTF-8"
_PMC_HEADER = (
    '<?xml version="1.0" ?>\n<!DOCTYPE pmc-articleset PUBLIC "-//NLM//DTD ARTICLE SET 2.0//EN" '
    '"https://dtd.nlm.nih.gov/ncbi/pmc/articleset/nlm-articleset-2.0.dtd">\n'
)
# The abstract's labels, as the body's section titles of a research article.
_SECTIONS = {"BACKGROUND": "Introduction", "METHODS": "Methods", "RESULTS": "Results", "CONCLUSIONS": "Discussion"}
_SYNTHETIC = (
    "This article is synthetic. DeepCritical's demo corpus serves it so that reading full text can be tried "
    "offline; its methods and findings describe no real study."
)


@functools.cache
def _by_pmcid() -> dict[str, PubmedRecord]:
    return {
        record.pmcid.upper(): record
        for record in load_corpus().records
        if isinstance(record, PubmedRecord) and record.pmcid
    }


def record_for(pmcid: str) -> PubmedRecord | None:
    """The demo article with this PMCID ('PMC99000101' or '99000101'), if any."""
    key = pmcid.strip().upper()
    return _by_pmcid().get(key if key.startswith("PMC") else f"PMC{key}")


def sub_element(parent: ET.Element, tag: str, text: str | None = None, **attrib: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attrib)
    if text is not None:
        element.text = text
    return element


def _front(article: ET.Element, record: PubmedRecord) -> None:
    front = sub_element(article, "front")
    journal = sub_element(front, "journal-meta")
    sub_element(journal, "journal-id", record.journal.iso_abbreviation, **{"journal-id-type": "nlm-ta"})
    sub_element(sub_element(journal, "journal-title-group"), "journal-title", record.journal.title)
    meta = sub_element(front, "article-meta")
    sub_element(meta, "article-id", record.pmid, **{"pub-id-type": "pmid"})
    sub_element(meta, "article-id", (record.pmcid or "").removeprefix("PMC"), **{"pub-id-type": "pmc"})
    if record.doi:
        sub_element(meta, "article-id", record.doi, **{"pub-id-type": "doi"})
    sub_element(sub_element(meta, "title-group"), "article-title", strip_markup(record.title))
    contributors = sub_element(meta, "contrib-group")
    for person in record.authors:
        contrib = sub_element(contributors, "contrib", **{"contrib-type": "author"})
        if isinstance(person, CollectiveAuthor):
            sub_element(contrib, "collab", person.collective_name)
        else:
            name = sub_element(contrib, "name")
            sub_element(name, "surname", person.last_name)
            sub_element(name, "given-names", person.fore_name)
    date = sub_element(meta, "pub-date", **{"pub-type": "epub"})
    if month := month_number(record.pub_date.month):
        sub_element(date, "month", str(month))
    sub_element(date, "year", record.pub_date.year or "2020")
    abstract = sub_element(meta, "abstract")
    for section in record.abstract:
        sec = sub_element(abstract, "sec")
        sub_element(sec, "title", (section.label or "Abstract").capitalize())
        sub_element(sec, "p", strip_markup(section.text))


def _body(article: ET.Element, record: PubmedRecord) -> None:
    body = sub_element(article, "body")
    for section in record.abstract:
        sec = sub_element(body, "sec")
        title = _SECTIONS.get((section.label or "").upper(), (section.label or "Text").capitalize())
        sub_element(sec, "title", title)
        # One sentence or two per paragraph, as a full text reads.
        sentences = [part.strip() for part in strip_markup(section.text).split(". ") if part.strip()]
        for start in range(0, len(sentences), 2):
            text = ". ".join(sentences[start : start + 2])
            sub_element(sec, "p", text if text.endswith(".") else text + ".")
        if title == "Results":
            table = sub_element(sec, "table-wrap", id="t1")
            sub_element(table, "label", "Table 1")
            sub_element(
                sub_element(table, "caption"), "p", "Outcomes as reported in the abstract (synthetic demo data)."
            )
    back = sub_element(article, "back")
    # In the back matter, where a reader looks for notes and a report never takes a finding from.
    notes = sub_element(back, "notes")
    sub_element(notes, "title", "Notes")
    sub_element(notes, "p", _SYNTHETIC)
    references = sub_element(back, "ref-list")
    ref = sub_element(references, "ref", id="r1")
    sub_element(ref, "label", "1")
    sub_element(ref, "mixed-citation", "DeepCritical demo corpus. Synthetic records for offline runs.")


def jats(record: PubmedRecord) -> ET.Element:
    """The record's article as JATS."""
    kind = "review-article" if "Systematic Review" in record.publication_types else "research-article"
    article = ET.Element("article", {"article-type": kind, "dtd-version": "1.3"})
    _front(article, record)
    _body(article, record)
    return article


def europepmc_full_text(request: httpx2.Request) -> httpx2.Response:
    """``GET /europepmc/webservices/rest/{PMCID}/fullTextXML``: the article, or 404 as the service answers."""
    pmcid = request.url.path.rstrip("/").removesuffix(FULLTEXT_SUFFIX).rsplit("/", 1)[-1]
    record = record_for(pmcid)
    if record is None:
        return httpx2.Response(
            404, text=f"Full text not available for {pmcid}", headers={"Content-Type": "text/plain; charset=utf-8"}
        )
    body = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(jats(record), encoding="unicode")
    return httpx2.Response(200, content=body.encode(), headers={"Content-Type": _XML_TYPE})


def pmc_efetch(ids: list[str]) -> httpx2.Response:
    """``efetch db=pmc``: a pmc-articleset of the known articles (unknown ids are skipped, as NCBI does)."""
    root = ET.Element("pmc-articleset")
    for identifier in ids:
        record = record_for(identifier)
        if record is not None:
            root.append(jats(record))
    body = _PMC_HEADER + ET.tostring(root, encoding="unicode") + "\n"
    return httpx2.Response(200, content=body.encode(), headers={"Content-Type": "text/xml; charset=UTF-8"})
