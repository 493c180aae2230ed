"""Which outcome an estimate is about: the subject before a linking verb, the object after an active one, the
primary outcome as the text defines it; and which outcomes are the same (a composite is not its part)."""

from __future__ import annotations

import pytest

from deepcritical.reading.outcomes import outcome_key, outcome_of, outcomes_of, subgroup_of
from deepcritical.reading.statistics import read_effects

META = (
    "RESULTS: SGLT2 inhibitors reduced the composite of cardiovascular death or hospitalisation for heart failure "
    "(HR 0.77, 95% CI 0.72 to 0.82), first hospitalisation for heart failure (HR 0.72, 0.67 to 0.78), "
    "cardiovascular death (HR 0.87, 0.79 to 0.95) and all-cause death (HR 0.92, 0.86 to 0.99)."
)
TRIAL = (
    "The primary outcome was a composite of cardiovascular death or hospitalisation for heart failure. RESULTS: "
    "Over a median of 26.2 months, the primary outcome occurred in 13.8% of patients with empagliflozin and 17.1% "
    "with placebo (HR 0.79, 95% CI 0.69 to 0.90); cardiovascular death was not significantly reduced (HR 0.91, "
    "0.76 to 1.09). Use was associated with fewer heart failure hospitalizations (hazard ratio 0.79, 0.73 to 0.86)."
)


def at(text: str, estimate: str) -> int:
    return text.index(estimate)


@pytest.mark.parametrize(
    ("text", "estimate", "outcome"),
    [
        (META, "HR 0.77", "composite of cardiovascular death or hospitalisation for heart failure"),
        (META, "HR 0.72", "first hospitalisation for heart failure"),
        (META, "HR 0.87", "cardiovascular death"),
        (META, "HR 0.92", "all-cause death"),
        (TRIAL, "HR 0.79", "composite of cardiovascular death or hospitalisation for heart failure"),
        (TRIAL, "HR 0.91", "cardiovascular death"),
        (TRIAL, "hazard ratio 0.79", "heart failure hospitalizations"),
    ],
)
def test_the_outcome_is_read_from_the_words_before_the_estimate(text: str, estimate: str, outcome: str) -> None:
    assert outcome_of(text, at(text, estimate)) == outcome


def test_the_same_outcome_in_other_words_has_one_key_and_a_composite_is_not_its_part() -> None:
    hospitalisation = outcome_key("first hospitalisation for heart failure")
    assert outcome_key("heart failure hospitalizations") == hospitalisation
    assert outcome_key("all-cause mortality") == outcome_key("death from any cause") == outcome_key("all-cause death")
    composite = outcome_key("composite of cardiovascular death or hospitalisation for heart failure")
    assert composite != outcome_key("cardiovascular death")
    assert composite != hospitalisation
    assert outcome_key("cardiovascular death") != outcome_key("all-cause death")


def test_no_words_before_an_estimate_name_no_outcome() -> None:
    assert outcome_of("(HR 0.80, 95% CI 0.70 to 0.91)", 1) is None


