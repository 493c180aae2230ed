"""The statistics reader's group values (reading/group_values.py) on the kinds of text round 2's labels found it
missing (phases/23_readers.md, section 6; each example written here, none from a benchmark). Each case failed
before its fix."""

from __future__ import annotations

import pytest

from deepcritical.reading.effects import Effect
from deepcritical.reading.statistics import read_effects


def groups_of(text: str) -> list[tuple[str, ...]]:
    return [effect.groups for effect in read_effects(text) if effect.measure == "group_values"]


def group_values(text: str) -> list[Effect]:
    return [effect for effect in read_effects(text) if effect.measure == "group_values"]


def test_a_mean_with_its_sd_named_in_brackets_is_a_group_value() -> None:
    text = "Recall scores were 9.3 (SD 3.4) and 7.1 (SD = 3.3) in the supplemented and control arms (p = 0.03)."
    (effect,) = group_values(text)
    assert effect.groups == ("9.3 (SD 3.4)", "7.1 (SD = 3.3)")
    assert effect.p == "=0.03"


def test_a_count_s_total_is_no_group_s_value() -> None:
    text = "Bleeding was no more frequent (41.0%, 25 of 61 vs. 30.2%, 19 of 63, RR = 1.36, 95% CI = 0.85-2.17)."
    assert groups_of(text) == [("41.0%, 25 of 61", "30.2%, 19 of 63")]


def test_a_versus_chain_whose_groups_are_named_after_their_values() -> None:
    text = "Nausea was rarer with the triple regimen (12 vs. 40% in the A group and 47% in the B group; P = 0.01)."
    assert groups_of(text) == [("12", "40%", "47%")]


def test_a_semicolon_ends_a_comparison_set_versus() -> None:
    text = (
        "Weight did not differ (5.1 ± 1.0 kg in arm A vs. 6.2 ± 1.1 kg in arm B at week 4; 4.8 ± 0.9 kg in arm A vs. "
        "6.0 ± 1.3 kg in arm B at week 8)."
    )
    assert groups_of(text) == [("5.1 ± 1.0 kg", "6.2 ± 1.1 kg"), ("4.8 ± 0.9 kg", "6.0 ± 1.3 kg")]


def test_one_group_s_change_in_two_units_is_not_two_groups() -> None:
    assert groups_of("Ferritin fell in the treated group (−40 ± 80 mg/L, −8.1 ± 15.0%, p = 0.2).") == []


@pytest.mark.parametrize(
    "text",
    [
        "In all, 70 (87.5%) patients of the A arm and 66 (82.5%) of the B arm completed the study.",
        "Of those screened, 120 (60%) and 118 (59%) were randomised to the two schedules.",
    ],
)
def test_participant_flow_is_not_a_result(text: str) -> None:
    assert groups_of(text) == []


def test_values_from_one_time_to_another_are_within_one_group() -> None:
    (effect,) = group_values("Serum IL-6 rose from 3.2 ± 1.1 to 6.8 ± 2.0 ng/ml in the treated group (p = 0.01).")
    assert effect.within_group
    assert not effect.compares_arms


def test_two_groups_set_side_by_side_still_compare_the_arms() -> None:
    (effect,) = group_values("Pain scores were 3.2 ± 1.1 in the A group and 4.8 ± 2.0 in the B group (p = 0.01).")
    assert not effect.within_group
    assert effect.compares_arms


# The second fold's kinds (the abstracts: PubMedQA, MedEvidence).


def test_a_vaccine_efficacy_is_a_fall_in_risk() -> None:
    (effect,) = [e for e in read_effects("It gave a vaccine efficacy of 21.5% (95% CI -12.0 to 45.1).") if e.ci_low]
    assert (effect.measure, effect.value, effect.ci_low, effect.ci_high) == ("percent_change", -21.5, -45.1, 12.0)


def test_a_ratio_of_means_is_a_ratio() -> None:
    (effect,) = [
        e for e in read_effects("Fewer mites were caught (ratio of means 0.62, 95% CI 0.50-0.77).") if e.ci_low
    ]
    assert (effect.measure, effect.value) == ("RR", 0.62)


def test_a_bare_ratio_restating_a_percent_change_is_an_estimate() -> None:
    text = (
        "Risk was 20% lower (relative risk 0.80 [95% CI 0.61-1.05]). "
        "Deaths fell by 30% in the treated arm (0.70 [0.52-0.94])."
    )
    estimates = [(e.measure, e.value, e.ci_low, e.ci_high) for e in read_effects(text) if e.ci_low is not None]
    assert estimates == [("RR", 0.80, 0.61, 1.05), ("RR", 0.70, 0.52, 0.94)]


def test_a_corrected_p_is_a_p() -> None:
    found = [e.p for e in read_effects("The variant was associated with HDL (p = 0.030; pC = 0.210).")]
    assert found == ["=0.030", "=0.210"]


@pytest.mark.parametrize(
    ("text", "groups"),
    [
        ("Leaks were more frequent after suture (14 of 50 versus 6 of 52; P = 0.04).", ("14 of 50", "6 of 52")),
        (
            "Falls were 0.21 per person-year in the A group and 0.15 per person-year in the B group.",
            ("0.21 per person-year", "0.15 per person-year"),
        ),
    ],
)
def test_counts_of_a_total_and_rates_per_unit_are_groups(text: str, groups: tuple[str, ...]) -> None:
    assert groups_of(text) == [groups]


def test_a_sentence_starting_with_a_number_ends_the_comparison_before_it() -> None:
    text = (
        "Pain was commoner with the drug (120 [80%]) than with placebo (95 [63%]). "
        "22 serious events occurred, 11 (7%) in each arm."
    )
    assert groups_of(text) == [("120 [80%]", "95 [63%]")]


def test_each_group_s_change_by_an_amount_is_within_its_group() -> None:
    (effect,) = group_values(
        "The score fell after 4 weeks by 2.1 ± 0.4 points in A and 1.2 ± 0.5 points in B (P = 0.03)."
    )
    assert effect.within_group


@pytest.mark.parametrize(
    "text",
    [
        "Detectable differences ranged between 12% and 40% across centres.",
        "The test had a sensitivity of 88% and a specificity of 71% (PPV 64.0%, NPV 90.5%).",
        "Tumours were in the head (40%), the trunk (35%) and the limbs (25%).",
    ],
)
def test_a_range_a_test_s_accuracy_and_one_group_s_distribution_are_not_groups(text: str) -> None:
    assert groups_of(text) == []


def test_from_one_value_to_another_without_one_group_named_compares_the_arms() -> None:
    (effect,) = group_values("In 90 patients, the drug reduced relapse from 31% to 9% (p=0.01).")
    assert not effect.within_group
    assert effect.compares_arms
