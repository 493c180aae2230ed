"""Citations are checked in code: only collected evidence may be cited, and no invented URL survives."""

from __future__ import annotations

from deepcritical.models import Citation, Evidence
from deepcritical.outputs import Finding, ResearchReport
from deepcritical.report.citations import CitationIndex, verify_citations
from helpers.research_fakes import corpus_evidence

PUBMED = corpus_evidence(1, "Metformin reduced amyloid in mice.")  # pmid:10000001
WEB = corpus_evidence(
    2, "A cohort study of patients.", source="web", url="https://News.example.org/story/?utm_source=x"
)
WITH_DOI = Evidence(
    content="A trial with a DOI.",
    citation=Citation(
        source="pubmed", title="Trial", url="https://pubmed.ncbi.nlm.nih.gov/777/", pmid="777", doi="10.1000/ABC.1"
    ),
)
COLLECTED = {item.id: item for item in (PUBMED, WEB, WITH_DOI)}


def report(*findings: Finding, brief: str = "An answer.", limitations: list[str] | None = None) -> ResearchReport:
    return ResearchReport(
        question="model rewrote the question",
        answer_brief=brief,
        key_findings=list(findings),
        limitations=limitations or [],
        references=["pmid:99999999", *COLLECTED],
    )


def test_a_fabricated_id_is_dropped_and_its_finding_with_it() -> None:
    draft = report(
        Finding(statement="Supported and fabricated.", evidence_ids=["pmid:10000001", "pmid:99999999"]),
        Finding(statement="Only fabricated.", evidence_ids=["doi:10.9999/made.up"]),
    )
    checked, audit = verify_citations(draft, COLLECTED, question="Q?")
    assert [f.evidence_ids for f in checked.key_findings] == [["pmid:10000001"]]
    assert audit.dropped_ids == ["pmid:99999999", "doi:10.9999/made.up"]
    assert audit.dropped_findings == ["Only fabricated."]
    assert checked.references == ["pmid:10000001"]
    assert "pmid:99999999" in audit.unlisted_references
    assert checked.question == "Q?"


def test_trivially_different_forms_of_collected_ids_are_repaired() -> None:
    forms = ["10000001", "PMID: 10000001", "[pmid:10000001]", "https://pubmed.ncbi.nlm.nih.gov/10000001/"]
    forms += ["https://doi.org/10.1000/abc.1", "DOI:10.1000/ABC.1", "https://news.example.org/story?utm_source=y"]
    checked, audit = verify_citations(report(Finding(statement="S.", evidence_ids=forms)), COLLECTED)
    assert checked.key_findings[0].evidence_ids == ["pmid:10000001", "pmid:777", WEB.id]
    assert audit.repaired["10000001"] == "pmid:10000001"
    assert audit.repaired["https://doi.org/10.1000/abc.1"] == "pmid:777"
    assert audit.dropped_ids == []


def test_a_fabricated_url_is_removed_from_model_text() -> None:
    draft = report(
        Finding(
            statement="See https://evil.example.com/paper and [this](http://evil.example.com/x) for more.",
            evidence_ids=["pmid:10000001"],
        ),
        brief="Read www.evil.example.com today.",
        limitations=["https://evil.example.com/only-a-link"],
    )
    checked, audit = verify_citations(draft, COLLECTED)
    text = " ".join([checked.answer_brief, *checked.limitations, *(f.statement for f in checked.key_findings)])
    assert "evil" not in text.replace("[link removed]", "")
    assert len(audit.stripped_urls) == 4
    assert checked.key_findings[0].statement == "See [link removed] and this [link removed] for more."


def test_a_collected_url_in_a_statement_becomes_a_citation() -> None:
    draft = report(Finding(statement=f"As reported (url:{WEB.citation.url}).", evidence_ids=[]))
    checked, audit = verify_citations(draft, COLLECTED)
    assert checked.key_findings[0].evidence_ids == [WEB.id]
    assert "http" not in checked.key_findings[0].statement
    assert audit.dropped_findings == []


def test_inline_ids_in_statements_are_checked_too() -> None:
    draft = report(Finding(statement="Benefit shown (PMID: 10000001) [pmid:424242].", evidence_ids=[]))
    checked, audit = verify_citations(draft, COLLECTED)
    assert checked.key_findings[0].statement == "Benefit shown ."
    assert checked.key_findings[0].evidence_ids == ["pmid:10000001"]
    assert audit.dropped_ids == ["pmid:424242"]


def test_index_does_not_resolve_unknown_forms() -> None:
    index = CitationIndex(COLLECTED)
    assert index.resolve("pmid:1") is None
    assert index.resolve("https://example.org/other") is None
    assert index.resolve("Smith 2020") is None
