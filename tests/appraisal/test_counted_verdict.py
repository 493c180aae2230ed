"""When the counted readings answer a yes/no question, and when the stance model does: one direct study answers
(issue 38; it was read by the stance model before, round 3 of phases/16_result_reader.md); a study that names the
question's outcome but states no readable result on it is read whole by the stance model, not called insufficient,
and answers yes or no only when it leans clearly (round 4); studies that never name the outcome stay insufficient."""

from __future__ import annotations

import pytest

from deepcritical.appraisal import stance
from deepcritical.appraisal.directness import direct_to_the_frame
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.stance import METHOD
from deepcritical.appraisal.strength import strength_of
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.appraisal.verdict import COUNTED_METHOD, UNREAD_CLEAR_SHARE, counted_verdict
from helpers.builders import evidence_view, fixed_stance


def trial(pmid: str, text: str, title: str) -> EvidenceView:
    return evidence_view(pmid, title, text, "randomized_controlled_trial", 2, 200)


QUESTION = "Do statins reduce mortality in sepsis?"
FIRST = trial(
    "1",
    "RESULTS: Mortality at 28 days was 20% with statins and 21% with placebo (RR 0.95, 95% CI 0.80 to 1.12).",
    "Statins in sepsis: a randomised trial",
)
SECOND = trial(
    "2",
    "RESULTS: Death at 90 days did not differ between statins and placebo (HR 0.98, 95% CI 0.85 to 1.13).",
    "Statins for patients with sepsis: a randomised trial",
)


def test_one_direct_study_is_read_by_the_counted_readings_as_two_are() -> None:
    one = counted_verdict(QUESTION, strength_of(QUESTION, [FIRST]), [FIRST])
    assert one.method == COUNTED_METHOD
    assert (one.answer, one.label) == ("no difference", "no")
    two = counted_verdict(QUESTION, strength_of(QUESTION, [FIRST, SECOND]), [FIRST, SECOND])
    assert two.method == COUNTED_METHOD
    assert two.label == "no"
    # A claim is still settled by its one counted study's reading.
    claim = "Statins reduce mortality in sepsis."
    assert counted_verdict(claim, strength_of(claim, [FIRST]), [FIRST]).method == COUNTED_METHOD


HYPERFIBRINOLYSIS = "Does tranexamic acid reduce hyperfibrinolysis after cardiac surgery?"
DRAINAGE = trial(
    "3",
    "OBJECTIVE: Desmopressin augments hyperfibrinolysis after cardiac surgery; tranexamic acid may decrease it. "
    "RESULTS: Significantly less drainage was noted with tranexamic acid after cardiac surgery (623 vs 1010 mL, "
    "P = .0001).",
    "Tranexamic acid and desmopressin-induced hyperfibrinolysis in cardiac surgery",
)


def test_a_study_naming_the_outcome_it_could_not_be_read_for_is_read_whole_not_insufficient() -> None:
    question, drainage = HYPERFIBRINOLYSIS, DRAINAGE
    verdict = counted_verdict(question, strength_of(question, [drainage]), [drainage])
    assert verdict.label != "insufficient"
    assert verdict.method == METHOD
    # A study that never names the question's outcome states nothing on it: insufficient, as before.
    fractures = "Does tranexamic acid reduce fractures after cardiac surgery?"
    other = counted_verdict(fractures, strength_of(fractures, [drainage]), [drainage])
    assert other.label == "insufficient"
    assert other.method == COUNTED_METHOD


