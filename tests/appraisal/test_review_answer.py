"""The answer a review would give (``appraisal.answer``), its GRADE certainty (``appraisal.certainty``) and the
label derived from it: stable under the question's wording, carried by direct studies only."""

from __future__ import annotations

import pytest

from deepcritical.appraisal.answer import asked_movement, label_of
from deepcritical.appraisal.directness import naming_the_intervention
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.risk_of_bias import is_randomised, risk_of_bias
from deepcritical.appraisal.strength import strength_of
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.appraisal.verdict import counted_verdict, reconciled
from deepcritical.outputs import Verdict
from deepcritical.reading.frame import frame_question
from helpers.builders import evidence_view


def trial(pmid: str, text: str, title: str, n: int = 200, design: str = "randomized_controlled_trial") -> EvidenceView:
    return evidence_view(pmid, title, text, design, 2 if design == "randomized_controlled_trial" else 3, n)


FEWER_DEATHS = trial(
    "1",
    "METHODS: 3,000 patients with heart failure were randomly assigned (computer-generated sequence, sealed opaque "
    "envelopes) to dapagliflozin or placebo in a double-blind trial. RESULTS: Death from any cause occurred in 9.0% "
    "with dapagliflozin and 12.1% with placebo (hazard ratio 0.74, 95% CI 0.62 to 0.88; P < 0.001).",
    "Dapagliflozin in patients with heart failure: a randomised trial",
    n=3000,
)
NO_DIFFERENCE = trial(
    "2",
    "METHODS: 250 adults with sepsis were randomised to simvastatin or placebo. RESULTS: 28-day mortality did not "
    "differ between simvastatin and placebo (22% vs 21%; relative risk 1.04, 95% CI 0.70 to 1.55; P = 0.81).",
    "Simvastatin in sepsis: a randomised trial",
    n=250,
)


def answer(question: str, studies: list[EvidenceView]) -> Verdict:
    return counted_verdict(question, strength_of(question, studies), studies)


INCREASE = "Does dapagliflozin increase death from any cause compared with placebo in heart failure?"
REDUCE = "Does dapagliflozin reduce death from any cause compared with placebo in heart failure?"


def test_one_direct_study_answers_and_increase_and_reduce_give_one_answer_and_opposite_labels() -> None:
    increase, reduce = answer(INCREASE, [FEWER_DEATHS]), answer(REDUCE, [FEWER_DEATHS])
    assert increase.answer == reduce.answer == "lower"
    assert (increase.label, reduce.label) == ("no", "yes")
    assert increase.evidence_ids == [FEWER_DEATHS.id]
    assert increase.certainty in ("high", "moderate")


def test_swapping_intervention_and_comparator_swaps_higher_and_lower() -> None:
    swapped = answer(
        "Does placebo increase death from any cause compared with dapagliflozin in heart failure?", [FEWER_DEATHS]
    )
    assert swapped.answer == "higher"


@pytest.mark.parametrize(
    "question",
    [
        "Does dapagliflozin help patients with heart failure?",
        "Does dapagliflozin improve outcomes in heart failure?",
        "Does dapagliflozin benefit patients with heart failure?",
    ],
)
def test_synonyms_of_benefit_give_the_same_answer(question: str) -> None:
    verdict = answer(question, [FEWER_DEATHS])
    assert verdict.answer == "lower"
    assert verdict.label == "yes"  # fewer deaths is what helping asks for


def test_a_trial_finding_no_difference_answers_no_difference_whichever_way_asked() -> None:
    for question in (
        "Does simvastatin increase 28-day mortality compared with placebo in sepsis?",
        "Does simvastatin reduce 28-day mortality compared with placebo in sepsis?",
    ):
        verdict = answer(question, [NO_DIFFERENCE])
        assert (verdict.answer, verdict.label) == ("no difference", "no")


def test_a_question_no_study_addresses_is_insufficient_naming_the_unmatched_intervention() -> None:
    verdict = answer("Does colchicine reduce cardiovascular events after myocardial infarction?", [FEWER_DEATHS])
    assert (verdict.answer, verdict.label) == ("insufficient data", "insufficient")
    assert "intervention (colchicine" in verdict.rationale


