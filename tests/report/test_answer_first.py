"""Issue 40, items 1 and 3: a report opens with the question's frame, the answer and its certainty (the run's
id, its model and a model failure come after); its findings lead with what the answer rests on, and its
contrary evidence is contrary to the answer."""

from __future__ import annotations

from deepcritical.models import Evidence
from deepcritical.outputs import Finding, ResearchReport, Verdict
from deepcritical.reading.frame import QuestionFrame
from deepcritical.report.render import RenderContext, render_markdown
from deepcritical.report.sections import findings_for_the_answer
from helpers.builders import evidence

QUESTION = "Do statins reduce mortality in sepsis?"


def study(number: int, text: str) -> Evidence:
    return evidence(text, pmid=str(number), title=f"Study {number} of statins in sepsis", date="2021")


COHORT = study(1, "Statin use was associated with lower 30-day mortality in sepsis (HR 0.82, 95% CI 0.77 to 0.87).")
TRIAL = study(2, "Rosuvastatin did not reduce mortality in sepsis (difference 3.6 points, 95% CI -2.8 to 10.0).")
REVIEW = study(3, "In a meta-analysis of nine trials, starting a statin in sepsis did not reduce mortality.")
EVIDENCE = {item.id: item for item in (COHORT, TRIAL, REVIEW)}
FAVOURABLE = Finding(statement="Statin use was associated with lower mortality.", evidence_ids=[COHORT.id])
NULL_TRIAL = Finding(statement="Rosuvastatin did not reduce mortality.", evidence_ids=[TRIAL.id])
NULL_REVIEW = Finding(statement="Starting a statin does not reduce mortality.", evidence_ids=[REVIEW.id])
# As an extractive report files them: for and against the intervention's effect.
DRAFT = ResearchReport(
    question=QUESTION,
    answer_brief="The evidence leans against.",
    key_findings=[FAVOURABLE],
    contrary_evidence=[NULL_TRIAL, NULL_REVIEW],
    references=[COHORT.id, TRIAL.id, REVIEW.id],
)
NO = Verdict(label="no", confidence=0.84, evidence_ids=[REVIEW.id, TRIAL.id], against_ids=[COHORT.id])


def test_under_a_no_the_findings_lead_with_the_studies_it_rests_on_strongest_first() -> None:
    oriented = findings_for_the_answer(DRAFT, NO, EVIDENCE)
    assert oriented.key_findings == [NULL_REVIEW, NULL_TRIAL]  # the verdict's order: the review first
    assert oriented.contrary_evidence == [FAVOURABLE]
    assert oriented.references == [REVIEW.id, TRIAL.id, COHORT.id]  # numbered as they are now cited


def test_under_a_yes_or_without_a_definite_answer_the_sides_stay() -> None:
    yes = Verdict(label="yes", confidence=0.7, evidence_ids=[COHORT.id], against_ids=[TRIAL.id, REVIEW.id])
    assert findings_for_the_answer(DRAFT, yes, EVIDENCE).key_findings == [FAVOURABLE]
    assert findings_for_the_answer(DRAFT, yes, EVIDENCE).contrary_evidence == [NULL_TRIAL, NULL_REVIEW]
    maybe = Verdict(label="maybe", confidence=0.5, evidence_ids=[COHORT.id, TRIAL.id])
    assert findings_for_the_answer(DRAFT, maybe, EVIDENCE) == DRAFT
    assert findings_for_the_answer(DRAFT, None, EVIDENCE) == DRAFT


def test_the_report_opens_with_the_frame_then_the_answer_and_the_run_comes_after() -> None:
    context = RenderContext(
        demo=True,
        stop_reason="sufficient",
        run_id="research-20240101-000000-abcdef",
        model="demo",
        verdict=NO,
        frame=QuestionFrame(population="sepsis", intervention="statins", outcomes=["mortality"]),
        degraded=["the report was built in code"],
    )
    markdown = render_markdown(findings_for_the_answer(DRAFT, NO, EVIDENCE), EVIDENCE, context)
    order = [
        f"# {QUESTION}",
        "**DEMO MODE",
        "**Question frame.**",
        "## Verdict",
        "**No** (",
        "## Answer in brief",
        "Part of this run was done in code",
        "run `research-20240101-000000-abcdef`",
        "## Key findings",
    ]
    places = [markdown.index(mark) for mark in order]
    assert places == sorted(places), dict(zip(order, places, strict=True))
    key = markdown.split("## Key findings", 1)[1].split("\n## ", 1)[0]
    assert key.index("does not reduce mortality") < key.index("did not reduce mortality")
    assert "associated with lower mortality" in markdown.split("## Contrary evidence", 1)[1].split("\n## ", 1)[0]
