"""A finding is a result for the question's outcome (issue 23, round 4): a study read for another outcome (a
depression trial on a fractures question) stays in the counted table under "no clear result", but is never
quoted as a finding or as contrary evidence; a study whose quotable sentence is about another outcome is
quoted by its own result for the question's outcome."""

from __future__ import annotations

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.strength import strength_of
from deepcritical.report.extractive import extractive_report
from helpers.builders import evidence

FRACTURES = "Does vitamin D supplementation prevent fractures in older adults?"
STATINS = "Do statins reduce mortality in sepsis?"


def view(key: str, title: str, text: str) -> EvidenceView:
    return EvidenceView(
        id=key, title=title, source="pubmed", date="2020", text=text, design="randomized_controlled_trial",
        level=2, population="humans", document=key, n=18353,
    )  # fmt: skip


# The demo's depression trial as the report's prompt holds it: cut before its Results, its conclusions kept.
DEPRESSION = view(
    "pmid:503",
    "Effect of long-term vitamin D3 supplementation on the risk of depression in adults aged 50 years or older: "
    "a randomised clinical trial",
    "METHODS: 18,353 older adults were randomised to vitamin D3 supplementation 2,000 IU/day or placebo. "
    "CONCLUSIONS: Vitamin D3 supplementation for more than 5 years did not prevent depression or improve mood "
    "in adults aged 50 years or older.",
)
FRACTURE_TRIAL = view(
    "pmid:506",
    "Annual high-dose vitamin D supplementation and fractures in older adults: a randomised trial",
    "RESULTS: Older adults given annual high-dose vitamin D supplementation had 26% more fractures than those "
    "given placebo (RR 1.26, 95% CI 1.00 to 1.59; p=0.047).",
)


def test_a_study_read_for_another_outcome_is_counted_but_never_quoted() -> None:
    counted = strength_of(FRACTURES, [DEPRESSION])
    assert counted.counted == [DEPRESSION.id]
    assert counted.directions[DEPRESSION.id] is None
    report = extractive_report(FRACTURES, [DEPRESSION])
    assert (report.key_findings, report.contrary_evidence) == ([], [])  # not even its opening sentence


def test_beside_a_study_of_the_questions_outcome_only_that_one_is_quoted() -> None:
    report = extractive_report(FRACTURES, [DEPRESSION, FRACTURE_TRIAL])
    quoted = [(f.evidence_ids, f.statement) for f in (*report.key_findings, *report.contrary_evidence)]
    assert [ids for ids, _ in quoted] == [[FRACTURE_TRIAL.id]]
    assert "fractures" in quoted[0][1]


def test_a_trial_quoted_by_another_outcome_is_quoted_by_its_result_for_the_questions() -> None:
    atorvastatin = view(
        "doi:10.1/ator",
        "Atorvastatin to prevent progression of sepsis to severe sepsis: a randomised controlled trial",
        "In 100 statin-naive patients admitted with sepsis, atorvastatin 40 mg daily reduced progression to severe "
        "sepsis from 24% to 4% (p=0.007). The trial was not powered for mortality, which was similar in both groups.",
    )
    report = extractive_report(STATINS, [atorvastatin])
    assert report.key_findings == []  # "reduced progression" is no finding on mortality
    (contrary,) = report.contrary_evidence
    assert "mortality" in contrary.statement
    assert "progression" not in contrary.statement


def test_a_models_finding_on_another_outcome_citing_only_such_a_study_is_dropped() -> None:
    from deepcritical.models import Evidence, Grade
    from deepcritical.outputs import Finding, ResearchReport
    from deepcritical.report.citations import verify_citations

    grade = Grade(design="randomized_controlled_trial", level=2, population="humans", basis="publication_type")

    def record(pmid: str, text: str) -> Evidence:
        return evidence(text, pmid=pmid, title=f"Vitamin D supplementation trial {pmid}", grade=grade)

    depression = record(
        "503", "RESULTS: In older adults, the risk of depression did not differ with vitamin D supplementation "
        "(HR 0.97, 95% CI 0.87 to 1.09)."
    )  # fmt: skip
    fractures = record("506", FRACTURE_TRIAL.text)
    collected = {item.id: item for item in (depression, fractures)}
    draft = ResearchReport(
        question=FRACTURES,
        answer_brief="x",
        key_findings=[],
        contrary_evidence=[
            Finding(statement="Vitamin D did not prevent depression in older adults.", evidence_ids=["pmid:503"]),
            Finding(statement="Vitamin D increased fractures by 26%.", evidence_ids=["pmid:506"]),
        ],
    )
    checked, audit = verify_citations(draft, collected, question=FRACTURES)
    assert [f.evidence_ids for f in checked.contrary_evidence] == [["pmid:506"]]
    assert audit.dropped_findings == ["Vitamin D did not prevent depression in older adults."]
    # Without the question (a caller that checks citations only), nothing is read, nothing dropped for it.
    unread, _ = verify_citations(draft, collected)
    assert len(unread.contrary_evidence) == 2
