"""Stand-in for NCBI E-utilities (esearch JSON or XML, efetch PubmedArticleSet XML, efetch db=pmc JATS) over the
demo corpus.

The shapes follow real NCBI answers (see ../shared/data/ncbi), so the live PubMed parser runs unchanged.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from datetime import date
from xml.sax.saxutils import escape

import httpx2

from deepcritical.demo import clock, fulltext
from deepcritical.demo.corpus import hits
from deepcritical.demo.fulltext import sub_element
from deepcritical.demo.records import (
    INLINE_TAGS,
    CollectiveAuthor,
    PubmedRecord,
    entry_date,
    pubmed_record,
)
from deepcritical.text import collapse_whitespace

_XML_HEADER = (
    '<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
)
_XML_TYPE = "text/xml; charset=UTF-8"
_JSON_TYPE = "application/json; charset=UTF-8"
# MeSH unique ids of the publication types the corpus uses, as PubMed prints them.
PUBLICATION_TYPE_UI = {
    "Journal Article": "D016428",
    "Randomized Controlled Trial": "D016449",
    "Clinical Trial": "D016430",
    "Clinical Trial, Phase II": "D017427",
    "Clinical Trial, Phase III": "D017428",
    "Multicenter Study": "D016448",
    "Observational Study": "D064888",
    "Meta-Analysis": "D017418",
    "Systematic Review": "D000078182",
    "Review": "D016454",
    "Comment": "D016420",
    "Letter": "D016422",
    "Retracted Publication": "D016441",
    "Clinical Trial, Phase I": "D017426",
}
_FIELD_TAG = re.compile(r"\[[^\]]*\]")
_NOT_CLAUSE = re.compile(r'\bNOT\s+(?:\([^)]*\)|"[^"]*"|\S+)')
_BOOLEAN = re.compile(r"\b(?:AND|OR)\b")
_SYNTAX = re.compile(r'[()"*]')
DEFAULT_RETMAX = 20  # NCBI's default
MAX_RETMAX = 10_000


def term_to_text(term: str) -> str:
    """A PubMed query as plain words for BM25: field tags, NOT clauses, boolean operators and brackets go."""
    text = _FIELD_TAG.sub(" ", term)
    text = _NOT_CLAUSE.sub(" ", text)
    text = _BOOLEAN.sub(" ", text)
    return collapse_whitespace(_SYNTAX.sub(" ", text))


def _int_param(params: Mapping[str, str], name: str, default: int, upper: int) -> int:
    try:
        value = int(params.get(name, default))
    except ValueError:
        value = default
    return min(max(value, 0), upper)


def _params(request: httpx2.Request) -> dict[str, str]:
    """Query parameters, plus form fields for POST (E-utilities accept both)."""
    params = dict(request.url.params)
    if request.method == "POST" and request.content:
        params.update(httpx2.QueryParams(request.content.decode("utf-8", errors="replace")))
    return params


def esearch(request: httpx2.Request) -> httpx2.Response:
    params = _params(request)
    as_json = params.get("retmode", "xml").lower() == "json"
    term = params.get("term", "").strip()
    if params.get("db", "pubmed") != "pubmed":
        return _esearch_error(f"Invalid db name specified: {params.get('db')}", as_json)
    if not term:
        return _esearch_error("Empty term and query_key - nothing todo", as_json)
    text = term_to_text(term)
    try:
        since, until = _date_range(params)
    except ValueError:
        return _esearch_error("Invalid mindate or maxdate", as_json)
    found = [hit.record for hit in hits("pubmed", text) if isinstance(hit.record, PubmedRecord)]
    pmids = [record.pmid for record in found if since <= entry_date(record) <= until]
    retstart = _int_param(params, "retstart", 0, MAX_RETMAX)
    retmax = _int_param(params, "retmax", DEFAULT_RETMAX, MAX_RETMAX)
    page = pmids[retstart : retstart + retmax]
    translation = " AND ".join(f"{word}[All Fields]" for word in text.split()) or term
    result: dict[str, object] = {
        "count": str(len(pmids)),
        "retmax": str(len(page)),
        "retstart": str(retstart),
        "idlist": page,
        "translationset": [],
        "querytranslation": translation,
    }
    # Words PubMed does not know are reported as not found. The real index knows nearly every word a question
    # uses ("acupuncture", "migraine"), where the small demo corpus simply has no record: only a word no
    # language has (no vowel: "zzqxv") is reported. A date range that excludes every hit is no error either.
    unknown = [word for word in text.split() if not re.search(r"[aeiouy0-9]", word, re.IGNORECASE)]
    if not found and unknown:
        result["errorlist"] = {"phrasesnotfound": unknown, "fieldsnotfound": []}
    if not pmids:
        result["warninglist"] = {
            "phrasesignored": [],
            "quotedphrasesnotfound": [],
            "outputmessages": ["No items found."],
        }
    if as_json:
        body = {"header": {"type": "esearch", "version": "0.3"}, "esearchresult": result}
        return httpx2.Response(200, content=json.dumps(body).encode(), headers={"Content-Type": _JSON_TYPE})
    xml = _esearch_xml(len(pmids), page, retstart, translation)
    return httpx2.Response(200, content=xml, headers={"Content-Type": _XML_TYPE})


def _ncbi_date(text: str, *, end: bool) -> date:
    """``2026``, ``2026/05`` or ``2026/05/12`` (NCBI's forms), as the first or last day it covers."""
    parts = [int(part) for part in text.strip().split("/")]
    year, month = parts[0], parts[1] if len(parts) > 1 else (12 if end else 1)
    day = parts[2] if len(parts) > 2 else (31 if end and month == 12 else 1)
    if end and len(parts) == 2:  # the month's last day
        following = date(year + month // 12, month % 12 + 1, 1)
        return date.fromordinal(following.toordinal() - 1)
    return date(year, month, day)


def _date_range(params: Mapping[str, str]) -> tuple[date, date]:
    """esearch's ``mindate``/``maxdate`` by Entrez date (``datetype=edat``), the only date type served;
    without them, every date."""
    low, high = params.get("mindate"), params.get("maxdate")
    if not low or not high or params.get("datetype", "edat") != "edat":
        return date.min, date.max
    return _ncbi_date(low, end=False), _ncbi_date(high, end=True)


def _esearch_error(message: str, as_json: bool) -> httpx2.Response:
    # NCBI answers these with HTTP 200 and the error inside the body.
    if as_json:
        body = {"header": {"type": "esearch", "version": "0.3"}, "esearchresult": {"ERROR": message}}
        return httpx2.Response(200, content=json.dumps(body).encode(), headers={"Content-Type": _JSON_TYPE})
    xml = f'<?xml version="1.0" encoding="UTF-8" ?>\n<eSearchResult><ERROR>{escape(message)}</ERROR></eSearchResult>\n'
    return httpx2.Response(200, content=xml.encode(), headers={"Content-Type": _XML_TYPE})


def _esearch_xml(count: int, page: list[str], retstart: int, translation: str) -> bytes:
    root = ET.Element("eSearchResult")
    for tag, value in (("Count", count), ("RetMax", len(page)), ("RetStart", retstart)):
        ET.SubElement(root, tag).text = str(value)
    id_list = ET.SubElement(root, "IdList")
    for pmid in page:
        ET.SubElement(id_list, "Id").text = pmid
    ET.SubElement(root, "TranslationSet")
    ET.SubElement(root, "QueryTranslation").text = translation
    return ('<?xml version="1.0" encoding="UTF-8" ?>\n' + ET.tostring(root, encoding="unicode") + "\n").encode()


def efetch(request: httpx2.Request) -> httpx2.Response:
    params = _params(request)
    ids = [part.strip() for part in params.get("id", "").split(",") if part.strip()]
    database = params.get("db", "pubmed")
    if database not in ("pubmed", "pmc"):
        return _efetch_error(f"Invalid db name specified: {database}")
    if not ids:
        return _efetch_error("Empty id list - nothing todo")
    if database == "pmc":
        return fulltext.pmc_efetch(ids)
    root = ET.Element("PubmedArticleSet")
    for pmid in ids:
        record = pubmed_record(pmid, clock.today())
        if record is not None:  # unknown PMIDs (and those not entered yet) are skipped, as NCBI does
            root.append(article_element(record))
    body = _XML_HEADER + ET.tostring(root, encoding="unicode") + "\n"
    return httpx2.Response(200, content=body.encode("utf-8"), headers={"Content-Type": _XML_TYPE})


def _efetch_error(message: str) -> httpx2.Response:
    xml = f"""<?xml version="1.0" encoding="UTF-8" ?>
<eFetchResult>
	<ERROR>{escape(message)}</ERROR>
</eFetchResult>
"""
    return httpx2.Response(400, content=xml.encode(), headers={"Content-Type": _XML_TYPE})


def _rich(tag: str, text: str, attrib: Mapping[str, str] | None = None) -> ET.Element:
    """An element whose text may hold inline markup (<i>, <sup>…) as real PubMed titles and abstracts do."""
    markup = escape(text)
    for name in INLINE_TAGS:
        markup = markup.replace(f"&lt;{name}&gt;", f"<{name}>").replace(f"&lt;/{name}&gt;", f"</{name}>")
    element = ET.fromstring(f"<{tag}>{markup}</{tag}>")
    element.attrib.update(attrib or {})
    return element


def article_element(record: PubmedRecord) -> ET.Element:
    """One <PubmedArticle> in NLM's PubMed DTD layout."""
    article_root = ET.Element("PubmedArticle")
    citation = sub_element(article_root, "MedlineCitation", Status="MEDLINE", Owner="NLM")
    sub_element(citation, "PMID", record.pmid, Version="1")
    article = sub_element(citation, "Article", PubModel="Print")
    journal = sub_element(article, "Journal")
    issue = sub_element(journal, "JournalIssue", CitedMedium="Internet")
    if record.journal.volume:
        sub_element(issue, "Volume", record.journal.volume)
    if record.journal.issue:
        sub_element(issue, "Issue", record.journal.issue)
    pub_date = sub_element(issue, "PubDate")
    if record.pub_date.medline_date:
        sub_element(pub_date, "MedlineDate", record.pub_date.medline_date)
    else:
        date = record.pub_date
        for tag, value in (("Year", date.year), ("Month", date.month), ("Day", date.day)):
            if value:
                sub_element(pub_date, tag, value)
    sub_element(journal, "Title", record.journal.title)
    sub_element(journal, "ISOAbbreviation", record.journal.iso_abbreviation)
    article.append(_rich("ArticleTitle", record.title))
    if record.doi:
        sub_element(article, "ELocationID", record.doi, EIdType="doi", ValidYN="Y")
    if record.abstract:
        abstract = sub_element(article, "Abstract")
        for section in record.abstract:
            attrib = {"Label": section.label, "NlmCategory": section.label} if section.label else {}
            abstract.append(_rich("AbstractText", section.text, attrib))
    authors = sub_element(article, "AuthorList", CompleteYN="Y")
    for person in record.authors:
        author = sub_element(authors, "Author", ValidYN="Y")
        if isinstance(person, CollectiveAuthor):
            sub_element(author, "CollectiveName", person.collective_name)
        else:
            sub_element(author, "LastName", person.last_name)
            sub_element(author, "ForeName", person.fore_name)
            sub_element(author, "Initials", person.initials)
    sub_element(article, "Language", record.language)
    if record.nct_id:
        bank = sub_element(sub_element(article, "DataBankList", CompleteYN="Y"), "DataBank")
        sub_element(bank, "DataBankName", "ClinicalTrials.gov")
        sub_element(sub_element(bank, "AccessionNumberList"), "AccessionNumber", record.nct_id)
    types = sub_element(article, "PublicationTypeList")
    for name in record.publication_types:
        sub_element(types, "PublicationType", name, UI=PUBLICATION_TYPE_UI[name])
    sub_element(sub_element(citation, "MedlineJournalInfo"), "MedlineTA", record.journal.iso_abbreviation)
    notices = (("RetractionIn", record.retraction_in), ("ExpressionOfConcernIn", record.expression_of_concern_in))
    if any(pmid for _, pmid in notices):
        corrections = sub_element(citation, "CommentsCorrectionsList")
        for ref_type, pmid in notices:
            if pmid:
                entry = sub_element(corrections, "CommentsCorrections", RefType=ref_type)
                sub_element(entry, "RefSource", f"{record.journal.iso_abbreviation}. {record.pub_date.year or ''}")
                sub_element(entry, "PMID", pmid, Version="1")
    if record.mesh_headings:
        mesh = sub_element(citation, "MeshHeadingList")
        for name in record.mesh_headings:
            # Synthetic descriptor UIs: the parser reads names only, and no real UI should be implied.
            sub_element(sub_element(mesh, "MeshHeading"), "DescriptorName", name, UI="D999999", MajorTopicYN="N")
    pubmed_data = sub_element(article_root, "PubmedData")
    sub_element(pubmed_data, "PublicationStatus", "ppublish")
    id_list = sub_element(pubmed_data, "ArticleIdList")
    sub_element(id_list, "ArticleId", record.pmid, IdType="pubmed")
    if record.doi:
        sub_element(id_list, "ArticleId", record.doi, IdType="doi")
    if record.pmcid:
        sub_element(id_list, "ArticleId", record.pmcid, IdType="pmc")
    return article_root


def respond(request: httpx2.Request) -> httpx2.Response | None:
    """The E-utilities stand-in's answer (esearch, efetch), or None for a path it does not serve."""
    if request.method not in ("GET", "POST"):
        return None
    path = request.url.path
    if path == "/entrez/eutils/esearch.fcgi":
        return esearch(request)
    if path == "/entrez/eutils/efetch.fcgi":
        return efetch(request)
    return None
