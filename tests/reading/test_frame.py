"""Issue 23, item 1: the question's frame (population, intervention, comparator, outcomes), read in code with
its entities whole, and kept whole by every query a run builds in code or a model plans."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from deepcritical.appraisal.assessment import code_assessment
from deepcritical.appraisal.directness import frame_gaps
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.demo.models import demo_queries
from deepcritical.outputs import AspectScore, Assessment
from deepcritical.reading.frame import QuestionFrame, frame_question
from deepcritical.sources.query import to_pubmed_query, with_terms
from deepcritical.stages.search import fallback_queries
from deepcritical.stages.state import RunState
from helpers.builders import evidence_view


@pytest.mark.parametrize(
    ("question", "population", "intervention", "comparator", "outcomes"),
    [
        ("Do statins reduce mortality in sepsis?", "sepsis", "statins", None, ["mortality"]),
        (
            "Do SGLT2 inhibitors improve outcomes in heart failure?",
            "heart failure",
            "SGLT2 inhibitors",
            None,
            ["outcomes"],
        ),
        (
            "Does vitamin D supplementation prevent fractures in older adults?",
            "older adults",
            "vitamin D supplementation",
            None,
            ["fractures"],
        ),
        (
            "Does vitamin D supplementation prevent or treat depression?",
            None,
            "vitamin D supplementation",
            None,
            ["depression"],
        ),
        ("Can metformin be repurposed for Alzheimer's disease?", "Alzheimer's disease", "metformin", None, []),
        (
            "Does metformin lower HbA1c in patients with type 2 diabetes?",
            "type 2 diabetes",
            "metformin",
            None,
            ["HbA1c"],
        ),
        (
            "Does insulin glargine versus NPH insulin reduce hypoglycemia in type I diabetes?",
            "type I diabetes",
            "insulin glargine",
            "NPH insulin",
            ["hypoglycemia"],
        ),
        (
            "What is the effect of vitamin A on measles mortality in children?",
            "children",
            "vitamin A",
            None,
            ["measles mortality"],
        ),
        ("Is there an association between coffee and liver cancer?", None, "coffee", None, ["liver cancer"]),
        (
            "Is external palliative radiotherapy for gallbladder carcinoma effective?",
            "gallbladder carcinoma",
            "external palliative radiotherapy",
            None,
            [],
        ),
        (
            "Scapular stabilizer exercises are more effective than general exercise therapy in reducing pain.",
            None,
            "Scapular stabilizer exercises",
            "general exercise therapy",
            ["pain"],
        ),
        (
            "ALDH1 expression is associated with poor prognosis in breast cancer.",
            "breast cancer",
            "ALDH1 expression",
            None,
            ["poor prognosis"],
        ),
        (
            "Double balloon enteroscopy: is it safe in a community setting?",
            "community setting",
            "Double balloon enteroscopy",
            None,
            [],
        ),
        # A new user's: "for" an outcome is the outcome, not the population (it showed "Population: heart failure
        # hospitalisation" and "Population: mortality"); "for" a condition still opens the population.
        (
            "Is dapagliflozin better than placebo for heart failure hospitalisation?",
            None,
            "dapagliflozin",
            "placebo",
            ["heart failure hospitalisation"],
        ),
        ("Is rosuvastatin effective for mortality in sepsis?", "sepsis", "rosuvastatin", None, ["mortality"]),
        ("Is aspirin effective for stroke prevention?", None, "aspirin", None, ["stroke"]),
        # "for" a condition still opens the population.
        (
            "Is metformin better than sulfonylureas for type 2 diabetes?",
            "type 2 diabetes",
            "metformin",
            "sulfonylureas",
            [],
        ),
        # An equal comparison names its comparator after the second "as" (it was read as the outcome); a single
        # "as" is no comparison.
        (
            "Is laparoscopic surgery as effective as open surgery for rectal cancer?",
            "rectal cancer",
            "laparoscopic surgery",
            "open surgery",
            [],
        ),
        (
            "Is oral amoxicillin as safe as intravenous antibiotics in children with pneumonia?",
            "children with pneumonia",
            "oral amoxicillin",
            "intravenous antibiotics",
            [],
        ),
        ("Is aspirin as effective in women?", "women", "aspirin", None, []),
        # Two agents given together are one intervention: "a statin" was read as an outcome
        # (phases/22_library_trials.md).
        ("Does aspirin plus a statin reduce mortality?", None, "aspirin plus a statin", None, ["mortality"]),
        (
            "Does ibandronate plus a patient support programme change persistence compared with alendronate?",
            None,
            "ibandronate plus a patient support programme",
            "alendronate",
            ["persistence"],
        ),
        ("Does aspirin and a statin reduce stroke?", None, "aspirin and a statin", None, ["stroke"]),
        # "than" before a number is a threshold of the phrase it ends, not a comparator ("Comparator: 7 cm").
        (
            "Is laparoscopic adrenalectomy safe and effective for adrenal masses larger than 7 cm?",
            "adrenal masses larger than 7 cm",
            "laparoscopic adrenalectomy",
            None,
            [],
        ),
    ],
)
def test_a_question_is_read_into_its_frame_with_its_entities_whole(
    question: str, population: str | None, intervention: str, comparator: str | None, outcomes: list[str]
) -> None:
    frame = frame_question(question)
    assert (frame.population, frame.intervention, frame.comparator, frame.outcomes) == (
        population,
        intervention,
        comparator,
        outcomes,
    )
    assert not frame.open_intervention


@pytest.mark.parametrize(
    ("question", "population", "outcomes"),
    [
        ("What treatments reduce fatigue in long COVID?", "long COVID", ["fatigue"]),
        ("Which drugs are effective for long COVID?", "long COVID", []),
        ("What is the best therapy for gout?", "gout", []),
    ],
)
def test_a_what_or_which_question_has_an_open_intervention(question: str, population: str, outcomes: list[str]) -> None:
    frame = frame_question(question)
    assert frame.open_intervention
    assert frame.intervention is None
    assert (frame.population, frame.outcomes) == (population, outcomes)
    assert population in frame.required  # the searches keep the condition the question asks about
    assert "any (the question asks which)" in frame.summary()


def test_the_frame_is_frozen_and_its_terms_keep_short_words() -> None:
    frame = frame_question("Does vitamin D supplementation prevent fractures in older adults?")
    with pytest.raises(ValueError, match="frozen"):
        frame.intervention = "x"  # type: ignore[misc]
    assert frame.terms() == ["vitamin", "D", "supplementation", "fractures", "older", "adults"]
    assert frame.entities == ["vitamin D supplementation", "fractures", "older adults"]
    assert QuestionFrame.model_validate_json(frame.model_dump_json()) == frame
    assert frame.summary() == (
        "Population: older adults · Intervention: vitamin D supplementation · Outcomes: fractures"
    )


def test_a_question_that_names_only_outcomes_is_shown_as_asking_for_any_clinical_one() -> None:
    frame = frame_question("Do SGLT2 inhibitors improve outcomes in heart failure?")
    assert frame.outcomes == ["outcomes"]  # kept as written: the reader asks for a clinical outcome from it
    assert frame.summary().endswith("Outcomes: any clinical outcome")
    assert frame.model_dump()["headline"] == frame.summary()  # the page shows the report's words


@pytest.mark.parametrize(
    "question",
    [
        "Does kalomex offer protection?",
        "Does kalomex offer an advantage?",
        "Does kalomex bring an improvement?",
        "Kalomex: a feasible option?",
        "Is kalomex an effective adjuvant?",
    ],
)
def test_a_vague_benefit_noun_is_no_outcome_of_its_own_but_any_clinical_one(question: str) -> None:
    frame = frame_question(question)
    assert frame.intervention is not None
    assert "kalomex" in frame.intervention.lower()
    assert frame.summary().endswith("Outcomes: any clinical outcome")
    reader = StudyReader(question)
    assert not reader.specific_outcome  # any clinical outcome a study of kalomex reports answers it
    # so nothing but the intervention must be named for a study to be direct to the frame
    study = evidence_view("1", "Kalomex in sepsis", "Mortality was lower with kalomex.", "cohort", 3, 100)
    assert frame_gaps([study], reader) == []


def test_who_benefits_from_a_treatment_is_its_population_and_the_treatment_its_intervention() -> None:
    frame = frame_question("Do older adults with sepsis benefit from kalomex?")
    assert frame.intervention == "kalomex"
    assert frame.population is not None
    assert "sepsis" in frame.population
    titled = frame_question("Sepsis care: do older adults benefit from kalomex?")
    assert titled.intervention == "kalomex"


# Entities as questions name them: made-up words (no corpus's vocabulary), acronyms with digits, and names
# with a capital letter, a number or a Roman numeral in them ("vitamin D", "type 2 diabetes", "type I").
_SYLLABLES = ("ka", "lo", "mex", "tri", "zon", "vu", "dal", "pin", "sur", "gel", "obi", "nar")
_made_up = st.lists(st.sampled_from(_SYLLABLES), min_size=2, max_size=3).map("".join)
_acronym = st.from_regex(r"[A-Z]{2,4}[0-9]", fullmatch=True)
_tail = st.one_of(_made_up, st.from_regex(r"[A-Z]|[0-9]{1,2}|II|III", fullmatch=True))
_REAL = ("vitamin D", "SGLT2 inhibitors", "long COVID", "HbA1c", "type 2 diabetes", "heart failure", "vitamin A")
_REAL += ("hepatitis B vaccine", "type I diabetes", "omega-3 fatty acids", "older adults", "chronic kidney disease")


@st.composite
def entity(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return draw(st.sampled_from(_REAL))
    words = [draw(st.one_of(_made_up, _acronym))]
    words += draw(st.lists(_tail, max_size=2))
    return " ".join(words)


TEMPLATES = (
    "Does {i} reduce {o} in {p}?",
    "Do {i} improve {o} in patients with {p}?",
    "Does {i} prevent {o} among {p}?",
    "Can {i} be repurposed for {p}?",
    "Is {i} effective for {p}?",
    "Is {i} compared with placebo associated with {o} in {p}?",
    "What is the effect of {i} on {o} in {p}?",
    "Could {i} slow {o}?",
    "Does {i} prevent or treat {o}?",
    "{i} reduces {o} in {p}.",
    "Trial title: does {i} increase {o} in {p}?",
)


def _named(entity: str, query: str) -> bool:
    """Every word of ``entity`` stands as a word in ``query`` (case folded): "vitamin supplementation" does
    not name "vitamin D"."""
    words = {word.lower() for word in re.findall(r"[\w'\-]+", query)}
    return all(word.lower() in words for word in re.findall(r"[\w'\-]+", entity))


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    i=entity(),
    o=entity(),
    p=entity(),
    template=st.sampled_from(TEMPLATES),
    planned=st.lists(st.text(alphabet="abcdefgh D()", min_size=1, max_size=30), max_size=3),
    judge_queries=st.lists(
        st.sampled_from(("systematic review", "vitamin supplementation", "adverse effects")), max_size=2
    ),
    context=st.sampled_from(("", "Background on vitamin levels and receptor pathways in many tissues.")),
)
def test_no_word_of_an_entity_is_dropped_from_any_query(
    i: str, o: str, p: str, template: str, planned: list[str], judge_queries: list[str], context: str
) -> None:
    question = template.format(i=i, o=o, p=p)
    frame = frame_question(question)
    assert frame.intervention == i, question
    required = [i, p] if "{p}" in template else [i, o]
    assert all(entity in frame.required for entity in required), (question, frame)

    state = RunState(question=question)
    score = AspectScore(score=2, reason="Little.")
    state.assessments.append(
        Assessment(
            mechanism=score, clinical=score, safety=score, sufficient=False, confidence=0.2, next_queries=judge_queries
        )
    )
    built = [
        *fallback_queries(state),
        *code_assessment(question, []).next_queries,
        *(with_terms(query, frame.required) for query in planned),
    ]
    for iteration in (1, 2):
        brief = {"question": question, "iteration": iteration, "judge_next_queries": judge_queries}
        built += demo_queries(brief, [context] if context else [])
    assert built
    for query in built:
        for searched in (query, to_pubmed_query(query)):
            assert all(_named(entity, searched) for entity in required), (question, searched)


def test_real_questions_get_a_frame_whose_entities_are_in_the_question(shared_data: Callable[[str], Path]) -> None:
    """PubMedQA's 500 dev questions (titles written by authors): each has an intervention or an open one,
    and every entity is a piece of the question as written."""
    items = json.loads((shared_data("pubmedqa") / "pqal_dev.json").read_text(encoding="utf-8"))
    questions = [item["QUESTION"] for item in items.values()]
    framed = [(question, frame_question(question)) for question in questions]
    assert all(frame.intervention or frame.open_intervention for _, frame in framed)
    assert all(entity in question for question, frame in framed for entity in frame.entities)
    with_population = sum(frame.population is not None for _, frame in framed)
    assert with_population >= len(questions) // 4  # "in", "among", "for" ... are common in titles


# Aims are not things (issue 23 follow-up): "for the prevention or treatment of depression" is about depression.
AIMS = (
    "prevention",
    "treatment",
    "management",
    "prophylaxis",
    "primary prevention",
    "prevention or treatment",
    "treatment or prevention",
    "secondary prevention and management",
)
AIM_TEMPLATES = (
    "{i} for the {aim} of {c}",
    "{i} for {aim} of {c}.",
    "Is {i} effective for the {aim} of {c}?",
    "Is {i} safe and effective for {aim} of {c} in {p}?",
    "Does {i} help in the {aim} of {c}?",
    "Trial title: is {i} useful for the {aim} of {c}?",
)


@settings(max_examples=300, deadline=None)
@given(i=entity(), c=entity(), p=entity(), aim=st.sampled_from(AIMS), template=st.sampled_from(AIM_TEMPLATES))
def test_an_aim_is_never_the_population_and_what_it_aims_at_is_kept(
    i: str, c: str, p: str, aim: str, template: str
) -> None:
    assume(len({i.lower(), c.lower(), p.lower()}) == 3)
    question = template.format(i=i, c=c, aim=aim, p=p)
    frame = frame_question(question)
    assert frame.intervention == i, question
    assert not frame.population or frame.population.lower().split()[0] not in {"prevention", "treatment", "management"}
    if any(word in aim for word in ("prevention", "prophylaxis")):
        # What is prevented is an outcome; the people it is prevented in stay the population.
        assert c in frame.outcomes, (question, frame)
        assert frame.population == (p if "{p}" in template else None), (question, frame)
    else:
        assert frame.population == c, (question, frame)  # what is treated or managed: the people's condition
    assert c in frame.entities, (question, frame)
    if frame.population is None:
        assert c in frame.required, (question, frame)  # every search keeps it in the population's stead


@pytest.mark.parametrize(
    ("question", "population", "outcomes"),
    [
        ("Vitamin D supplementation for the prevention or treatment of depression", None, ["depression"]),
        ("Is vitamin D effective for the prevention of depression?", None, ["depression"]),
        (
            "Aspirin for primary prevention of cardiovascular disease in older adults",
            "older adults",
            ["cardiovascular disease"],
        ),
        ("Is aspirin effective for primary prevention in older adults?", "older adults", []),
        ("Statins for the treatment of sepsis", "sepsis", []),
        # "management" can be what is measured: an outcome is not an aim's population.
        ("Does positron emission tomography change management in rectal cancer?", "rectal cancer", ["management"]),
    ],
)
def test_an_aim_opens_its_object_and_is_shown_nowhere_as_a_population(
    question: str, population: str | None, outcomes: list[str]
) -> None:
    frame = frame_question(question)
    assert (frame.population, frame.outcomes) == (population, outcomes)
    assert "Population: prevention" not in frame.headline
    assert "Population: treatment" not in frame.headline


@pytest.mark.parametrize(
    ("question", "intervention", "comparator", "outcomes", "population"),
    [
        # A time point, however written, is when the outcome is measured: no outcome, no population.
        ("Does drug X reduce pain at 48 hours compared with placebo?", "drug X", "placebo", ["pain"], None),
        ("Does exercise improve walking distance at 6 to 12 months?", "exercise", None, ["walking distance"], None),
        ("Does zinc reduce diarrhoea at eight weeks compared with placebo?", "zinc", "placebo", ["diarrhoea"], None),
        # The setting a treatment is given at is part of it: two arms may differ by it alone.
        (
            "Does laser therapy at 810 nm reduce wound size compared with laser therapy at 630 nm?",
            "laser therapy at 810 nm",
            "laser therapy at 630 nm",
            ["wound size"],
            None,
        ),
        # "time to" an event is one outcome.
        (
            "Does early surgery reduce time to recovery compared with late surgery?",
            "early surgery",
            "late surgery",
            ["time to recovery"],
            None,
        ),
        # An instrument names the outcome another way; "the effect on" names none.
        (
            "Does yoga increase the effect on mood measured by the Beck Depression Inventory compared with rest?",
            "yoga",
            "rest",
            ["mood", "Beck Depression Inventory"],
            None,
        ),
        # A relative clause describes the outcome; "no dressing" is the comparator, not "dressing".
        (
            "Does a foam dressing increase the proportion of ulcers that are healed compared with no dressing?",
            "foam dressing",
            "no dressing",
            ["proportion of ulcers healed"],
            None,
        ),
        (
            "Does iron reduce moderate to severe anaemia compared with placebo?",
            "iron",
            "placebo",
            ["moderate to severe anaemia"],
            None,
        ),
    ],
)
def test_times_settings_and_qualifiers_are_no_outcome_or_population(
    question: str, intervention: str, comparator: str | None, outcomes: list[str], population: str | None
) -> None:
    frame = frame_question(question)
    assert (frame.intervention, frame.comparator, frame.outcomes, frame.population) == (
        intervention,
        comparator,
        outcomes,
        population,
    )