@pytest.mark.parametrize(
    ("probabilities", "label"),
    [
        ((0.8, 0.12, 0.08), "yes"),
        ((0.55, 0.3, 0.15), "maybe"),
        ((0.25, 0.66, 0.09), "maybe"),
        ((0.05, 0.75, 0.2), "no"),
    ],
)
def test_a_study_with_no_readable_result_on_the_outcome_answers_yes_or_no_only_clearly(
    monkeypatch: pytest.MonkeyPatch, probabilities: tuple[float, float, float], label: str
) -> None:
    monkeypatch.setattr(stance, "stance_model", lambda: fixed_stance(*probabilities))
    question = HYPERFIBRINOLYSIS
    verdict = counted_verdict(question, strength_of(question, [DRAINAGE]), [DRAINAGE])
    assert verdict.method == METHOD
    assert verdict.label == label
    assert verdict.probabilities["yes"] == pytest.approx(probabilities[0], abs=1e-3)
    if label == "maybe":
        # Under the clear share: how far from a clear answer, and why, are stated.
        assert max(probabilities[:2]) < UNREAD_CLEAR_SHARE
        assert verdict.confidence == pytest.approx(1 - max(probabilities[:2]), abs=1e-3)
        assert "no result on it that could be read" in verdict.rationale


def review(pmid: str, text: str, title: str) -> EvidenceView:
    return evidence_view(pmid, title, text, "meta_analysis", 1, 5000)


def test_a_vitamin_named_by_another_letter_is_not_the_questions_intervention() -> None:
    question = "Does vitamin D reduce mortality in sepsis?"
    vitamin_c = review(
        "3",
        "Intravenous vitamin C in sepsis reduced mortality at 28 days (RR 0.70, 95% CI 0.55 to 0.89).",
        "Vitamin C for sepsis: a meta-analysis",
    )
    vitamin_d = review(
        "4",
        "Vitamin D3 reduced depressive symptoms slightly (SMD -0.32, 95% CI -0.45 to -0.19).",
        "Vitamin D and depression: a meta-analysis",
    )
    pool = [vitamin_c, vitamin_d]
    verdict = counted_verdict(question, strength_of(question, pool), pool)
    assert verdict.label == "insufficient"
    assert "vitamin D" in verdict.rationale
    assert verdict.evidence_ids == []


def test_the_stance_model_never_reads_studies_of_another_treatment(monkeypatch: pytest.MonkeyPatch) -> None:
    # A narrative review names metformin and heart failure, but states no result; three trials of another drug
    # in heart failure do. Only the metformin review may carry the answer: the stance model reads it alone.
    monkeypatch.setattr(stance, "stance_model", lambda: fixed_stance(0.2, 0.7, 0.1))
    question = "Does metformin improve outcomes in heart failure?"
    metformin = evidence_view(
        "5",
        "Metformin in older people: a narrative review",
        "Metformin may be given to older people with heart failure; we summarise its safety and dosing.",
        "narrative_review",
        5,
        None,
    )
    others = [
        trial(
            str(6 + i),
            "RESULTS: Empagliflozin reduced the composite of cardiovascular death or hospitalisation for heart "
            f"failure (HR 0.7{i}, 95% CI 0.60 to 0.85).",
            f"Empagliflozin in heart failure: trial {i}",
        )
        for i in range(3)
    ]
    pool = [metformin, *others]
    verdict = counted_verdict(question, strength_of(question, pool), pool)
    assert verdict.method == METHOD
    assert verdict.evidence_ids == [metformin.id]


def test_a_number_or_capital_marks_the_intervention_and_a_function_word_does_not() -> None:
    combination = review(
        "9",
        "Aspirin combined with clopidogrel reduced recurrent stroke (HR 0.68, 95% CI 0.57 to 0.81).",
        "Aspirin and clopidogrel after minor stroke: a meta-analysis",
    )
    asked = "Does a combination of aspirin and clopidogrel reduce stroke?"
    assert direct_to_the_frame([combination], StudyReader(asked)) == [combination]
    b12 = review("10", "Vitamin B12 improved memory scores (MD 1.2, 95% CI 0.3 to 2.1).", "Vitamin B12 and cognition")
    b6 = review("11", "Vitamin B6 improved memory scores (MD 1.2, 95% CI 0.3 to 2.1).", "Vitamin B6 and cognition")
    asked = "Does vitamin B12 improve cognition in older adults?"
    assert direct_to_the_frame([b12, b6], StudyReader(asked)) == [b12]


