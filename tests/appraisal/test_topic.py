"""The topic filter reads the question's frame (issue 23): an item is on the topic when it names the frame's
intervention and one of its outcomes or its population (softly for a group of people), in its title, text or
MeSH terms; the words that only say how the question is put ("supplementation", "prevent", "adults") are
not required; a claim, or a question with no frame, keeps the two-thirds rule. The fault cases failed with
the 2/3 rule."""

from __future__ import annotations

from dataclasses import replace

import pytest

from deepcritical.appraisal import stance
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.strength import strength_of
from deepcritical.appraisal.topic import on_topic, topic_of
from deepcritical.appraisal.verdict import COUNTED_METHOD, counted_verdict
from helpers.builders import THALIDOMIDE, THALIDOMIDE_RESULTS, evidence_view, fixed_stance

FRACTURES = "Does vitamin D supplementation prevent fractures in older adults?"
SGLT2 = "Do SGLT2 inhibitors improve outcomes in heart failure?"

FALLS_TRIAL = evidence_view(
    "506",
    "Annual high-dose oral vitamin D and falls, fractures and mood in older women: a randomised trial",
    "RESULTS: Women receiving vitamin D had 15% more falls (rate ratio 1.15, 95% CI 1.02 to 1.30) and 26% more "
    "fractures (1.26, 1.00 to 1.59) than those receiving placebo.",
    "randomized_controlled_trial",
    2,
    2256,
)
DEPRESSION_TRIAL = evidence_view(
    "503",
    "Effect of long-term vitamin D3 supplementation on the risk of depression in adults",
    "RESULTS: Vitamin D supplementation did not prevent depression (HR 0.97, 95% CI 0.87 to 1.09).",
    "randomized_controlled_trial",
    2,
    18353,
)
EMPAGLIFLOZIN = evidence_view(
    "402",
    "Empagliflozin in heart failure with preserved ejection fraction: a randomised trial",
    "RESULTS: The primary outcome occurred in 13.8% with empagliflozin and 17.1% with placebo (HR 0.79, 95% CI "
    "0.69 to 0.90).",
    "randomized_controlled_trial",
    2,
    5988,
)
CLASS_MESH = ("Heart Failure", "Humans", "Sodium-Glucose Transporter 2 Inhibitors", "Stroke Volume")


def test_a_trial_naming_the_intervention_and_outcome_is_on_topic_in_a_narrower_population() -> None:
    # "older women", not "older adults"; "vitamin D", not "vitamin D supplementation": 3 of 6 key words.
    assert on_topic(FALLS_TRIAL, topic_of(FRACTURES))
    counted = strength_of(FRACTURES, [FALLS_TRIAL, DEPRESSION_TRIAL])
    assert "pmid:506" in counted.counted
    assert counted.directions["pmid:506"] == "unfavourable"  # 26% more fractures, on a question of preventing them


def test_a_drug_class_named_only_in_the_mesh_terms_is_named() -> None:
    topic = topic_of(SGLT2)
    assert not on_topic(EMPAGLIFLOZIN, topic)  # the abstract names only empagliflozin
    indexed = replace(EMPAGLIFLOZIN, mesh=CLASS_MESH)
    assert on_topic(indexed, topic)  # the index spells out SGLT2: Sodium-GLucose Transporter 2
    counted = strength_of(SGLT2, [indexed])
    assert counted.counted == ["pmid:402"]
    assert counted.directions["pmid:402"] == "favourable"


def test_another_class_in_the_mesh_terms_does_not_name_the_intervention() -> None:
    ace = replace(EMPAGLIFLOZIN, mesh=("Heart Failure", "Angiotensin-Converting Enzyme Inhibitors"))
    assert not on_topic(ace, topic_of(SGLT2))