def test_grade_starts_high_for_trials_and_rates_down_with_reasons() -> None:
    trusted = answer(REDUCE, [FEWER_DEATHS])
    assert trusted.certainty == "high"
    assert trusted.certainty_reasons[0].startswith("GRADE starts high")
    small_open = trial(
        "3",
        "METHODS: 60 adults with sepsis were randomised in an open-label trial to simvastatin or placebo. RESULTS: "
        "28-day mortality was lower with simvastatin (10% vs 30%; P = 0.04).",
        "Simvastatin in sepsis: an open-label trial",
        n=60,
    )
    doubted = answer("Does simvastatin reduce 28-day mortality compared with placebo in sepsis?", [small_open])
    assert doubted.certainty == "very low"
    assert any(reason.startswith("risk of bias (-1)") and "blinding" in reason for reason in doubted.certainty_reasons)
    assert any(reason.startswith("imprecision (-2)") for reason in doubted.certainty_reasons)
    # One small open-label trial: its reading is stated, at very low certainty ("we are uncertain whether ...").
    assert (doubted.answer, doubted.label) == ("lower", "yes")


def test_risk_of_bias_reads_what_the_text_states_and_leaves_the_rest_unjudged() -> None:
    stated = risk_of_bias(FEWER_DEATHS.text, randomised=True)
    assert (stated.randomisation, stated.concealment, stated.blinding) == ("low", "low", "low")
    assert stated.attrition is None
    lost = risk_of_bias("Randomised, open-label. 32% were lost to follow-up.", randomised=True)
    assert lost.high == ["blinding", "attrition"]
    assert risk_of_bias("A cohort of 500 adults.", randomised=False).randomisation == "high"
    assert is_randomised("patients were randomly assigned to")
    assert not is_randomised("a quasi-randomised trial")


def test_the_label_follows_the_answer_and_what_the_question_asks() -> None:
    assert label_of("Does A increase pain compared with B?", "higher") == "yes"
    assert label_of("Does A reduce pain compared with B?", "higher") == "no"
    assert label_of("Does A improve survival compared with B?", "higher") == "yes"
    assert label_of("Does A reduce pain compared with B?", "uncertain effect") == "maybe"
    assert label_of("Does A reduce pain compared with B?", "insufficient data") == "insufficient"
    assert asked_movement("Does A prevent fractures?") == "lower"


def test_a_frame_reads_bracketed_abbreviations_and_times_as_no_entity() -> None:
    frame = frame_question(
        "Does six weeks of infant nevirapine increase the risk of infant mortality at 12 months compared with "
        "single-dose nevirapine (SD-NVP)?"
    )
    assert frame.outcomes == ["risk of infant mortality"]
    assert frame.population is None
    assert frame_question("Does Pancreatojejunostomy (PJ) increase the length of hospital stay?").outcomes == [
        "length of hospital stay"
    ]
    assert frame_question("Does MVA85A added to BCG increase tuberculosis compared with BCG alone?").intervention == (
        "MVA85A added to BCG"
    )


FASTER_HEALING = trial(
    "31",
    "METHODS: 400 adults with diabetic foot ulcers were randomly assigned to a collagen dressing or a standard "
    "dressing. RESULTS: More ulcers healed with the collagen dressing than with the standard dressing (hazard ratio "
    "for healing 1.52, 95% CI 1.21 to 1.91; P < 0.001).",
    "Collagen dressings for diabetic foot ulcers: a randomised trial",
    n=400,
)
LONGER_SURVIVAL = trial(
    "32",
    "METHODS: 300 patients with advanced gastric cancer were randomly assigned to brovacin or standard care. "
    "RESULTS: Deaths were fewer with brovacin than with standard care (hazard ratio for death 0.68, 95% CI 0.52 to "
    "0.89; P = 0.005).",
    "Brovacin in advanced gastric cancer: a randomised trial",
    n=300,
)


def test_a_hazard_ratio_of_the_event_moves_the_time_until_it_the_other_way() -> None:
    """More healing events (HR 1.52) is a shorter time to healing; fewer deaths (HR 0.68) a longer survival. The
    answer and the label follow: the increase and reduce wordings still agree."""
    time_to = "Does a collagen dressing reduce time to ulcer healing compared with a standard dressing?"
    assert answer(time_to, [FASTER_HEALING]).answer == "lower"
    assert answer(time_to, [FASTER_HEALING]).label == "yes"
    assert answer("Does brovacin increase overall survival compared with standard care?", [LONGER_SURVIVAL]).answer == (
        "higher"
    )
    # The event itself moves with its ratio.
    assert answer("Does brovacin reduce death compared with standard care?", [LONGER_SURVIVAL]).answer == "lower"


