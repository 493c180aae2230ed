"""A study's reading is for the question's outcome: a result for another outcome states nothing on it."""

from __future__ import annotations

from deepcritical.stages.framing import EvidenceView
from deepcritical.stages.study_reading import StudyReader


def study(text: str, title: str = "Statins in sepsis: a cohort study") -> EvidenceView:
    return EvidenceView(
        id="pmid:1", title=title, source="pubmed", date="2020", text=text, design="cohort", level=3, document="pmid:1"
    )


def test_a_result_for_another_outcome_is_no_result_on_the_questions_outcome() -> None:
    reader = StudyReader("Do statins reduce mortality in sepsis?")
    muscle = study(
        "RESULTS: In sepsis, creatine kinase above 10 times normal occurred in 3.1% of statin users and 0.9% of "
        "non-users (OR 2.9, 95% CI 2.3 to 3.7)."
    )
    reading = reader.read(muscle)
    assert reading.direction is None
    assert reading.other_outcome == "unfavourable"  # more muscle injury: its own result, on its own outcome


def test_the_sentence_on_the_questions_outcome_is_read_when_another_ranks_first() -> None:
    reader = StudyReader("Do statins reduce mortality in sepsis?")
    both = study(
        "RESULTS: Statin users had fewer ICU admissions than non-users (OR 0.71, 95% CI 0.60 to 0.84; p<0.001). "
        "Death at 30 days did not differ between statin users and non-users (HR 0.97, 95% CI 0.85 to 1.10)."
    )
    reading = reader.read(both)
    assert reading.direction == "null"
    assert reading.sentence is not None
    assert reading.sentence.startswith("Death at 30 days")


def test_outcomes_in_a_condition_ask_for_a_clinical_outcome_not_a_mechanism() -> None:
    reader = StudyReader("Do SGLT2 inhibitors improve outcomes in heart failure?")
    energetics = study(
        "RESULTS: In heart failure, the PCr/ATP ratio did not change with SGLT2 inhibitors (1.62 vs 1.60; p=0.72).",
        title="SGLT2 inhibitors and myocardial energetics in heart failure",
    )
    assert reader.read(energetics).direction is None
    events = study(
        "RESULTS: The primary outcome occurred in 16.3% of the SGLT2 inhibitors group and 21.2% of the placebo "
        "group (HR 0.74, 95% CI 0.65 to 0.85).",
        title="SGLT2 inhibitors in heart failure",
    )
    assert reader.read(events).direction == "favourable"