# The demo corpus's own sentences, whose "Outcome" cell read "showed no effect on 28-day or", "gave a pooled
# adjusted", "by 9.7 words", "attenuated the estimate to", "Metformin" (issue 23, round 3, item 7): each cell
# is the outcome the estimate is for, or blank.
@pytest.mark.parametrize(
    ("text", "estimate", "outcome"),
    [
        (
            "RESULTS: Nine RCTs (2,275 patients; atorvastatin, simvastatin and rosuvastatin) showed no effect on "
            "28-day or in-hospital mortality (RR 0.98, 95% CI 0.84 to 1.14).",
            "RR 0.98",
            "28-day or in-hospital mortality",
        ),
        (
            "Twenty-seven observational studies (over 400,000 patients) gave a pooled adjusted OR of 0.65 (0.57 to "
            "0.75) with substantial heterogeneity.",
            "0.65",
            None,
        ),
        (
            "RESULTS: Sixty-day in-hospital mortality was 28.5% with rosuvastatin and 24.9% with placebo "
            "(difference 3.6 percentage points, 95% CI -2.8 to 10.0; p=0.21).",
            "28.5%",
            "Sixty-day in-hospital mortality",
        ),
        (
            "Former users, who had stopped statins more than 90 days before admission, also had lower mortality "
            "than never-users (HR 0.90, 0.82 to 0.99).",
            "HR 0.90",
            "mortality",
        ),
        (
            "The pooled relative risk (RR) of all-cause dementia was 0.80 (95% CI 0.71 to 0.90; I²=88%).",
            "0.80",
            "all-cause dementia",
        ),
        (
            "Total recall improved by 9.7 words with metformin and by 5.3 words with placebo (adjusted difference "
            "4.4, 95% CI 0.5 to 8.3; p=0.03).",
            "4.4",
            "Total recall",
        ),
        (
            "RESULTS: Metformin users showed a slower decline in posterior cingulate FDG uptake (-0.9% vs -1.7% per "
            "year; p=0.01).",
            "-0.9%",
            "decline in posterior cingulate FDG uptake",
        ),
        (
            "RESULTS: Long-term metformin use was associated with a higher risk of AD (adjusted OR 1.28, 95% CI 1.11 "
            "to 1.47), whereas short-term use was not (OR 1.03, 0.92 to 1.15).",
            "OR 1.03",
            None,
        ),
        (
            "Restricting the analysis to patients with recorded vitamin B12 measurements (n=5,210) attenuated the "
            "estimate to OR 1.16 (0.94 to 1.43).",
            "1.16",
            None,
        ),
        (
            "RESULTS: Metformin increased AMPK Thr172 phosphorylation 2.4-fold and reduced AT8-positive tau by 38% "
            "(p<0.01) in neurons.",
            "38%",
            "AT8-positive tau",
        ),
        (
            "RESULTS: Metformin reduced nuclear p65 in Iba1-positive cells by 44% and hippocampal IL-1β by 52% "
            "(p<0.001).",
            "44%",
            "nuclear p65",
        ),
        (
            "RESULTS: Overall, vitamin D reduced depressive symptoms slightly (SMD -0.32, 95% CI -0.45 to -0.19).",
            "-0.32",
            "depressive symptoms",
        ),
        (
            "RESULTS: Genetically predicted 25(OH)D was not associated with depression (OR 0.98 per standard "
            "deviation increase, 95% CI 0.93 to 1.04; p=0.55).",
            "0.98",
            "depression",
        ),
    ],
)
def test_the_outcome_cell_is_the_outcome_or_blank(text: str, estimate: str, outcome: str | None) -> None:
    (effect,) = [effect for effect in read_effects(text) if estimate in effect.quote]
    assert outcome_of(text, effect.start) == outcome


def test_an_outcome_at_another_time_point_is_another_outcome() -> None:
    assert outcome_key("28-day mortality") != outcome_key("90-day mortality")
    assert outcome_key("Thirty-day mortality") == outcome_key("30-day mortality")
    assert outcome_key("mortality at 28 days") == outcome_key("28-day mortality")
    assert outcome_key("28-day mortality") != outcome_key("mortality")


# A new user's faults (issue 23, phases/19): an estimate whose own words name no outcome read "–", a pooled
# subgroup's estimate was not read at all, and "had 15% more falls" read its subject as the outcome.
POOLED = (
    "Twelve cohorts were included. The pooled hazard ratio (HR) of stroke was 0.85 (95% CI 0.75 to 0.96; I²=70%).\n\n"
    "In the six cohorts at low risk of confounding the estimate was 0.97 (0.83 to 1.13; I²=12%). For haemorrhagic "
    "stroke specifically, the pooled HR was 1.10 (0.80 to 1.50)."
)


def test_an_estimate_whose_words_name_no_outcome_takes_its_topic_or_the_one_before() -> None:
    effects = [effect for effect in read_effects(POOLED) if effect.measure == "HR"]
    assert [(effect.value, effect.ci_low, effect.ci_high) for effect in effects] == [
        (0.85, 0.75, 0.96),
        (0.97, 0.83, 1.13),  # "the estimate was": the measure of the estimate before it
        (1.10, 0.80, 1.50),
    ]
    assert outcomes_of(POOLED, [effect.start for effect in effects]) == ["stroke", "stroke", "haemorrhagic stroke"]
    assert [subgroup_of(POOLED, effect.start) for effect in effects] == [
        None,
        "six cohorts at low risk of confounding",
        None,
    ]