NO_MORE_COMPLICATIONS = trial(
    "3",
    "METHODS: 180 adults with adrenal masses were randomised to laparoscopic or open adrenalectomy. RESULTS: "
    "Postoperative complications did not differ between laparoscopic and open adrenalectomy (8% vs 9%; relative "
    "risk 0.89, 95% CI 0.35 to 2.25; P = 0.80).",
    "Laparoscopic versus open adrenalectomy: a randomised trial",
    n=180,
)


@pytest.mark.parametrize(
    "question",
    [
        "Is laparoscopic adrenalectomy safe and effective for adrenal masses?",
        "Is laparoscopic adrenalectomy a safe and effective alternative to open adrenalectomy?",
        "Is laparoscopic adrenalectomy as effective as open adrenalectomy in reducing postoperative complications?",
        "Can laparoscopic adrenalectomy be done without increasing postoperative complications?",
    ],
)
def test_no_difference_answers_yes_to_a_question_asking_whether_a_treatment_is_no_worse(question: str) -> None:
    verdict = answer(question, [NO_MORE_COMPLICATIONS])
    # No more complications is what "safe", "as effective as" or "without increasing" asks; the answer stays the
    # review's: no difference, not a better outcome.
    assert (verdict.answer, verdict.label) == ("no difference", "yes")


def test_a_question_asking_whether_a_treatment_is_better_is_still_no_to_no_difference() -> None:
    for question in (
        "Does laparoscopic adrenalectomy reduce postoperative complications compared with open adrenalectomy?",
        "Is laparoscopic adrenalectomy effective compared with open adrenalectomy?",
    ):
        assert answer(question, [NO_MORE_COMPLICATIONS]).label == "no"


def test_the_label_of_no_difference_depends_on_whether_the_question_asks_better_or_no_worse() -> None:
    assert label_of("Does A reduce complications compared with B?", "no difference") == "no"
    assert label_of("Is A safe compared with B?", "no difference") == "yes"
    assert label_of("Is A as effective as B?", "no difference") == "yes"
    assert label_of("Can some fractures be treated nonoperatively?", "no difference") == "yes"
    assert label_of("Is A a feasible alternative to B?", "no difference") == "yes"
    assert label_of("Is A safe compared with B?", "higher") == "no"  # more complications: not safe
    assert label_of("Is A safe compared with B?", "lower") == "yes"


def test_a_hyphen_joins_or_parts_the_same_words_of_the_intervention() -> None:
    joined = trial("4", "Double-balloon kalomex was given to 90 adults.", "Double-balloon kalomex in adults")
    parted = trial("5", "Double balloon kalomex was given to 90 adults.", "Double balloon kalomex in adults")
    spaced = StudyReader("Does double balloon kalomex reduce bleeding?")
    hyphenated = StudyReader("Does double-balloon kalomex reduce bleeding?")
    assert naming_the_intervention([joined], spaced) == [joined]
    assert naming_the_intervention([parted], hyphenated) == [parted]
    assert naming_the_intervention([FEWER_DEATHS], spaced) == []


def test_a_null_study_is_not_named_against_a_yes_to_a_question_asking_whether_it_is_no_worse() -> None:
    said_yes = Verdict(
        label="yes",
        confidence=0.8,
        evidence_ids=[NO_MORE_COMPLICATIONS.id],
        by="code",
        method="the stance model",
        probabilities={"yes": 0.8, "no": 0.2},
        rationale="pooled stance yes 0.8",
    )
    safe = "Is laparoscopic adrenalectomy safe?"
    kept = reconciled(said_yes, safe, strength_of(safe, [NO_MORE_COMPLICATIONS]))
    assert (kept.evidence_ids, kept.against_ids) == ([NO_MORE_COMPLICATIONS.id], [])
    better = "Does laparoscopic adrenalectomy reduce postoperative complications?"
    against = reconciled(said_yes, better, strength_of(better, [NO_MORE_COMPLICATIONS]))
    assert against.against_ids == [NO_MORE_COMPLICATIONS.id]
