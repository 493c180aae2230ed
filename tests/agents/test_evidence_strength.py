"""The grade reaches the report: the Judge's view, the code-built assessment (higher levels in humans
count more; missing designs are named), the extractive report (weighed by design, retracted items and
registrations never quoted, no direction from items that do not name the question's entities), the
citation check (retracted items support nothing) and the rendered report (design per finding, a
strength-of-evidence table, a visible retraction warning)."""

from __future__ import annotations

from deepcritical.appraisal.assessment import code_assessment
from deepcritical.appraisal.framing import EvidenceView, evidence_block, parse_evidence
from deepcritical.appraisal.strength import strength_of
from deepcritical.models import Evidence, Grade, Passage
from deepcritical.outputs import Finding, ResearchReport
from deepcritical.report.citations import verify_citations
from deepcritical.report.extractive import extractive_report
from deepcritical.report.render import RenderContext, render_markdown
from helpers.builders import evidence

# A question without an outcome of its own: any result of a study of its people counts, the mice's tau too ("help
# Alzheimer's disease" asks for a clinical outcome, as "improve outcomes in" does: issue 38).
QUESTION = "Can drug X be repurposed for Alzheimer's disease?"
RCT = Grade(
    design="randomized_controlled_trial", level=2, population="humans", basis="publication_type", sample_size=80
)
COHORT = Grade(design="cohort", level=3, population="humans", basis="mesh", sample_size=9000)
MICE = Grade(design="preclinical", population="animals", basis="mesh")
REGISTRY = Grade(design="registered_trial", population="humans", basis="source", phase="3", sample_size=370)
WEB = Grade(design="web", population="humans", basis="source")


def make(key: str, text: str, grade: Grade, *, title: str | None = None, **flags: bool) -> Evidence:
    title = title or f"Study {key} of drug X in Alzheimer's disease"
    return evidence(text, pmid=key, title=title, date="2021", authors=("Smith J",), grade=grade, **flags)


NULL_TRIAL = make(
    "101",
    "CONCLUSIONS: Drug X did not change cognition in patients with mild Alzheimer's disease compared with placebo.",
    RCT.model_copy(update={"sample_size": 40}),
)
GOOD_TRIAL = make("102", "CONCLUSIONS: Drug X improved memory recall in adults at risk of Alzheimer's disease.", RCT)
GOOD_COHORT = make(
    "103", "CONCLUSIONS: Drug X use was associated with a lower risk of Alzheimer's disease in older adults.", COHORT
)
GOOD_MICE = make("104", "CONCLUSIONS: Drug X reduced tau phosphorylation in Alzheimer's disease model mice.", MICE)
RETRACTED = make(
    "105",
    "CONCLUSIONS: Drug X reversed memory decline and improved cognition in Alzheimer's disease.",
    RCT,
    title="Drug X reverses Alzheimer's disease: a randomised trial",
    retracted=True,
)
CONCERN = make(
    "106",
    "CONCLUSIONS: Drug X reached the cerebrospinal fluid and improved scores in mild Alzheimer's disease.",
    Grade(design="clinical_trial", level=3, population="humans", basis="publication_type", phase="1"),
    expression_of_concern=True,
)
PLANNED = make("107", "This trial tests whether drug X improves memory and slows Alzheimer's disease.", REGISTRY)
OFF_TOPIC = make(
    "108",
    "Long-term drug X use was associated with reduced stomach upset and improved tolerability.",
    WEB,
    title="Drug X side effects",
)
ALL = [NULL_TRIAL, GOOD_TRIAL, GOOD_COHORT, GOOD_MICE, RETRACTED, CONCERN, PLANNED, OFF_TOPIC]


def views(items: list[Evidence]) -> list[EvidenceView]:
    return [EvidenceView.of(item) for item in items]


