"""The statistics reader on the kinds of text issue 39 found it missing (each example written here, none from a
benchmark), and each result in context: what it measures, its unit, its interval's level and sides, and whether it
compares the arms (phases/23_readers.md). Each case failed before its fix."""

from __future__ import annotations

import pytest

from deepcritical.reading.effects import Effect
from deepcritical.reading.statistics import read_effects


def results(text: str) -> list[Effect]:
    return [effect for effect in read_effects(text) if effect.measure != "p_only"]


def only(text: str) -> Effect:
    found = results(text)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("text", "value", "p"),
    [
        ("Ticagrelor reduced the occurrence of the primary outcome (death or stroke) by 21% (p=0.02).", -21.0, "=0.02"),
        ("The outreach programme cut admissions by more than 40% (p<0.001).", -40.0, "<0.001"),
        ("Statins lowered the rate of first events (fatal or not) by an estimated 18% (p = 0.03).", -18.0, "=0.03"),
        ("Calls increased uptake by less than 5% (p = 0.2).", 5.0, "=0.2"),  # "less than" hedges a rise
    ],
)
def test_a_percent_change_after_a_bracket_or_a_hedge_is_read_with_its_sign(text: str, value: float, p: str) -> None:
    effect = only(text)
    assert (effect.measure, effect.value, effect.p, effect.unit) == ("percent_change", value, p, "%")


def test_a_difference_with_its_unit_and_a_bracketed_interval() -> None:
    effect = only("The between-group difference in weight at one year was 3.1 kg [-0.8 to 7.0].")
    assert (effect.measure, effect.value, effect.ci_low, effect.ci_high, effect.unit) == ("MD", 3.1, -0.8, 7.0, "kg")
    assert effect.significant is False


def test_a_fall_with_its_interval_is_a_negative_difference() -> None:
    effect = only(
        "Diastolic pressure fell by 6.4 mmHg (95% CI −8.0 to −4.9) more with the combination than with placebo."
    )
    assert (effect.measure, effect.value, effect.ci_low, effect.ci_high, effect.unit) == (
        "MD",
        -6.4,
        -8.0,
        -4.9,
        "mmHg",
    )
    assert effect.significant is True
    reduced = only("Falls were reduced by 24% (95% CI: 3 to 41%) among those given the programme.")
    assert (reduced.measure, reduced.value, reduced.ci_low, reduced.ci_high) == ("percent_change", -24.0, -41.0, -3.0)


def test_each_arms_change_is_a_change_within_that_arm() -> None:
    text = "Physiotherapy shortened recovery by a mean of 2.3 weeks (p = 0.004) in one arm and 1.9 weeks in the other."
    effect = only(text)
    assert effect.measure == "group_values"
    assert effect.groups == ("2.3 weeks", "1.9 weeks")
    assert effect.within_group
    assert not effect.compares_arms


def test_a_standard_error_before_the_interval_is_not_the_estimate() -> None:
    effect = only("The slope differed by 0.61 ± 0.40 points/month (95% CI −0.17 to 1.39) between the arms.")
    assert (effect.value, effect.ci_low, effect.ci_high, effect.unit) == (0.61, -0.17, 1.39, "points/month")


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("The risk difference was 0.02 (one-sided 97.5% CI −0.05 to 1), within the margin.", 97.5),
        ("The risk difference was 0.02 (97.5% one-sided CI −0.05 to 1), within the margin.", 97.5),
    ],
)
def test_a_one_sided_interval_says_so(text: str, level: float) -> None:
    effect = only(text)
    assert (effect.measure, effect.ci_level, effect.ci_sides) == ("RD", level, 1)
    two_sided = only("The risk difference was 0.02 (95% CI −0.05 to 0.09).")
    assert two_sided.ci_sides == 2


def test_one_groups_mean_with_its_interval_compares_nothing() -> None:
    effect = only("The mean anxiety score before surgery was 41.2 (95% CI 39.9–42.5).")
    assert effect.measure == "group_values"
    assert not effect.compares_arms
    assert only("The hazard ratio was 0.77 (95% CI 0.72-0.82).").compares_arms


def test_an_effect_size_in_e_notation_is_read_whole() -> None:
    effect = only("The odds ratio per allele was 2.5e-3 (95% CI 1.1e-3 to 5.0e-3; p = 3e-5).")
    assert (effect.measure, effect.value, effect.ci_low, effect.ci_high, effect.p) == (
        "OR",
        0.0025,
        0.0011,
        0.005,
        "=3e-5",
    )


