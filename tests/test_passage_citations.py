"""Passage-level citations: a finding's quote is kept only when the cited passage holds it, and a finding
that cites a passage is rendered with the passage's section or page and a link to its words."""

from __future__ import annotations

import dataclasses

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.strength import strength_of
from deepcritical.models import Citation, Evidence, Grade, Passage
from deepcritical.outputs import Finding, ResearchReport
from deepcritical.report.citations import quote_in, verify_citations
from deepcritical.report.extractive import extractive_report
from deepcritical.report.render import RenderContext, citation_mark, passage_link, render_markdown

TEXT = "Major bleeding occurred in 3.8% with aspirin and 2.8% with placebo (HR 1.38; 95% CI 1.18 to 1.62)."


def _passage(section: str | None = "Results", page: int | None = None) -> Evidence:
    where = Passage(collection="documents", document_id="pmid:30221597", passage_id="7", section=section, page=page)
    citation = Citation(
        source="library",
        title=f"Aspirin in older adults ({section})",
        url="library://documents/pmid:30221597/7",
        pmid="30221597",
        pmcid="PMC6200000",
    )
    return Evidence(content=TEXT, citation=citation, passage=where)


def _report(quote: str) -> ResearchReport:
    item = _passage()
    finding = Finding(statement="Aspirin raised major bleeding.", evidence_ids=[item.id], quote=quote)
    return ResearchReport(question="q", answer_brief="a", key_findings=[finding], references=[item.id])


def test_a_quote_the_passage_holds_is_kept_whatever_its_spacing_dashes_or_case() -> None:
    item = _passage()
    assert quote_in("HR 1.38; 95% CI 1.18 to 1.62", [item])
    assert quote_in("  major   BLEEDING occurred in 3.8%", [item])
    assert quote_in("“3.8% with aspirin and 2.8% with placebo”", [item])
    report, audit = verify_citations(_report("3.8% with aspirin and 2.8% with placebo"), {item.id: item})
    assert report.key_findings[0].quote == "3.8% with aspirin and 2.8% with placebo"
    assert audit.unverified_quotes == []


def test_a_quote_the_passage_does_not_hold_is_dropped_and_audited() -> None:
    item = _passage()
    report, audit = verify_citations(_report("bleeding was halved (HR 0.5)"), {item.id: item})
    assert report.key_findings[0].quote is None
    assert audit.unverified_quotes == ["bleeding was halved (HR 0.5)"]
    assert not quote_in("", [item])


def test_a_passage_is_cited_with_its_section_or_page_and_linked_to_its_words() -> None:
    assert citation_mark(3, _passage("Results")) == "3, Results"
    assert citation_mark(5, _passage(None, page=7)) == "5, p. 7"
    assert citation_mark(2, None) == "2"
    link = passage_link(_passage())
    assert (
        link
        == "https://pmc.ncbi.nlm.nih.gov/articles/PMC6200000/#:~:text=Major%20bleeding%20occurred%20in%203.8%25%20with"
    )
    item = _passage()
    report, _ = verify_citations(_report("HR 1.38"), {item.id: item})
    markdown = render_markdown(report, {item.id: item}, RenderContext(demo=False, stop_reason="sufficient"))
    assert '"HR 1.38" \\[1, Results\\]' in markdown
    assert f"({link})" in markdown


def test_a_finding_standing_only_on_an_introduction_or_methods_passage_is_not_a_finding() -> None:
    for section in ("Introduction", "Methods", "2. Materials and methods", "Background"):
        item = _passage(section)
        finding = Finding(statement="Aspirin raised major bleeding.", evidence_ids=[item.id])
        report = ResearchReport(question="q", answer_brief="a", key_findings=[finding], references=[item.id])
        checked, audit = verify_citations(report, {item.id: item})
        assert checked.key_findings == [], section
        assert audit.dropped_findings == ["Aspirin raised major bleeding."]
    for section in ("Results", "Discussion", None):
        item = _passage(section)
        finding = Finding(statement="Aspirin raised major bleeding.", evidence_ids=[item.id])
        report = ResearchReport(question="q", answer_brief="a", key_findings=[finding], references=[item.id])
        assert verify_citations(report, {item.id: item})[0].key_findings[0].evidence_ids == [item.id]


def test_the_extractive_report_quotes_no_introduction_or_methods_passage() -> None:
    question = "Does aspirin cause major bleeding in older adults?"
    views = [EvidenceView.of(_passage("Methods")), EvidenceView.of(_passage("Results"))]
    views[1] = dataclasses.replace(views[1], id="url:library://documents/pmid:30221597/8")
    report = extractive_report(question, views)
    cited = [i for finding in (*report.key_findings, *report.contrary_evidence) for i in finding.evidence_ids]
    assert cited == ["url:library://documents/pmid:30221597/8"]


def test_a_passage_id_written_in_the_brief_becomes_its_reference_number() -> None:
    item = _passage()
    report = ResearchReport(
        question="q",
        answer_brief=f"Aspirin raised major bleeding ({item.id}).",
        key_findings=[Finding(statement="Aspirin raised major bleeding.", evidence_ids=[item.id])],
        references=[item.id],
    )
    markdown = render_markdown(report, {item.id: item}, RenderContext(demo=False, stop_reason="sufficient"))
    brief = markdown.split("## Answer in brief")[1].split("##")[0]
    assert "Aspirin raised major bleeding \\[1\\]." in brief
    assert "library:" not in brief


def _numbered(item: Evidence, passage_id: str, content: str) -> Evidence:
    """Another passage of the same article."""
    assert item.passage is not None
    url = f"library://documents/pmid:30221597/{passage_id}"
    return item.model_copy(
        update={
            "content": content,
            "passage": item.passage.model_copy(update={"passage_id": passage_id}),
            "citation": item.citation.model_copy(update={"url": url}),
        }
    )


def test_a_study_is_counted_once_and_never_by_its_introduction() -> None:
    question = "Does aspirin cause major bleeding in older adults?"
    abstract = Evidence(
        content="Major bleeding was higher with aspirin than with placebo in older adults (3.8% vs 2.8%).",
        citation=Citation(
            source="pubmed",
            title="Aspirin in older adults",
            url="https://pubmed.ncbi.nlm.nih.gov/30221597/",
            pmid="30221597",
        ),
        grade=Grade(design="randomized_controlled_trial", level=2, population="humans"),
    )
    assert abstract.id == "pmid:30221597"
    introduction = _numbered(_passage("Introduction"), "2", "Aspirin reduced major bleeding in earlier cohort studies.")
    methods = _numbered(_passage("Methods"), "3", "Older adults were randomised to aspirin or placebo.")
    views = [EvidenceView.of(item) for item in (introduction, methods, abstract)]
    assert {view.document for view in views} == {"pmid:30221597"}
    strength = strength_of(question, views)
    assert strength.counted == [abstract.id]
    assert set(strength.same_study) == {introduction.id, methods.id}
    # Alone, an introduction passage is placed but states no result of its own.
    alone = strength_of(question, [EvidenceView.of(introduction)])
    assert alone.counted == [introduction.id]
    assert alone.directions[introduction.id] is None