def test_an_association_is_answered_only_from_items_naming_its_exposure_and_states_no_review_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(stance, "stance_model", lambda: fixed_stance(0.7, 0.2, 0.1))
    question = "Is obesity associated with worse outcomes in heart failure?"
    others = [
        trial(
            str(20 + i),
            "RESULTS: Empagliflozin reduced the composite of cardiovascular death or hospitalisation for heart "
            f"failure (HR 0.7{i}, 95% CI 0.60 to 0.85).",
            f"Empagliflozin in heart failure: trial {i}",
        )
        for i in range(3)
    ]
    unanswered = counted_verdict(question, strength_of(question, others), others)
    assert unanswered.label == "insufficient"
    assert "obesity" in unanswered.rationale
    cohort = evidence_view(
        "30",
        "Obesity and outcomes in heart failure: a cohort study",
        "Among 4,000 patients with heart failure, obesity was associated with worse outcomes over five years.",
        "cohort",
        3,
        4000,
    )
    pool = [cohort, *others]
    answered = counted_verdict(question, strength_of(question, pool), pool)
    assert answered.label == "yes"
    assert answered.evidence_ids == [cohort.id]
    assert answered.answer is None  # an association compares no intervention with a comparator


def test_the_stance_model_never_rests_a_verdict_on_a_web_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stance, "stance_model", lambda: fixed_stance(0.7, 0.2, 0.1))
    question = "Is statin use associated with better survival in sepsis?"
    news = EvidenceView(
        id="url:https://news.example/statins",
        title="People taking statins more likely to survive sepsis, registry study finds",
        source="web",
        date="2024",
        text="Statin users with sepsis were more likely to survive, a registry study of survival finds.",
        design="web",
        level=None,
        population="unknown",
        n=None,
    )
    cohort = evidence_view(
        "31",
        "Statin use and survival in sepsis: a cohort study",
        "Among 50,000 patients with sepsis, statin use was associated with better survival at 30 days.",
        "cohort",
        3,
        50000,
    )
    pool = [news, cohort]
    verdict = counted_verdict(question, strength_of(question, pool), pool)
    assert verdict.label == "yes"
    assert news.id not in verdict.evidence_ids


def test_a_question_comparing_nothing_whose_frame_no_item_names_is_read_by_its_key_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "Is it always necessary?" frames "always" as its exposure, which no study names: the question's own key
    # words say what is on it (PubMedQA, phases/23_cochrane_answer.md), not an insufficient from a misread frame.
    monkeypatch.setattr(stance, "stance_model", lambda: fixed_stance(0.2, 0.7, 0.1))
    question = "Assessment of carotid artery stenosis before coronary artery bypass surgery. Is it always necessary?"
    cohort = evidence_view(
        "40",
        "Carotid artery stenosis screening before coronary artery bypass surgery",
        "Patients were screened for carotid artery stenosis by duplex ultrasound before coronary artery bypass "
        "surgery. The screening changed the surgical plan only in patients with a carotid bruit.",
        "cohort",
        3,
        500,
    )
    unrelated = trial(
        "41",
        "RESULTS: Empagliflozin reduced hospitalisation for heart failure (HR 0.70, 95% CI 0.60 to 0.85).",
        "Empagliflozin in heart failure",
    )
    verdict = counted_verdict(question, strength_of(question, [cohort, unrelated]), [cohort, unrelated])
    assert (verdict.label, verdict.method) == ("no", METHOD)
    assert verdict.evidence_ids == [cohort.id]
    # Nothing on its key words: still insufficient.
    alone = counted_verdict(question, strength_of(question, [unrelated]), [unrelated])
    assert alone.label == "insufficient"