def test_each_groups_value_with_its_interval_joined_by_versus_is_no_estimate() -> None:
    text = "Weight fell more with diet A (−5.1 [95% CI −5.8, −4.3] kg vs. −3.9 [95% CI −4.6, −3.2] kg; p = 0.01)."
    effect = only(text)
    assert effect.measure == "group_values"
    assert len(effect.groups) == 2
    assert effect.p == "=0.01"


def test_pairs_of_group_values_are_split_at_their_p_values() -> None:
    text = (
        "Sensitivity was higher with the new test (91.0% [95% CI, 85.0%-97.0%] vs 70.0% [95% CI, 60.0%-80.0%]; "
        "P < .001), and so was specificity (88.0% [95% CI, 86.0%-90.0%] vs 80.0% [95% CI, 78.0%-82.0%]; P = .02)."
    )
    found = results(text)
    assert [(e.measure, len(e.groups), e.p) for e in found] == [
        ("group_values", 2, "<0.001"),
        ("group_values", 2, "=0.02"),
    ]


def test_more_than_two_groups_joined_by_versus_are_one_result() -> None:
    text = "Scores rose over the year (10.1 ± 2.0 vs. 11.4 ± 2.2 vs. 12.0 ± 1.9 vs. 12.8 ± 2.1, p = 0.03)."
    assert only(text).groups == ("10.1 ± 2.0", "11.4 ± 2.2", "12.0 ± 1.9", "12.8 ± 2.1")


def test_p_values_listed_respectively_are_each_read() -> None:
    text = "Neither forced volume nor capacity changed in either group (p = 0.23 and 0.58, respectively)."
    assert [e.p for e in read_effects(text)] == ["=0.23", "=0.58"]
    listed = "Values differed from the other groups (P<.001, 0.013, and .037, respectively)."
    assert [e.p for e in read_effects(listed)] == ["<0.001", "=0.013", "=0.037"]
    assert [e.p for e in read_effects("The trial ran at 2 sites (p = 0.04), 3 and 4 weeks apart.")] == ["=0.04"]


def test_a_difference_in_percent_of_two_rates_is_a_risk_difference() -> None:
    effect = only("The difference in response rates was 12.5% (95% CI 4.1% to 20.9%).")
    assert (effect.measure, effect.value, effect.unit) == ("RD", 12.5, "%")


def test_one_arms_change_from_baseline_with_its_interval_compares_nothing() -> None:
    effect = only("The mean change from baseline in the drug X group was −3.2 mmHg (95% CI −4.0 to −2.4).")
    assert effect.measure == "MD"
    assert effect.within_group
    assert not effect.compares_arms
    between = only("The mean change from baseline differed between the groups by −1.1 mmHg (95% CI −1.9 to −0.3).")
    assert between.compares_arms


def test_one_comparisons_values_stand_in_one_sentence() -> None:
    text = "Accumulation was seen in 40% of tumours, mutation in 35% and either in 46%. The shrinkage was 53% in one."
    # The rules' clustering (the number tagger, reading/number_tagger.py, then judges these three one group's
    # categories rather than groups' values, and drops them: tests/reading/test_number_tagger.py).
    by_rules = read_effects(text, None)
    assert [e.groups for e in by_rules if e.measure == "group_values"] == [("40%", "35%", "46%")]


def test_a_groups_count_named_in_words_before_its_group() -> None:
    text = "In all, 18 deaths were reported in the anastrozole group and 17 in the placebo group."
    assert only(text).groups == ("18 deaths", "17")


def test_values_over_time_from_baseline_are_within_one_group() -> None:
    effect = only("Scores improved over the year (baseline 12.9 ± 2.9 vs. 14.7 ± 2.6 vs. 15.8 ± 2.1, p = 0.02).")
    assert effect.within_group


def test_two_results_after_compared_with_across_a_semicolon_stay_two_estimates() -> None:
    # A new user's text: "compared with placebo; NNT 12" joined the difference and the NNT as two groups' values.
    found = results(
        "Mean systolic blood pressure fell by 8.2 mmHg (95% CI -11.0 to -5.4) compared with placebo; "
        "NNT 12 (95% CI 7 to 40)."
    )
    assert [(e.measure, e.value, e.ci_low, e.ci_high) for e in found] == [
        ("MD", -8.2, -11.0, -5.4),
        ("NNT", 12.0, 7.0, 40.0),
    ]


def test_a_second_groups_range_after_an_iqr_is_a_groups_value_not_a_difference() -> None:
    # "7 [5-10]" after "[IQR 4-9] vs" was read as a mean difference of 7 (95% CI 5 to 10).
    effect = only("No significant difference in length of stay (median 6 [IQR 4-9] vs 7 [5-10] days, p = NS).")
    assert (effect.measure, effect.groups, effect.p) == ("group_values", ("6 [IQR 4-9]", "7 [5-10]"), "NS")
