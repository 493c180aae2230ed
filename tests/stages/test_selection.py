"""Issue 23, item 5: the Judge sees the strongest studies (best-graded, most direct first, then relevance and
diversity), and no round searches again for a kind of study the run holds on the question."""

from __future__ import annotations

from deepcritical.demo.models import demo_queries
from deepcritical.models import Evidence, Grade
from deepcritical.outputs import AspectScore, Assessment
from deepcritical.run.stage import Cause
from deepcritical.run.stages import judge_in_code
from deepcritical.stages.selection import asks_for_held_kind, held_kinds, select_studies, strongest_studies
from helpers.research_fakes import QUESTION, FakeHandler, FakeStore, corpus_evidence, make_deps


def graded(number: int, text: str, design: str, level: int | None, n: int | None = None, **kw: object) -> Evidence:
    item = corpus_evidence(number, text, **kw)  # type: ignore[arg-type]
    population = "humans" if design not in ("preclinical",) else "animals"
    return item.model_copy(update={"grade": Grade(design=design, level=level, population=population, sample_size=n)})


FORUM = graded(1, "Forum: metformin cured my Alzheimer's disease.", "web", None, source="web")
REGISTRATION = graded(2, "Metformin in Alzheimer's disease: a registered trial.", "registered_trial", None)
EDITORIAL = graded(3, "Editorial: metformin for Alzheimer's disease deserves a trial.", "editorial_or_letter", 5)
META = graded(4, "Metformin and Alzheimer's disease: no association in a meta-analysis.", "meta_analysis", 1, 10**6)
SMALL_RCT = graded(
    5, "Metformin did not change cognition in Alzheimer's disease.", "randomized_controlled_trial", 2, 40
)
LARGE_RCT = graded(6, "Metformin slowed memory decline in Alzheimer's disease.", "randomized_controlled_trial", 2, 80)
OFF_TOPIC_RCT = graded(
    7, "Metformin lowered HbA1c.", "randomized_controlled_trial", 2, 5000, title="Metformin in type 2 diabetes"
)
MICE = graded(8, "Metformin lowered amyloid in Alzheimer's disease mice.", "preclinical", None)
EVERY = [FORUM, REGISTRATION, EDITORIAL, META, SMALL_RCT, LARGE_RCT, OFF_TOPIC_RCT, MICE]


def test_the_strongest_direct_studies_come_first_best_level_then_size() -> None:
    ranked = strongest_studies(QUESTION, EVERY)
    assert [group[0].id for group in ranked] == [META.id, LARGE_RCT.id, SMALL_RCT.id]  # off topic, mice: not


def test_a_selection_holds_the_trials_and_the_meta_analysis_when_relevance_ranks_them_last() -> None:
    # The store's relevance and diversity order put the forum thread, the registration and the editorial first.
    relevance_order = [FORUM, REGISTRATION, EDITORIAL, MICE]
    collected = {item.id: item for item in EVERY}
    chosen = select_studies(QUESTION, relevance_order, collected, 6)
    assert [item.id for item in chosen] == [
        META.id,
        LARGE_RCT.id,
        SMALL_RCT.id,
        FORUM.id,
        REGISTRATION.id,
        EDITORIAL.id,
    ]
    assert select_studies(QUESTION, relevance_order, collected, 0) == []
    assert len(select_studies(QUESTION, relevance_order, collected, 2)) == 2


async def test_the_judge_is_shown_the_strongest_studies_through_the_run_evidence() -> None:
    store = FakeStore()
    deps = make_deps(store=store)
    await deps.evidence.add(EVERY)
    shown = await deps.evidence.select(QUESTION, 4)
    assert {META.id, LARGE_RCT.id} <= {item.id for item in shown}
    assert len(shown) == 4


def test_a_query_for_a_kind_of_study_held_on_the_question_is_named() -> None:
    held = held_kinds(QUESTION, [FORUM, SMALL_RCT, OFF_TOPIC_RCT])
    assert held == ["randomised trials"]
    assert held_kinds(QUESTION, [FORUM, OFF_TOPIC_RCT, MICE, REGISTRATION]) == []  # none on the question
    assert asks_for_held_kind("metformin Alzheimer's disease randomized controlled trial", held) == "randomised trials"
    assert (
        asks_for_held_kind("metformin Alzheimer's disease clinical trial cohort patients", held) == "randomised trials"
    )
    assert asks_for_held_kind("metformin Alzheimer's disease cohort study", held) is None
    assert asks_for_held_kind("metformin Alzheimer's disease systematic review", held) is None


async def test_no_round_searches_for_a_kind_of_study_it_holds() -> None:
    handler = FakeHandler()
    deps = make_deps(handler=handler)
    await deps.evidence.add([SMALL_RCT, META])
    summary = await deps.search.search(
        ["metformin Alzheimer's disease randomised trial", "metformin Alzheimer's disease cohort"], by="model"
    )
    assert summary["ran"] == ["metformin Alzheimer's disease cohort"]
    assert handler.queries == ["metformin Alzheimer's disease cohort"]
    refused = await deps.search.search(["metformin Alzheimer's disease meta-analysis"], by="model")
    assert refused["status"].startswith("not run: the run already holds systematic reviews")
    assert handler.queries == ["metformin Alzheimer's disease cohort"]

    # The code-built judge plans no such search either, nor does the demo Brain.
    judged = await judge_in_code(deps, None, Cause(kind="model_failed", note="x"))
    assert all(asks_for_held_kind(q, ["randomised trials"]) is None for q in judged.assessment.next_queries)
    score = AspectScore(score=1, reason="Little.")
    deps.state.assessments.append(
        Assessment(mechanism=score, clinical=score, safety=score, sufficient=False, confidence=0.1)
    )
    brief = {"question": QUESTION, "iteration": 2, "designs_collected": ["randomised trials", "systematic reviews"]}
    planned = demo_queries(brief, [])
    assert planned
    assert all(asks_for_held_kind(q, ["randomised trials", "systematic reviews"]) is None for q in planned)
