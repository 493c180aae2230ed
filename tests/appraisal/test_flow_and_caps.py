"""The run's figures and the judge's caps say what the counted studies are (issue 23, round 3): the PRISMA
flow counts records, an article's passages under the article's own sources and web pages as web records set
aside; a forest plot never puts a 28-day and a 90-day estimate side by side; a cap names the study that sets
it and why the better-graded ones support less."""

from __future__ import annotations

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.ratings import ceilings
from deepcritical.appraisal.results import StudyResult
from deepcritical.appraisal.run_appraisal import counted_items
from deepcritical.appraisal.strength import strength_of
from deepcritical.models import Citation, Evidence, Grade, Passage
from deepcritical.report.figure_data import EXCLUSION_REASONS, build_figures
from deepcritical.report.forest_data import forest_plots

QUESTION = "Do statins reduce mortality in sepsis?"
RESULT = "RESULTS: Statins reduced 28-day mortality in sepsis (HR 0.79, 95% CI 0.69 to 0.91)."
TRIAL = Grade(design="randomized_controlled_trial", level=2, population="humans", basis="publication_type")


def abstract() -> Evidence:
    citation = Citation(
        source="pubmed",
        title="Statins in sepsis: a randomised trial",
        url="https://pubmed.ncbi.nlm.nih.gov/7/",
        pmid="7",
    )
    return Evidence(content=RESULT, citation=citation, grade=TRIAL, found_by=["pubmed", "europepmc"])


def passage() -> Evidence:
    where = Passage(collection="documents", document_id="pmid:7", passage_id="3", section="Results")
    citation = Citation(
        source="library", title="Statins in sepsis (Results)", url="library://documents/pmid:7/3", pmid="7"
    )
    return Evidence(content=RESULT, citation=citation, grade=TRIAL, passage=where, found_by=["library"])


def web_page() -> Evidence:
    citation = Citation(
        source="web", title="Statins cut sepsis deaths, trial finds", url="https://news.example/statins"
    )
    grade = Grade(design="web", population="humans", basis="source")
    return Evidence(
        content="Statins reduced deaths in patients with sepsis, a trial found.", citation=citation, grade=grade
    )


def test_the_flow_counts_records_a_passage_under_its_article_and_a_web_page_as_no_study() -> None:
    items = [abstract(), passage(), web_page()]
    evidence = {item.id: item for item in items}
    flow = build_figures(counted_items(QUESTION, evidence, ()), evidence, {}).flow
    assert flow is not None
    assert flow.identified == {"europepmc": 1, "pubmed": 1, "web": 1}  # no "library": the passage is the article's
    assert (flow.screened, flow.duplicates, flow.included) == (2, 1, 1)
    assert flow.excluded == {EXCLUSION_REASONS["not_studies"]: 1}


def test_a_study_known_only_by_its_passages_was_found_in_the_library() -> None:
    evidence = {item.id: item for item in [passage()]}
    flow = build_figures(counted_items(QUESTION, evidence, ()), evidence, {}).flow
    assert flow is not None
    assert (flow.identified, flow.screened, flow.included) == ({"library": 1}, 1, 1)


def row(key: str, outcome: str, value: float) -> StudyResult:
    return StudyResult(
        id=key, design="cohort study", measure="HR", value=value, ci_low=value - 0.1, ci_high=value + 0.05,
        quote=f"HR {value}", outcome=outcome,
    )  # fmt: skip


def test_estimates_at_different_time_points_are_not_plotted_as_one_outcome() -> None:
    cohort = Grade(design="cohort", level=3, population="humans", basis="mesh")
    evidence = {
        key: Evidence(content="x", citation=Citation(source="pubmed", title=key, url=f"https://x/{key}"), grade=cohort)
        for key in ("a", "b", "c")
    }
    ids = list(evidence)
    plots, notes = forest_plots(
        [row(ids[0], "28-day mortality", 0.79), row(ids[1], "90-day mortality", 0.87)], evidence, {}
    )
    assert plots == []
    assert "on 2 outcomes" in notes[0]
    same, _ = forest_plots(
        [row(ids[0], "28-day mortality", 0.79), row(ids[2], "mortality at 28 days", 0.85)], evidence, {}
    )
    assert [len(plot.studies) for plot in same] == [2]


def test_a_cap_names_the_study_that_sets_it_and_why_better_graded_ones_support_less() -> None:
    def study(key: str, design: str, level: int, n: int) -> EvidenceView:
        text = f"RESULTS: Metformin was associated with a lower risk of Alzheimer's disease (study {key})."
        return EvidenceView(
            id=key, title=f"Metformin and Alzheimer's disease {key}", source="pubmed", date="2020", text=text,
            design=design, level=level, population="humans", n=n, document=key,
        )  # fmt: skip

    views = [
        study("pmid:1", "randomized_controlled_trial", 2, 80),
        study("pmid:2", "meta_analysis", 3, 1_032_417),
    ]
    ceiling, reason = ceilings(strength_of("Can metformin be repurposed for Alzheimer's disease?", views))["clinical"]
    assert ceiling == 6
    # Not "the strongest study is a meta-analysis (OCEBM level 3)" beside a level-2 trial: the trial is small.
    assert "OCEBM level 2" in reason
    assert "at most 5: fewer than 100 participants" in reason
    assert reason.endswith("comes from a meta-analysis (OCEBM level 3, n = 1,032,417) pmid:2")
