"""Property tests of the PubMed parsers: any input yields results or a SearchError, nothing else;
well-formed records always come back whole and in esearch order."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepcritical.errors import SearchError
from deepcritical.models import Evidence
from deepcritical.sources.ncbi_body import flatten_text
from deepcritical.sources.ncbi_esearch import EsearchResult, parse_esearch, parse_esearch_data
from deepcritical.sources.ncbi_parse import ParsedBatch, parse_efetch, parse_efetch_data

T = TypeVar("T")

# Names the parsers look for, so generated trees reach deep into them rather than missing at the root.
_KEY_NAMES = """
PubmedArticleSet PubmedArticle PubmedBookArticle MedlineCitation PMID Article ArticleTitle VernacularTitle
Abstract AbstractText @Label #text AuthorList @Type Author @ValidYN LastName ForeName Initials
CollectiveName Journal Title ISOAbbreviation JournalIssue PubDate Year Month Day MedlineDate ArticleDate
PubmedData PubmedBookData ArticleIdList ArticleId @IdType ELocationID @EIdType PublicationTypeList
PublicationType BookDocument Book BookTitle ContributionDate ERROR eFetchResult eSearchResult html
IdList Id Count ErrorList PhraseNotFound WarningList esearchresult idlist count errorlist error
"""
KEYS = _KEY_NAMES.split()
leaves = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12) | st.sampled_from(KEYS)
trees = st.recursive(
    leaves,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5), children, max_size=5)
    ),
    max_leaves=40,
)


def shaped_record(node: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A PubmedArticle-shaped tree whose every value may be anything."""
    article = st.fixed_dictionaries(
        {"ArticleTitle": node, "Abstract": st.fixed_dictionaries({"AbstractText": node}), "AuthorList": node},
        optional={"Journal": node, "ELocationID": node, "PublicationTypeList": node},
    )
    citation = st.fixed_dictionaries({"PMID": st.from_regex(r"[0-9]{1,8}", fullmatch=True) | node, "Article": article})
    return st.fixed_dictionaries({"MedlineCitation": citation}, optional={"PubmedData": node})


shaped_sets = st.fixed_dictionaries(
    {"PubmedArticleSet": st.fixed_dictionaries({"PubmedArticle": st.lists(shaped_record(trees), max_size=3) | trees})}
)

XML_BITS = [
    "<PubmedArticleSet>", "</PubmedArticleSet>", "<PubmedArticle>", "</PubmedArticle>", "<MedlineCitation>",
    "</MedlineCitation>", "<PMID>1</PMID>", "<Article>", "</Article>", "<ArticleTitle>", "</ArticleTitle>",
    "<AbstractText Label='A'>", "</AbstractText>", "<i>", "</i>", "<sup>", "<mml:math>", "</mml:math>", "&amp;",
    "&bogus;", "<!DOCTYPE x [<!ENTITY e 'x'>]>", "<ERROR>", "</ERROR>", "<html>", "{", "}", '"error"', ":", "[", "]",
    '"esearchresult"', '"idlist"', "<eSearchResult>", "<IdList><Id>5</Id></IdList>", "<?xml version='1.0'?>",
]  # fmt: skip
bodies = st.text() | st.lists(st.sampled_from(XML_BITS) | st.text(max_size=4), max_size=30).map("".join)


def result_or_search_error(parse: Callable[..., T], *args: object) -> T | None:
    """The parser's result, or None for a SearchError; any other exception fails the test."""
    try:
        return parse(*args)
    except SearchError:
        return None


def assert_sound(batch: ParsedBatch | None) -> None:
    if batch is None:
        return
    assert all(isinstance(item, Evidence) for item in batch.evidence)
    for item in batch.evidence:
        assert item.citation.pmid is not None
        assert item.citation.pmid.isdigit()
        assert item.content.strip()
        assert item.citation.title.strip()
        assert 0.5 <= item.relevance <= 1.0
    assert len(batch.evidence) + batch.without_abstract + batch.malformed <= batch.records


@pytest.mark.slow
@given(trees | shaped_sets, st.lists(st.from_regex(r"[0-9]{1,8}", fullmatch=True), max_size=4))
def test_any_tree_gives_evidence_or_a_search_error(data: object, order: list[str]) -> None:
    assert_sound(result_or_search_error(parse_efetch_data, data, order))


@given(bodies)
def test_any_efetch_body_gives_evidence_or_a_search_error(text: str) -> None:
    assert_sound(result_or_search_error(parse_efetch, text))


@given(bodies)
def test_any_esearch_body_gives_ids_or_a_search_error(text: str) -> None:
    result = result_or_search_error(parse_esearch, text)
    assert result is None or all(pmid.isdigit() for pmid in result.ids)


@given(st.sampled_from(["json", "xml"]), trees)
def test_any_esearch_tree_gives_ids_or_a_search_error(kind: str, data: object) -> None:
    result = result_or_search_error(parse_esearch_data, kind, data)
    assert result is None or isinstance(result, EsearchResult)


@given(trees)
def test_flatten_text_takes_anything(data: object) -> None:
    text = flatten_text(data)
    assert text == " ".join(text.split())


xml_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=60)


@st.composite
def well_formed_records(draw: st.DrawFn) -> list[tuple[str, str, list[tuple[str, str]]]]:
    pmids = draw(st.lists(st.integers(1, 99_999_999).map(str), min_size=1, max_size=5, unique=True))
    return [
        (
            pmid,
            draw(xml_text),
            draw(st.lists(st.tuples(st.sampled_from(["", "METHODS", "RESULTS"]), xml_text), max_size=3)),
        )
        for pmid in pmids
    ]


def efetch_body(records: list[tuple[str, str, list[tuple[str, str]]]]) -> str:
    root = ET.Element("PubmedArticleSet")
    for pmid, title, sections in records:
        citation = ET.SubElement(ET.SubElement(root, "PubmedArticle"), "MedlineCitation")
        ET.SubElement(citation, "PMID").text = pmid
        article = ET.SubElement(citation, "Article")
        ET.SubElement(article, "ArticleTitle").text = title
        abstract = ET.SubElement(article, "Abstract")
        for label, text in sections:
            ET.SubElement(abstract, "AbstractText", {"Label": label} if label else {}).text = text
    return ET.tostring(root, encoding="unicode")


@settings(max_examples=200)
@given(well_formed_records(), st.randoms(use_true_random=False))
def test_well_formed_records_come_back_whole_in_esearch_order(
    records: list[tuple[str, str, list[tuple[str, str]]]], random: Any
) -> None:
    order = [pmid for pmid, _, _ in records]
    random.shuffle(order)

    batch = parse_efetch(efetch_body(records), order)

    def flat(text: str) -> str:
        return " ".join(text.split())

    expected = {}
    for pmid, title, sections in records:
        parts = [f"{label}: {flat(text)}" if label else flat(text) for label, text in sections if flat(text)]
        if flat(title) and parts:
            expected[pmid] = (flat(title), " ".join(parts))
    assert [item.citation.pmid for item in batch.evidence] == [pmid for pmid in order if pmid in expected]
    for item in batch.evidence:
        assert item.citation.pmid is not None
        title, content = expected[item.citation.pmid]
        assert item.citation.title == title
        assert item.content == content
        assert item.relevance == max(0.5, 1.0 - 0.02 * order.index(item.citation.pmid))
    assert batch.without_abstract == sum(1 for _, _, sections in records if not any(flat(t) for _, t in sections))
