"""Which outcome an estimate is about: the subject before a linking verb, the object after an active one, the
primary outcome as the text defines it; and which outcomes are the same (a composite is not its part)."""

from __future__ import annotations

import pytest

from deepcritical.reading.outcomes import outcome_key, outcome_of

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
