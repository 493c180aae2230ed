"""The efetch parser on the shapes real PubMed records take, written out small so each is visible."""

from __future__ import annotations

import pytest

from deepcritical.errors import RateLimitError, SearchError
from deepcritical.models import Evidence
from deepcritical.sources.ncbi_parse import parse_efetch, relevance_for_rank


def record(
    pmid: str = "1", *, title: str = "A title.", abstract: str = "<AbstractText>Text.</AbstractText>", **parts: str
) -> str:
    """A PubmedArticle with overridable parts: pub_date, authors, article_extra, pubmed_data."""
    pub_date = parts.get("pub_date", "<Year>2020</Year>")
    return f"""
    <PubmedArticle>
      <MedlineCitation Status="MEDLINE" Owner="NLM">
        <PMID Version="1">{pmid}</PMID>
        <Article PubModel="Print">
          <Journal><JournalIssue><PubDate>{pub_date}</PubDate></JournalIssue><Title>The Journal</Title></Journal>
          <ArticleTitle>{title}</ArticleTitle>
          {parts.get("article_extra", "")}
          <Abstract>{abstract}</Abstract>
          <AuthorList CompleteYN="Y">{parts.get("authors", "")}</AuthorList>
          <PublicationTypeList><PublicationType UI="D016428">Journal Article</PublicationType>
            <PublicationType UI="D016449">Randomized Controlled Trial</PublicationType></PublicationTypeList>
        </Article>
      </MedlineCitation>
      <PubmedData>{parts.get("pubmed_data", "")}</PubmedData>
    </PubmedArticle>"""


def only(*records: str) -> Evidence:
    batch = parse_efetch(f'<?xml version="1.0"?><PubmedArticleSet>{"".join(records)}</PubmedArticleSet>')
    assert len(batch.evidence) == 1
    return batch.evidence[0]


def test_structured_abstract_keeps_section_labels_in_order() -> None:
    evidence = only(
        record(
            abstract='<AbstractText Label="BACKGROUND" NlmCategory="BACKGROUND">Why.</AbstractText>'
            '<AbstractText Label="METHODS" NlmCategory="METHODS">How.</AbstractText>'
            "<AbstractText>Unlabelled.</AbstractText><CopyrightInformation>(c) Someone</CopyrightInformation>"
        )
    )
    assert evidence.content == "BACKGROUND: Why. METHODS: How. Unlabelled."


def test_inline_markup_is_flattened_in_place() -> None:
    evidence = only(
        record(
            title="Role of <i>APOE</i> ε4 in A<sub>β</sub> clearance",
            abstract="<AbstractText>Levels of 10<sup>-3</sup> <b>M</b> and <i>P</i> &lt; 0.05 in <u>mice</u>."
            "</AbstractText>",
        )
    )
    assert evidence.citation.title == "Role of APOE ε4 in Aβ clearance"
    assert evidence.content == "Levels of 10-3 M and P < 0.05 in mice."


def test_mathml_reads_as_its_symbols() -> None:
    math = (
        '<mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML">\n  <mml:msub>\n   <mml:mi>V</mml:mi>\n'
        "   <mml:mi>max</mml:mi>\n  </mml:msub>\n </mml:math>"
    )
    evidence = only(record(abstract=f"<AbstractText>The {math} rose.</AbstractText>"))
    assert evidence.content == "The Vmax rose."


@pytest.mark.parametrize(
    ("pub_date", "expected"),
    [
        ("<Year>1998</Year><Month>Jan</Month><Day>2</Day>", "1998-01-02"),
        ("<Year>2017</Year><Month>06</Month>", "2017-06"),
        ("<Year>2019</Year><Month>Sept</Month>", "2019-09"),
        ("<Year>2021</Year><Season>Spring</Season>", "2021"),
        ("<MedlineDate>1998 Dec-1999 Jan</MedlineDate>", "1998"),
        ("<MedlineDate>Winter</MedlineDate>", "Unknown"),
        ("<Year>20XX</Year>", "Unknown"),
    ],
)
def test_publication_dates(pub_date: str, expected: str) -> None:
    assert only(record(pub_date=pub_date)).citation.date == expected


def test_electronic_date_stands_in_when_the_issue_has_none() -> None:
    extra = '<ArticleDate DateType="Electronic"><Year>2024</Year><Month>03</Month><Day>15</Day></ArticleDate>'
    evidence = only(record(pub_date="", article_extra=extra))
    assert evidence.citation.date == "2024-03-15"


def test_authors_collective_names_and_invalid_names() -> None:
    authors = (
        '<Author ValidYN="Y"><LastName>Smith</LastName><ForeName>Jane A</ForeName><Initials>JA</Initials></Author>'
        "<Author><LastName>Plato</LastName></Author>"
        "<Author><LastName>Lee</LastName><ForeName>Min</ForeName></Author>"
        '<Author ValidYN="N"><LastName>Smoth</LastName><Initials>J</Initials></Author>'
        "<Author><CollectiveName>COVID-19 <i>Genomics</i> Consortium</CollectiveName></Author>"
    )
    evidence = only(record(authors=authors))
    assert evidence.citation.authors == ("Smith JA", "Plato", "Lee Min", "COVID-19 Genomics Consortium")