@pytest.mark.parametrize(
    ("title", "on"),
    [
        ("Vitamin D and fractures in elderly people", True),  # an age word of the same group
        ("Vitamin D and mood in older people", True),  # the population, without the outcome
        ("Vitamin D and mood in adults aged 18 to 65", False),
        (
            "Vitamin D and pain after shoulder surgery",
            False,
        ),  # "older" is a word, not a part of "shoulder"  # "adults" alone is anyone; "aged 18" no age group
        ("Vitamin B12 and fractures in older adults", False),  # another vitamin: "D" is part of the phrase
        ("Vitamin D3 and hip fractures", True),  # vitamin D3 is vitamin D
        ("Supplementation and fracture prevention in older adults", False),  # no vitamin D at all
    ],
)
def test_the_frame_s_words_decide_not_the_question_s(title: str, on: bool) -> None:
    item = evidence_view("9", title, "", "cohort", 3, 100)
    assert on_topic(item, topic_of(FRACTURES)) is on


def test_a_trial_reporting_deaths_answers_a_mortality_question_and_one_of_muscle_injury_concerns_its_people() -> None:
    topic = topic_of("Do statins reduce mortality in sepsis?")
    deaths = evidence_view("1", "Statins in septic shock", "Fewer patients died with simvastatin.", "cohort", 3, 100)
    elsewhere = evidence_view("2", "Statins and mortality after myocardial infarction", "", "cohort", 3, 100)
    unrelated = evidence_view("3", "Mortality in sepsis with beta-blockers", "", "cohort", 3, 100)
    assert on_topic(deaths, topic)
    assert on_topic(elsewhere, topic)  # the outcome, in other people: the study reader says it is indirect
    assert not on_topic(unrelated, topic)


def test_a_claim_keeps_the_two_thirds_rule() -> None:
    # A claim's subject is often no intervention ("Women with a lower birth weight"): its key words decide.
    claim = "Vitamin D supplementation prevents fractures in older adults."
    assert not topic_of(claim).intervention
    assert on_topic(
        evidence_view("1", "Supplementation and fracture prevention in older adults", "", "cohort", 3, 9),
        topic_of(claim),
    )


def test_an_open_question_is_about_its_people_and_its_outcome() -> None:
    question = "What treatments reduce fatigue in long COVID?"  # an open intervention: any is about it
    assert not topic_of(question).intervention
    named = evidence_view("1", "Fatigue in long COVID: a cohort", "", "cohort", 3, 100)
    partly = evidence_view("2", "Fatigue after influenza", "", "cohort", 3, 100)
    other_outcome = evidence_view("3", "Sleep in long COVID: a cohort", "", "cohort", 3, 100)
    assert on_topic(named, topic_of(question))
    assert not on_topic(partly, topic_of(question))
    assert not on_topic(other_outcome, topic_of(question))  # its people, not the question's outcome
    # Issue 23 (a new user): a metformin safety review that mentions "decompensated heart failure" once, and no
    # hospitalisation, named two thirds of the question's key words and was counted.
    question = "Which drugs reduce hospitalisation in heart failure?"
    review = evidence_view(
        "111",
        "Safety of metformin in older adults: a narrative review",
        "Lactic acidosis is concentrated in people with acute kidney injury, sepsis or decompensated heart failure.",
        "narrative_review",
        5,
        0,
    )
    trial = evidence_view(
        "401",
        "Dapagliflozin in patients with heart failure and reduced ejection fraction",
        "The primary outcome was a composite of worsening heart failure (hospitalisation or an urgent visit) or "
        "cardiovascular death.",
        "randomized_controlled_trial",
        2,
        4744,
    )
    assert not on_topic(review, topic_of(question))
    assert on_topic(trial, topic_of(question))
    # Without an outcome of its own, its people alone.
    assert on_topic(review, topic_of("Which drugs help in heart failure?"))