def test_the_models_view_carries_the_grade_through_the_evidence_block() -> None:
    (view,) = parse_evidence(evidence_block([RETRACTED]))
    assert (view.design, view.level, view.population, view.n, view.retracted) == (
        "randomized_controlled_trial",
        2,
        "humans",
        80,
        True,
    )
    (registry,) = parse_evidence(evidence_block([PLANNED]))
    assert (registry.design, registry.level, registry.n, registry.expression_of_concern) == (
        "registered_trial",
        None,
        370,
        False,
    )


def test_every_field_of_the_view_survives_the_evidence_block() -> None:
    # What a model (and the demo's stand-in) reads must be what the report counts: a passage's section and
    # study included, or the brief and the table count different sets.
    passage = RETRACTED.model_copy(
        update={
            "passage": Passage(collection="documents", document_id="pmid:1", passage_id="4", section="Introduction")
        }
    )
    for item in (*ALL, passage):
        (view,) = parse_evidence(evidence_block([item]))
        assert view == EvidenceView.of(item)


def test_items_are_placed_by_design_and_direction_and_weighed_by_level() -> None:
    strength = strength_of(QUESTION, views(ALL))
    rows = dict(strength.rows)
    assert rows["randomised controlled trials"] == {"null": [NULL_TRIAL.id], "favourable": [GOOD_TRIAL.id]}
    assert rows["observational studies"] == {"favourable": [GOOD_COHORT.id]}
    assert rows["animal and cell studies"] == {"favourable": [GOOD_MICE.id]}
    assert strength.retracted == [RETRACTED.id]
    assert strength.registrations == [PLANNED.id]
    assert strength.off_topic == [OFF_TOPIC.id]
    # favourable: trial 3 + cohort 2 + concern trial 2 + mice 0.5; against: trial 3.
    assert strength.weights == {"favourable": 7.5, "null": 3.0, "unfavourable": 0.0}
    assert strength.lean == "leans favourable"
    assert strength.best_level == {"null": 2, "favourable": 2}
    without_favourable_trials = strength_of(QUESTION, views([NULL_TRIAL, GOOD_MICE, GOOD_COHORT]))
    assert without_favourable_trials.lean == "is mixed"  # 2.5 favourable against 3 null


def test_the_code_report_weighs_by_design_and_never_quotes_retracted_items_or_plans() -> None:
    report = extractive_report(QUESTION, views(ALL))
    quoted = [i for finding in (*report.key_findings, *report.contrary_evidence) for i in finding.evidence_ids]
    assert RETRACTED.id not in quoted
    assert PLANNED.id not in quoted
    assert report.key_findings[0].evidence_ids == [GOOD_TRIAL.id]  # strongest design first
    assert report.key_findings[-1].evidence_ids == [GOOD_MICE.id]  # animal studies last
    assert [f.evidence_ids for f in report.contrary_evidence] == [[NULL_TRIAL.id]]
    brief = report.answer_brief
    # As the verdict weighs them: the two trials (n = 80 favourable, n = 40 null) weigh nearly alike, and the
    # cohort, the phase-1 trial and the mice do not tip the favourable share past 0.65.
    assert "by design level, size and directness, the evidence is mixed" in brief
    assert brief.startswith("The strongest evidence in people is at OCEBM level 2 (randomised trials)")
    assert RETRACTED.id not in brief
    assert PLANNED.id not in brief
    assert OFF_TOPIC.id not in brief


def test_no_direction_from_items_that_do_not_name_the_questions_entities() -> None:
    """Issue 8: six snippets about metformin alone gave "leans favourable" on metformin for Alzheimer's."""
    about_drug_only = [
        make(str(200 + n), f"CONCLUSIONS: Drug X improved glucose control in diabetes, study {n}.", WEB, title="Drug X")
        for n in range(6)
    ]
    report = extractive_report("Can drug X slow Alzheimer's disease?", views(about_drug_only))
    assert "gives no answer" in report.answer_brief
    assert "lean" not in report.answer_brief
    assert "favourable" not in report.answer_brief