@pytest.mark.parametrize(
    ("text", "outcomes", "subgroups"),
    [
        (  # the subject elided after "and": the effect before it, its outcome; the trials it is in, its subgroup
            "RESULTS: Drug Z lowered pain scores (SMD -0.40, 95% CI -0.60 to -0.20). The effect was larger in "
            "trials of people with arthritis (SMD -0.70) and was absent in general-practice trials (SMD -0.02, "
            "-0.10 to 0.06).",
            ["pain scores", "pain scores", "pain scores"],
            [None, "trials of people with arthritis", "general-practice trials"],
        ),
        (  # a count of studies as the subject: the pooled set; the outcome the methods say was pooled
            "METHODS: Readmission estimates were pooled by design. RESULTS: Eight RCTs showed no effect (RR 1.02, "
            "95% CI 0.90 to 1.15). Fifteen observational studies (over 90,000 patients) gave a pooled adjusted OR "
            "of 0.70 (0.60 to 0.81).",
            ["Readmission", "Readmission"],
            ["Eight RCTs", "Fifteen observational studies"],
        ),
        (  # "had N% more X": X; "and N% more Y (1.26, ...)": Y
            "RESULTS: Patients given drug Y had 20% fewer admissions (rate ratio 0.80, 95% CI 0.70 to 0.91) and "
            "12% more infections (1.12, 1.01 to 1.25) than controls.",
            ["admissions", "admissions", "infections", "infections"],  # each percent change, then its ratio
            [None, None, None, None],
        ),
        (  # a bracket its verb follows defines the subject; the outcome the text defines
            "METHODS: Incident frailty was defined as a score of 3 or more. RESULTS: Anaemia (haemoglobin below "
            "120 g/L, or below 130 g/L in men) was present in 18% and 9% (adjusted OR 2.2, 95% CI 1.5 to 3.2). "
            "Low levels were associated with a higher risk (HR 1.40, 95% CI 1.10 to 1.78).",
            ["Anaemia", "Incident frailty"],
            [None, None],
        ),
    ],
)
def test_what_each_estimate_is_about_is_read_from_its_text(
    text: str, outcomes: list[str], subgroups: list[str | None]
) -> None:
    effects = [effect for effect in read_effects(text) if effect.measure not in ("group_values", "p_only")]
    starts = [effect.start for effect in effects]
    ends = [0, *(effect.end for effect in effects)]
    assert outcomes_of(text, starts) == outcomes
    assert [subgroup_of(text, start, end) for start, end in zip(starts, ends[:-1], strict=True)] == subgroups


def test_an_estimate_whose_outcome_is_not_read_is_not_given_the_one_before() -> None:
    """A reviewer's case: the second estimate's words ("Major bleeding was lower") point back to nothing, so
    it must not be labelled with the first one's outcome, stroke; unread is better than wrong."""
    text = (
        "Stroke was less frequent (HR 0.79, 95% CI 0.66 to 0.94). Major bleeding was lower (HR 0.69, 95% CI 0.50 "
        "to 0.95)."
    )
    assert outcomes_of(text, [effect.start for effect in read_effects(text)]) == ["Stroke", None]


def test_a_long_outcome_is_read_whole_for_the_record_and_the_csv() -> None:
    # The table and the figures shorten it where they show it; the record (and so the CSV export) keeps it.
    outcome = (
        "composite of cardiovascular death or hospitalisation for heart failure or an urgent heart failure visit "
        "requiring intravenous diuretic therapy or nonfatal myocardial infarction or nonfatal stroke"
    )
    text = f"RESULTS: Drug X reduced the {outcome} (HR 0.80, 95% CI 0.70 to 0.91)."
    assert outcome_of(text, at(text, "HR 0.80")) == outcome
    assert len(outcome) > 120