def test_one_randomised_trial_answers_whatever_the_stance_model_says(monkeypatch: pytest.MonkeyPatch) -> None:
    # One direct study is enough (issue 38): its reading (26% more fractures) gives the answer, and the stance
    # model's "yes" never overrides it.
    monkeypatch.setattr(stance, "stance_model", lambda: fixed_stance(0.6, 0.3, 0.1))
    pool: list[EvidenceView] = [FALLS_TRIAL, DEPRESSION_TRIAL]
    verdict = counted_verdict(FRACTURES, strength_of(FRACTURES, pool), pool)
    assert (verdict.answer, verdict.label) == ("higher", "no")
    assert verdict.method == COUNTED_METHOD
    assert verdict.evidence_ids == [FALLS_TRIAL.id]
    # A cohort's reading answers too, from a lower start (GRADE: observational studies start low).
    cohort = replace(FALLS_TRIAL, design="cohort", level=3)
    pool = [cohort, DEPRESSION_TRIAL]
    from_cohort = counted_verdict(FRACTURES, strength_of(FRACTURES, pool), pool)
    assert from_cohort.answer == "higher"
    assert from_cohort.certainty in ("low", "very low")


def test_the_dose_schedule_and_route_of_an_intervention_are_not_required_of_a_study() -> None:
    # "100 mg ... daily": the results passage names thalidomide, not the dose the question copied from the methods.
    assert topic_of(THALIDOMIDE).intervention == ("thalidomide",)
    assert on_topic(THALIDOMIDE_RESULTS, topic_of(THALIDOMIDE))
    assert topic_of("Does 80 mg of intramuscular triamcinolone reduce pain?").intervention == ("triamcinolone",)
    # A duration or a number of doses written in words is one too: "six months of metformin" (the passage says
    # "metformin", not "months"), "two doses of HPV vaccine"; a word that only begins with a number stays.
    assert topic_of("Does six months of metformin reduce weight in adolescents?").intervention == ("metformin",)
    assert topic_of("Do two doses of HPV vaccine prevent cervical cancer?").intervention == ("HPV", "vaccine")
    assert topic_of("Does one-stage surgery improve survival in cancer?").intervention == ("one-stage", "surgery")
    # A number that names rather than doses stays: "station 9", "protein 1".
    assert "9" in topic_of("Does dissection of station 9 lymph nodes improve survival?").intervention


GDFR = "Does intraoperative goal-directed fluid restriction (GDFR) change lactate compared with usual care?"


def test_an_abbreviation_the_question_defines_for_its_intervention_names_it() -> None:
    results = replace(
        THALIDOMIDE_RESULTS,
        text="Lactate at the end of surgery was lower in the GDFR group (1.1 vs 1.6 mmol/L, p = 0.01).",
    )
    assert on_topic(results, topic_of(GDFR))
    # Not as a piece of another word, nor an abbreviation the question defines for something else.
    assert not on_topic(replace(results, text="Lactate was lower with GDFRX (p = 0.01)."), topic_of(GDFR))
    assert not on_topic(
        results, topic_of("Does goal-directed fluid restriction change lactate compared with usual care (UC)?")
    )


def test_a_study_is_on_the_topic_by_all_its_collected_passages_together() -> None:
    # The results passage writes "the IE diet" where the abstract, collected beside it, names interesterified fat.
    question = "Does interesterified fat change fasting glucose compared with palm olein?"
    abstract = replace(
        THALIDOMIDE_RESULTS,
        id="file:ie#0",
        title="Interesterified fat and glucose metabolism: a randomised crossover trial",
        text="We compared interesterified fat (IE) with palm olein (POL) in 30 healthy adults over 4 weeks.",
        section="Abstract",
        document="file:ie",
    )
    results = replace(
        abstract,
        id="file:ie#9",
        title="A randomised crossover trial of dietary fats",
        text="Fasting glucose rose by 20% on the IE diet compared with POL (p < 0.001).",
        section="Results",
    )
    assert not on_topic(results, topic_of(question))  # alone, the passage does not name the intervention
    counted = strength_of(question, [abstract, results])
    assert not counted.off_topic
    assert counted.counted == ["file:ie#9"]  # the study is read by its results passage
    assert counted.directions["file:ie#9"] is not None
