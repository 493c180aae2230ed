"""A forest plot draws only estimates of one effect in the question's people (issue 23, round 4): a trial
in people without the question's condition (post-MI patients "without known heart failure", for a heart
failure question) answers it indirectly, so it is left out of the plot and the caption and drawing say so."""

from __future__ import annotations

from deepcritical.appraisal.results import StudyResult
from deepcritical.appraisal.run_appraisal import counted_items
from deepcritical.models import Citation, Evidence, Grade
from deepcritical.outputs import Finding
from deepcritical.report.document import ReportDocument
from deepcritical.report.figure_data import build_figures, figure_lines
from deepcritical.report.forest import forest_plot_svg
from deepcritical.report.forest_data import forest_plots
from deepcritical.report.html import to_html
from deepcritical.report.markdown import ModelText
from deepcritical.report.markdown_writer import blocks_markdown
from deepcritical.report.sections import findings_list

QUESTION = "Do SGLT2 inhibitors improve outcomes in heart failure?"
TRIAL = Grade(design="randomized_controlled_trial", level=2, population="humans", basis="publication_type")


def trial(pmid: str, title: str, text: str) -> Evidence:
    citation = Citation(source="pubmed", title=title, url=f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/", pmid=pmid)
    return Evidence(content=text, citation=citation, grade=TRIAL)


HEART_FAILURE = [
    trial(
        "1",
        "Dapagliflozin in patients with heart failure: a randomised trial",
        "RESULTS: In patients with heart failure, the SGLT2 inhibitor dapagliflozin reduced first hospitalisation "
        "for heart failure (HR 0.70, 95% CI 0.59 to 0.83).",
    ),
    trial(
        "2",
        "Empagliflozin in patients with heart failure: a randomised trial",
        "RESULTS: In patients with heart failure, the SGLT2 inhibitor empagliflozin reduced first hospitalisation "
        "for heart failure (HR 0.69, 95% CI 0.59 to 0.81).",
    ),
]
POST_MI = trial(
    "3",
    "Empagliflozin after acute myocardial infarction: a randomised trial of heart failure prevention",
    "METHODS: Patients after acute MI and without known heart failure were randomised to the SGLT2 inhibitor "
    "empagliflozin or placebo. RESULTS: First hospitalisation for heart failure was less frequent with empagliflozin "
    "(HR 0.77, 95% CI 0.60 to 0.98).",
)


def test_a_study_of_people_without_the_condition_is_left_out_of_the_plot_and_the_caption_says_so() -> None:
    items = [*HEART_FAILURE, POST_MI]
    evidence = {item.id: item for item in items}
    counted = counted_items(QUESTION, evidence, ())
    assert set(counted.counted) == set(evidence)  # all three counted (the post-MI trial indirectly)
    assert counted.indirect == {POST_MI.id: "people without heart failure"}
    numbers = {item.id: number for number, item in enumerate(items, 1)}
    figures = build_figures(counted, evidence, numbers)
    (plot,) = figures.forest_plots
    assert [study.id for study in plot.studies] == [item.id for item in HEART_FAILURE]
    assert [(study.id, study.reason) for study in plot.left_out] == [(POST_MI.id, "people without heart failure")]
    caption = blocks_markdown(figure_lines(figures))
    assert "2 studies (\\[1\\] randomised controlled trial, \\[2\\] randomised controlled trial)" in caption
    assert "Left out, as studies of other people than the question's (an indirect answer): \\[3\\]" in caption
    assert "(people without heart failure)" in caption
    assert "Left out, as studies of other people" in forest_plot_svg(plot)


def test_with_only_one_study_of_the_questions_people_left_there_is_no_plot_but_a_note() -> None:
    items = [HEART_FAILURE[0], POST_MI]
    evidence = {item.id: item for item in items}
    figures = build_figures(counted_items(QUESTION, evidence, ()), evidence, {})
    assert figures.forest_plots == []
    (note,) = figures.forest_notes
    assert note.startswith(
        "No forest plot for first hospitalisation for heart failure (randomised trials): left out, as studies of"
    )
    assert "(people without heart failure); fewer than two remain." in note


def test_a_prevention_question_counts_people_without_the_condition_as_its_own() -> None:
    question = "Do SGLT2 inhibitors prevent heart failure?"
    items = [*HEART_FAILURE, POST_MI]
    evidence = {item.id: item for item in items}
    counted = counted_items(question, evidence, ())
    assert counted.indirect == {}


def test_a_finding_that_cites_an_indirect_study_says_so_beside_its_design_in_the_report_and_page() -> None:
    """The plot leaves the post-MI trial out as indirect; a finding or contrary item quoting it says the same."""
    items = [*HEART_FAILURE, POST_MI]
    evidence = {item.id: item for item in items}
    counted = counted_items(QUESTION, evidence, ())
    numbers = {item.id: number for number, item in enumerate(items, 1)}
    findings = [
        Finding(statement="Empagliflozin after MI did not reduce death.", evidence_ids=[POST_MI.id]),
        Finding(statement="Both heart failure trials were positive.", evidence_ids=[HEART_FAILURE[0].id]),
        Finding(statement="All three trials reduced admissions.", evidence_ids=[i.id for i in items]),
    ]
    blocks = findings_list(findings, numbers, ModelText(evidence, numbers), "None.", evidence, counted.indirect)
    alone, direct, mixed = blocks_markdown(blocks).splitlines()
    assert alone.endswith("*(randomised controlled trial, humans; indirect: people without heart failure)*")
    assert "indirect" not in direct
    assert mixed.endswith("*(randomised controlled trial, humans; \\[3\\] indirect: people without heart failure)*")
    page = to_html(ReportDocument(blocks=blocks))
    assert "randomised controlled trial, humans; indirect: people without heart failure" in page


def test_an_outcome_a_study_names_by_its_defined_abbreviation_is_the_same_outcome_in_the_plots() -> None:
    """A new user's "Could metformin slow Alzheimer's disease?" on the page: the table gave the case-control study's
    OR 1.28 for "AD" (its text writes "Alzheimer's disease (AD)") beside a cohort's HR and a meta-analysis's RR for
    Alzheimer's disease, while the forest note said the studies state "(HR, RR)", as if the OR were on another
    outcome. An abbreviation a study defines names the outcome it stands for."""
    cohort = trial("11", "Metformin and dementia: a cohort", "RESULTS: Alzheimer's disease (HR 0.87, 0.78 to 0.97).")
    case_control = trial(
        "12",
        "Metformin and Alzheimer's disease: a case-control study",
        "BACKGROUND: Whether metformin promotes Alzheimer's disease (AD) is unclear. RESULTS: Long-term use was "
        "associated with a higher risk of AD (OR 1.28, 95% CI 1.11 to 1.47).",
    )
    evidence = {item.id: item for item in (cohort, case_control)}

    def row(item: Evidence, outcome: str, measure: str, value: float, low: float, high: float) -> StudyResult:
        return StudyResult(
            id=item.id,
            design="cohort",
            measure=measure,
            value=value,
            ci_low=low,
            ci_high=high,
            quote="",
            outcome=outcome,
        )

    rows = [row(cohort, "Alzheimer's disease", "HR", 0.87, 0.78, 0.97), row(case_control, "AD", "OR", 1.28, 1.11, 1.47)]
    plots, notes = forest_plots(rows, evidence, {cohort.id: 1, case_control.id: 2})
    assert (plots, notes) == ([], ["No forest plot for Alzheimer's disease (randomised trials): the studies state "
                                   "different measures "
                                   "(HR, OR), which are not comparable."])  # fmt: skip
    same_measure = [rows[0], row(case_control, "AD", "HR", 1.2, 1.1, 1.4)]
    (plot,), _ = forest_plots(same_measure, evidence, {cohort.id: 1, case_control.id: 2})
    assert (plot.outcome, [study.id for study in plot.studies]) == ("Alzheimer's disease", [cohort.id, case_control.id])
    elsewhere = trial(
        "13", "A trial", "RESULTS: AD fell (HR 0.9, 0.8 to 1.0)."
    )  # "AD" it never defines: not spelled out
    plots, _ = forest_plots(
        [rows[0], row(elsewhere, "AD", "HR", 0.9, 0.8, 1.0)], {**evidence, elsewhere.id: elsewhere}, {}
    )
    assert plots == []


def test_a_one_sided_interval_is_not_drawn_as_an_interval() -> None:
    """A non-inferiority trial's "one-sided 97.5% CI −0.05 to 1" is a bound: drawn as an interval it would look
    like a wide, null result beside the others' two-sided intervals."""
    evidence = {item.id: item for item in HEART_FAILURE}

    def row(item: Evidence, sides: int) -> StudyResult:
        return StudyResult(
            id=item.id, design="randomized_controlled_trial", measure="RD", value=0.02, ci_low=-0.05, ci_high=1.0,
            ci_sides=sides, quote="", outcome="first hospitalisation for heart failure", unit="%",
        )  # fmt: skip

    first, second = HEART_FAILURE
    plots, _ = forest_plots([row(first, 2), row(second, 1)], evidence, {})
    assert plots == []
    (plot,), _ = forest_plots([row(first, 2), row(second, 2)], evidence, {})
    assert len(plot.studies) == 2