def test_ids_come_from_pubmed_data_not_from_the_reference_list() -> None:
    pubmed_data = (
        '<ArticleIdList><ArticleId IdType="pubmed">1</ArticleId><ArticleId IdType="doi">10.1000/ABC.1</ArticleId>'
        '<ArticleId IdType="pmc">PMC123</ArticleId></ArticleIdList>'
        '<ReferenceList><Reference><ArticleIdList><ArticleId IdType="doi">10.9/other</ArticleId>'
        "</ArticleIdList></Reference></ReferenceList>"
    )
    citation = only(record(pubmed_data=pubmed_data)).citation
    assert (citation.doi, citation.pmcid, citation.pmid) == ("10.1000/abc.1", "PMC123", "1")
    assert citation.journal == "The Journal"
    assert citation.publication_types == ("Journal Article", "Randomized Controlled Trial")


def test_doi_from_elocation_id_when_pubmed_data_has_none() -> None:
    extra = (
        '<ELocationID EIdType="pii" ValidYN="Y">S0001</ELocationID>'
        '<ELocationID EIdType="doi" ValidYN="Y">10.1016/J.X.2020.01</ELocationID>'
    )
    assert only(record(article_extra=extra)).citation.doi == "10.1016/j.x.2020.01"


def test_book_article_is_read_from_its_book_document() -> None:
    book = """
    <PubmedBookArticle>
      <BookDocument>
        <PMID Version="1">20301295</PMID>
        <ArticleIdList><ArticleId IdType="bookaccession">NBK1116</ArticleId></ArticleIdList>
        <Book>
          <BookTitle book="gene">GeneReviews<sup>®</sup></BookTitle>
          <PubDate><Year>1993</Year></PubDate>
          <AuthorList Type="editors"><Author><LastName>Adam</LastName><Initials>MP</Initials></Author></AuthorList>
        </Book>
        <ArticleTitle book="gene" part="alzheimer">Alzheimer Disease Overview</ArticleTitle>
        <AuthorList Type="authors"><Author><LastName>Bird</LastName><Initials>TD</Initials></Author></AuthorList>
        <PublicationType UI="D016454">Review</PublicationType>
        <Abstract><AbstractText Label="CLINICAL CHARACTERISTICS">Dementia.</AbstractText></Abstract>
        <ContributionDate><Year>1998</Year><Month>10</Month><Day>23</Day></ContributionDate>
      </BookDocument>
      <PubmedBookData><ArticleIdList><ArticleId IdType="pubmed">20301295</ArticleId></ArticleIdList></PubmedBookData>
    </PubmedBookArticle>"""
    evidence = only(book)
    citation = evidence.citation
    assert citation.pmid == "20301295"
    assert citation.title == "Alzheimer Disease Overview"
    assert citation.journal == "GeneReviews®"
    assert citation.authors == ("Bird TD",)
    assert citation.date == "1998-10-23"
    assert citation.publication_types == ("Review",)
    assert evidence.content == "CLINICAL CHARACTERISTICS: Dementia."


def test_counts_what_was_left_out() -> None:
    batch = parse_efetch(
        "<PubmedArticleSet>"
        + record("1")
        + record("2", abstract="")
        + record("3", title="")
        + record("x")
        + record("1")
        + "</PubmedArticleSet>"
    )
    assert [e.citation.pmid for e in batch.evidence] == ["1"]
    assert (batch.records, batch.without_abstract, batch.malformed) == (5, 1, 2)


def test_empty_article_set_is_an_empty_batch() -> None:
    batch = parse_efetch("<PubmedArticleSet>\n</PubmedArticleSet>")
    assert (batch.evidence, batch.records) == ([], 0)


def test_long_titles_are_cut_to_the_citation_limit() -> None:
    title = only(record(title="word " * 200)).citation.title
    assert len(title) == 500
    assert title.endswith("…")


def test_escaped_markup_in_text_is_text() -> None:
    evidence = only(record(title="Why &lt;i&gt;this&lt;/i&gt; stays"))
    assert evidence.citation.title == "Why <i>this</i> stays"


def test_entity_declarations_are_refused() -> None:
    body = '<!DOCTYPE x [<!ENTITY boom "boom">]><PubmedArticleSet>&boom;</PubmedArticleSet>'
    with pytest.raises(SearchError, match="malformed or truncated XML"):
        parse_efetch(body)


def test_rate_limit_json_instead_of_xml_is_a_rate_limit_error() -> None:
    with pytest.raises(RateLimitError):
        parse_efetch('{"error":"API rate limit exceeded","api-key":"1.2.3.4","count":"4","limit":"3"}')


def test_relevance_decays_by_rank_to_a_floor() -> None:
    assert [relevance_for_rank(rank) for rank in (0, 1, 10, 25, 99)] == pytest.approx([1.0, 0.98, 0.8, 0.5, 0.5])