def test_the_citation_check_removes_retracted_support() -> None:
    collected = {item.id: item for item in ALL}
    draft = ResearchReport(
        question=QUESTION,
        answer_brief="Yes.",
        key_findings=[
            Finding(statement="Drug X reverses decline.", evidence_ids=[RETRACTED.id]),
            Finding(statement="Drug X helps memory.", evidence_ids=[GOOD_TRIAL.id, f"PMID: {RETRACTED.citation.pmid}"]),
        ],
    )
    checked, audit = verify_citations(draft, collected)
    assert [f.evidence_ids for f in checked.key_findings] == [[GOOD_TRIAL.id]]
    assert audit.retracted_ids == [RETRACTED.id]
    assert audit.dropped_findings == ["Drug X reverses decline."]
    assert RETRACTED.id not in checked.references


def test_the_code_assessment_rewards_human_evidence_of_higher_levels_and_names_missing_designs() -> None:
    def clinical(items: list[Evidence]) -> int:
        return code_assessment(QUESTION, views(items), capped=False).clinical.score  # the weights, before any cap

    assert (
        clinical([GOOD_TRIAL])
        > clinical([GOOD_COHORT])
        > clinical(
            [
                OFF_TOPIC.model_copy(
                    update={"content": "Drug X in Alzheimer's disease patients: an observational study."}
                )
            ]
        )
    )
    assert clinical([GOOD_MICE]) == 0  # animal studies are mechanism evidence, never clinical
    assert clinical([RETRACTED]) == 0  # a retracted trial counts for nothing
    assessment = code_assessment(QUESTION, views([GOOD_COHORT, GOOD_MICE]))
    assert "No randomised controlled trial among the evidence judged" in assessment.gaps
    assert "No systematic review or meta-analysis among the evidence judged" in assessment.gaps
    assert any(query.endswith("randomized controlled trial") for query in assessment.next_queries)
    assert assessment.mechanism.score > 0
    with_trial = code_assessment(QUESTION, views([GOOD_TRIAL, GOOD_COHORT]))
    assert "No randomised controlled trial among the evidence judged" not in with_trial.gaps
    assert "OCEBM level 2" in with_trial.clinical.reason


def test_the_rendered_report_shows_designs_the_strength_table_and_flags() -> None:
    collected = {item.id: item for item in ALL}
    draft = extractive_report(QUESTION, views(ALL))
    report, _ = verify_citations(draft, collected, question=QUESTION)
    markdown = render_markdown(report, collected, RenderContext(demo=False, stop_reason="sufficient"))
    assert "\\[1\\] *(randomised controlled trial, humans, n = 80)*" in markdown
    assert "*(preclinical study, animals)*" in markdown
    assert "## Strength of evidence" in markdown
    assert "| Design | OCEBM 2011 level | Favourable | Null | Unfavourable | No clear result |" in markdown
    null_ref = report.references.index(NULL_TRIAL.id) + 1
    good_ref = report.references.index(GOOD_TRIAL.id) + 1
    assert f"| Randomised controlled trials | 2 | 1 \\[{good_ref}\\] | 1 \\[{null_ref}\\] | 0 | 0 |" in markdown
    warning = markdown.index("> **Warning: 1 retracted publication on this question.**")
    assert warning < markdown.index("## Key findings")
    assert "> - **Retracted:** Drug X reverses Alzheimer's disease: a randomised trial (2021)." in markdown
    assert "> **Caution: 1 publication under an expression of concern.**" in markdown
    assert (
        "Design: randomised controlled trial, humans, n = 80; OCEBM level 2 (from its publication types)." in markdown
    )
    assert "Set aside: 1 off the question's topic, 1 trial registration (a plan, not results)" in markdown
    references = markdown.split("## References", 1)[1]
    assert RETRACTED.id not in references


def test_a_report_without_flagged_items_has_no_warning() -> None:
    collected = {item.id: item for item in (GOOD_TRIAL, NULL_TRIAL)}
    report, _ = verify_citations(extractive_report(QUESTION, views(list(collected.values()))), collected)
    markdown = render_markdown(report, collected, RenderContext(demo=False, stop_reason="sufficient"))
    assert "retracted" not in markdown.lower()
    assert "expression of concern" not in markdown.lower()
