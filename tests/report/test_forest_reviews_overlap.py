"""A forest plot of reviews never draws two reviews that pooled the same trial (issue 40): the same patients would
be drawn twice. What a review pooled is what its own text shows: a collected trial's name (as the trial's title
gives it in brackets), its registration number or its PMID. The largest of the overlapping reviews is drawn, and
the plot's note says which was left out and why."""

from __future__ import annotations

from deepcritical.appraisal.results import StudyResult
from deepcritical.models import Citation, Evidence, Grade
from deepcritical.report.forest_data import forest_plots

OUTCOME = "first hospitalisation for heart failure"
REVIEW = Grade(design="meta_analysis", level=1, population="humans", basis="publication_type")
TRIAL = Grade(design="randomized_controlled_trial", level=2, population="humans", basis="publication_type")


def item(pmid: str, title: str, text: str, grade: Grade, author: str, nct_id: str | None = None) -> Evidence:
    citation = Citation(
        source="pubmed", title=title, url=f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/", pmid=pmid, authors=(author,),
        date="2022", nct_id=nct_id,
    )  # fmt: skip
    return Evidence(content=text, citation=citation, grade=grade)


DAPA_HF = item(
    "31535829", "Dapagliflozin in patients with heart failure (DAPA-HF)", "RESULTS: ...", TRIAL, "McMurray JJ"
)
EMPEROR = item(
    "32865377", "Empagliflozin in heart failure", "RESULTS: ...", TRIAL, "Packer M", nct_id="NCT03057977"
)  # the trial's title does not name it: its registration number does


def review(pmid: str, author: str, text: str) -> Evidence:
    return item(pmid, f"SGLT2 inhibitors in heart failure: a meta-analysis ({author})", text, REVIEW, author)


def row(study: Evidence, n: int, value: float) -> StudyResult:
    return StudyResult(
        id=study.id, design=study.grade.design, measure="HR", value=value, ci_low=value - 0.1, ci_high=value + 0.1,
        quote="", outcome=OUTCOME, n=n,
    )  # fmt: skip


def plotted(reviews: list[tuple[Evidence, int]]) -> tuple[list[list[str]], list[str]]:
    studies = [DAPA_HF, EMPEROR, *(study for study, _ in reviews)]
    evidence = {study.id: study for study in studies}
    rows = [row(study, n, 0.75 + index / 100) for index, (study, n) in enumerate(reviews)]
    plots, notes = forest_plots(rows, evidence, {study.id: number for number, study in enumerate(studies, 1)})
    return [[study.id for study in plot.studies] for plot in plots], notes


def test_of_two_reviews_that_pooled_the_same_trial_the_larger_is_drawn_and_the_note_says_why() -> None:
    small = review("35000001", "Alpha", "Two trials (DAPA-HF and one other, 4,744 patients) were pooled.")
    large = review("35000002", "Beta", "We pooled DAPA-HF and EMPEROR-Reduced (NCT03057977): 8,474 patients.")
    other = review("35000003", "Gamma", "Eleven observational cohorts of 120,000 patients were pooled.")
    plots, notes = plotted([(small, 4744), (large, 8474), (other, 120_000)])
    assert plots == [[large.id, other.id]]  # the review order kept; the smaller overlapping one left out
    assert notes == [
        f"Forest plot for {OUTCOME} (systematic reviews and meta-analyses): Alpha 2022 is not drawn, as it pooled "
        "trials that Beta 2022 pooled too (DAPA-HF): their patients would be drawn twice."
    ]


def test_a_registration_number_shows_an_overlap_and_with_one_review_left_there_is_no_plot() -> None:
    first = review("35000001", "Alpha", "Trials: NCT03057977 and two others.")
    second = review("35000002", "Beta", "EMPEROR-Reduced (NCT03057977) was the largest trial pooled.")
    plots, notes = plotted([(first, 9000), (second, 8000)])
    assert plots == []
    assert notes == [
        f"No forest plot for {OUTCOME} (systematic reviews and meta-analyses): Beta 2022 is not drawn, as it pooled "
        "trials that Alpha 2022 pooled too (NCT03057977): their patients would be drawn twice; one remains."
    ]


def test_reviews_whose_texts_share_no_trial_are_drawn_side_by_side() -> None:
    first = review("35000001", "Alpha", "DAPA-HF and two smaller trials (HR 0.74, 0.65 to 0.85).")
    second = review("35000002", "Beta", "Trials of 31535829.5 mg doses, none of them DAPA-HFpEF.")  # no mark of one
    plots, notes = plotted([(first, 9000), (second, 8000)])
    assert plots == [[first.id, second.id]]
    assert notes == []
