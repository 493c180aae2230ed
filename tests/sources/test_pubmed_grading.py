"""The PubMed parser reads what grading needs: MeSH headings, the PublicationType list, retractions and
expressions of concern (CommentsCorrections), the trial's ClinicalTrials.gov number (DataBankList)."""

from __future__ import annotations

from pathlib import Path

import httpx2

from deepcritical.demo.eutils import efetch
from deepcritical.models import Evidence
from deepcritical.sources.ncbi_parse import parse_efetch

ARTICLE = """<?xml version="1.0" ?>
<PubmedArticleSet>
<PubmedArticle>
  <MedlineCitation Status="MEDLINE" Owner="NLM">
    <PMID Version="1">12345678</PMID>
    <Article PubModel="Print">
      <Journal><JournalIssue><PubDate><Year>2020</Year><Month>May</Month></PubDate></JournalIssue>
        <Title>Journal of Examples</Title></Journal>
      <ArticleTitle>Drug X in heart failure.</ArticleTitle>
      <Abstract><AbstractText>Two hundred patients with heart failure were randomised to drug X or placebo.
        Drug X reduced hospitalisation.</AbstractText></Abstract>
      <AuthorList><Author><LastName>Smith</LastName><Initials>J</Initials></Author></AuthorList>
      <DataBankList CompleteYN="Y">
        <DataBank><DataBankName>GEO</DataBankName>
          <AccessionNumberList><AccessionNumber>GSE1</AccessionNumber></AccessionNumberList></DataBank>
        <DataBank><DataBankName>ClinicalTrials.gov</DataBankName>
          <AccessionNumberList><AccessionNumber>NCT01234567</AccessionNumber></AccessionNumberList></DataBank>
      </DataBankList>
      <PublicationTypeList>
        <PublicationType UI="D016428">Journal Article</PublicationType>
        {types}
      </PublicationTypeList>
    </Article>
    <CommentsCorrectionsList>{corrections}</CommentsCorrectionsList>
    <MeshHeadingList>
      <MeshHeading><DescriptorName UI="D006801" MajorTopicYN="N">Humans</DescriptorName></MeshHeading>
      <MeshHeading><DescriptorName UI="D006333" MajorTopicYN="Y">Heart Failure</DescriptorName>
        <QualifierName UI="Q000188" MajorTopicYN="N">drug therapy</QualifierName></MeshHeading>
    </MeshHeadingList>
  </MedlineCitation>
  <PubmedData><ArticleIdList><ArticleId IdType="pubmed">12345678</ArticleId></ArticleIdList></PubmedData>
</PubmedArticle>
</PubmedArticleSet>
"""


def parse(types: str = "", corrections: str = "") -> list[Evidence]:
    return parse_efetch(ARTICLE.replace("{types}", types).replace("{corrections}", corrections)).evidence


def test_mesh_databank_and_grade_are_read() -> None:
    (item,) = parse()
    assert item.citation.mesh_headings == ("Humans", "Heart Failure")
    assert item.citation.nct_id == "NCT01234567"
    # No design type: the text says randomised, MeSH says humans.
    assert (item.grade.design, item.grade.basis, item.grade.population, item.grade.sample_size) == (
        "randomized_controlled_trial",
        "text",
        "humans",
        200,
    )
    assert not item.retracted
    assert not item.expression_of_concern


def test_publication_types_set_the_design_first() -> None:
    (item,) = parse('<PublicationType UI="D016454">Review</PublicationType>')
    assert (item.grade.design, item.grade.basis, item.grade.level) == ("narrative_review", "publication_type", 5)


def test_retraction_from_the_type_or_from_comments_and_corrections() -> None:
    (by_type,) = parse('<PublicationType UI="D016441">Retracted Publication</PublicationType>')
    assert by_type.retracted
    retraction_in = (
        '<CommentsCorrections RefType="RetractionIn"><RefSource>J Ex. 2021</RefSource></CommentsCorrections>'
    )
    (by_link,) = parse(corrections=retraction_in)
    assert by_link.retracted
    assert not by_link.expression_of_concern
    concern = '<CommentsCorrections RefType="ExpressionOfConcernIn"><RefSource>J Ex</RefSource></CommentsCorrections>'
    (concerned,) = parse(corrections=concern)
    assert concerned.expression_of_concern
    assert not concerned.retracted
    notice = '<CommentsCorrections RefType="RetractionOf"><RefSource>J Ex</RefSource></CommentsCorrections>'
    (the_notice,) = parse(corrections=notice)
    assert not the_notice.retracted


def test_a_real_retracted_record_is_flagged(ncbi_data: Path) -> None:
    """PMID 9500320 carries the Retracted Publication type, a RetractionIn and an ExpressionOfConcernIn."""
    path = ncbi_data / "efetch_single" / "pmid_9500320.xml"
    (item,) = parse_efetch(path.read_text(encoding="utf-8")).evidence
    assert item.retracted
    assert item.expression_of_concern
    assert "Humans" in item.citation.mesh_headings
    assert "Retracted Publication" in item.citation.publication_types


def test_real_records_are_all_graded_and_mostly_from_their_indexing(ncbi_data: Path) -> None:
    items = [
        item
        for path in sorted(ncbi_data.glob("efetch_*/*.xml"))
        for item in parse_efetch(path.read_text(encoding="utf-8")).evidence
    ]
    assert len(items) > 150
    with_mesh = [item for item in items if item.citation.mesh_headings]
    assert len(with_mesh) > 100
    assert all(item.grade.population != "unknown" or "Humans" not in item.citation.mesh_headings for item in items)
    bases = {item.grade.basis for item in items}
    assert {"publication_type", "mesh", "text"} <= bases
    assert sum(item.retracted for item in items) >= 1


def test_the_demo_stand_in_writes_the_same_elements() -> None:
    request = httpx2.Request(
        "GET", "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi?db=pubmed&id=99000105,99000114,99000115"
    )
    found = {item.id: item for item in parse_efetch(efetch(request).text).evidence}
    assert found["pmid:99000105"].citation.nct_id == "NCT99000101"
    assert "Humans" in found["pmid:99000105"].citation.mesh_headings
    assert found["pmid:99000114"].retracted
    assert found["pmid:99000115"].expression_of_concern
    assert found["pmid:99000105"].grade.label == "randomised controlled trial (phase 2), humans, n = 80"
