"""The statistics reader on the kinds of text round 3's labels found it missing (phases/23_readers.md, section 7;
each example written here, none from a benchmark or the labelled texts). Each case failed before its fix."""

from __future__ import annotations

from deepcritical.reading.effects import Effect
from deepcritical.reading.statistics import read_effects


def estimates(text: str) -> list[Effect]:
    return [e for e in read_effects(text) if e.measure not in ("group_values", "p_only")]


def test_a_ratio_of_rates_is_a_ratio() -> None:
    text = "The ratio of fall rates for the exercise group compared to the control group was 0.81 (95% CI, 0.66-0.99)."
    (effect,) = estimates(text)
    assert (effect.measure, effect.value, effect.ci_low, effect.ci_high) == ("RR", 0.81, 0.66, 0.99)


def test_an_interval_said_to_be_the_measure_s() -> None:
    (effect,) = estimates("Grade was the only prognostic factor (HR = 4, 95%CI of HR = 1.5-10.7).")
    assert (effect.measure, effect.value, effect.ci_low, effect.ci_high, effect.ci_level) == ("HR", 4, 1.5, 10.7, 95)


def test_a_bracketed_interval_after_a_change_by_a_value_with_its_unit() -> None:
    (effect,) = estimates("Systolic pressure differed by 2.7 mmHg [-1.1 to 6.4] between the arms.")
    assert (effect.measure, effect.value, effect.unit, effect.ci_low, effect.ci_high) == ("MD", 2.7, "mmHg", -1.1, 6.4)
    assert effect.significant is False
    assert effect.compares_arms


def test_a_median_and_its_range_stay_a_group_s_value() -> None:
    assert estimates("Stay was 4.0 days (2.0-6.0) with the drug and 5.0 days (3.0-7.0) with placebo.") == []


def test_a_change_against_a_comparator_named_after_it_is_an_estimate() -> None:
    text = "At 12 months the cream increased skin hydration (7.2% [CI 1.1 to 13.3%]; p = 0.02) compared to the vehicle."
    (effect,) = estimates(text)
    assert (effect.value, effect.ci_low, effect.ci_high, effect.p) == (7.2, 1.1, 13.3, "=0.02")
    assert effect.measure == "MD"
    assert effect.compares_arms


def test_each_group_s_value_with_its_interval_is_not_an_estimate() -> None:
    text = "Mortality was 12% in the treated group (95% CI 9-15%) and 18% in the control group (95% CI 14-22%)."
    assert estimates(text) == []
    assert [e.groups for e in read_effects(text)] == [("12%", "18%")]


def groups_of(text: str) -> list[tuple[str, ...]]:
    return [e.groups for e in read_effects(text) if e.measure == "group_values"]


def test_a_semicolon_after_groups_named_after_their_values_ends_their_comparison() -> None:
    text = (
        "Efficacy held (responses in the main set: 54.1% in AB2 and 56.0% in REF; responses in the full set: 53.6% "
        "in AB2 and 55.3% in REF)."
    )
    assert groups_of(text) == [("54.1%", "56.0%"), ("53.6%", "55.3%")]


def test_respectively_ends_a_comparison_and_numbers_naming_time_points_are_no_values() -> None:
    text = "Residues were high (76% and 74% in years 1 and 4, respectively) and in cars (75% and 73% in years 1 and 4)."
    assert groups_of(text) == [("76%", "74%"), ("75%", "73%")]


def test_each_arm_s_change_named_before_its_values_is_within_the_arm() -> None:
    text = (
        "Scores fell in both arms (mean change ± SD of -6.1 ± 4.2 for placebo vs -5.9 ± 6.0 for the vaccine, p=0.61)."
    )
    (effect,) = [e for e in read_effects(text) if e.measure == "group_values"]
    assert effect.groups == ("-6.1 ± 4.2", "-5.9 ± 6.0")
    assert effect.within_group
    assert not effect.compares_arms


def test_changes_said_to_be_compared_between_the_arms_compare_the_arms() -> None:
    text = "Grip strength change did not differ (-1.2 vs -0.4 kg; p=0.38) between the arms."
    (effect,) = [e for e in read_effects(text) if e.measure == "group_values"]
    assert effect.compares_arms


def test_one_group_s_change_with_its_interval_is_no_estimate() -> None:
    text = (
        "At six months the intervention group showed a decrease of 1.1 kg (95% CI 0.2 to 2.0) while the usual care "
        "group showed an increase of 0.3 kg (95% CI -0.4 to 1.0; p=0.02)."
    )
    assert estimates(text) == []
    (effect,) = [e for e in read_effects(text) if e.measure == "group_values"]
    assert [group.split()[0] for group in effect.groups] == ["1.1", "0.3"]
    assert effect.within_group


def significance_of_groups(text: str) -> list[bool | None]:
    return [e.significant for e in read_effects(text) if e.measure == "group_values"]


def test_groups_without_a_p_take_what_their_sentence_says_of_them() -> None:
    similar = (
        "Clinical (14.1% versus 16.8%) and ongoing (11.0% versus 12.4%) pregnancy rates were similar in both arms."
    )
    assert significance_of_groups(similar) == [False, False]
    shorter = "Stay was significantly shorter with the new pathway (3 days vs. 6 days)."
    assert significance_of_groups(shorter) == [True]


def test_groups_take_the_significance_of_the_estimate_of_their_difference_after_them() -> None:
    text = "Response was 38.7% (24/62) with A, whereas it was 12.7% (8/63) with B (OR 4.3, 95% CI 1.8-10.7; P = 0.001)."
    assert significance_of_groups(text) == [True]


def test_words_do_not_judge_groups_in_a_sentence_with_a_p_or_saying_both_ways() -> None:
    with_p = "Pain was similar (3.1 vs 3.4); nausea was rarer with the drug (OR 0.5, 95% CI 0.3-0.9, p = 0.01)."
    assert significance_of_groups(with_p) == [None]
    both = "Scores were significantly higher at week 4 (12 vs 9) but not significantly at week 8."
    assert significance_of_groups(both) == [None]


def test_a_threshold_written_as_a_percentage_or_more_is_no_group_s_value() -> None:
    text = (
        "The rate of extreme skewing (90% or greater) in the population was 8.6%, and not statistically different "
        "from any of the other groups, except the older group (1.0%, P<.01)."
    )
    assert groups_of(text) == [("8.6%", "1.0%")]


def test_several_categories_per_group_are_one_comparison_per_category() -> None:
    text = (
        "The 1- and 3-year relapse rates were 2% and 6.5% in the surgical group, and 1% and 9.7% in the medical "
        "group, respectively (P=0.54)."
    )
    assert groups_of(text) == [("2%", "1%"), ("6.5%", "9.7%")]


def test_values_at_time_points_named_after_them_are_one_group_s() -> None:
    (effect,) = group_values_of("Residues were high (76% and 74% in years 1 and 4, respectively).")
    assert effect.groups == ("76%", "74%")
    assert effect.within_group


def group_values_of(text: str) -> list[Effect]:
    return [e for e in read_effects(text) if e.measure == "group_values"]


def test_a_count_with_its_group_named_before_its_percentage_is_one_value() -> None:
    text = "Scores were available in 14/20 placebo-treated patients (70.0%) and 19/22 vaccinated patients (86.4%)."
    assert [group.split("/")[0] for group in groups_of(text)[0]] == ["14", "19"]
    assert len(groups_of(text)) == 1


def test_counts_named_by_the_method_that_found_them() -> None:
    assert [g.split()[0] for g in groups_of("110 lesions were found using MRI, and 128 using CT.")[0]] == ["110", "128"]


def test_an_interval_after_an_unnamed_estimate_keeps_that_estimate_s_measure() -> None:
    text = (
        "At 12 months the cream increased skin hydration (7.2% [CI 1.1 to 13.3%]; p = 0.02) and elasticity (4.0% "
        "[CI -0.5 to 8.5%]; p = 0.08) compared to the vehicle."
    )
    assert [e.measure for e in estimates(text)] == ["MD", "MD"]


def test_one_p_said_of_every_comparison_of_its_sentence_judges_them_all() -> None:
    text = (
        "There were no differences in recall (12.8 ± 4.7 v. 12.3 ± 3.9) or satisfaction (median 8.0 v. 7.5) between "
        "the groups (all p>0.40)."
    )
    assert significance_of_groups(text) == [False, False]


def test_a_significant_increase_said_of_groups_values() -> None:
    text = (
        "Analyses showed a significant increase in endurance time in the training group (412 ± 30 s) compared to "
        "control (350 ± 21 s)."
    )
    assert significance_of_groups(text) == [True]


def test_a_ratio_named_after_groups_values_with_their_intervals_is_an_estimate() -> None:
    text = (
        "The mean catch was 31.5 per trap (95% CI 26.6-36.3) in open houses, compared with 12.2 (10.9-14.4) in "
        "screened houses (ratio of means 0.39, 95% CI 0.30-0.51; p<0.0001)."
    )
    (effect,) = estimates(text)
    assert (effect.measure, effect.value, effect.ci_low, effect.ci_high) == ("RR", 0.39, 0.30, 0.51)
    assert [group.split()[0] for group in groups_of(text)[0]] == ["31.5", "12.2"]


def test_a_p_of_all_other_comparisons_does_not_judge_groups_its_sentence_calls_not_different() -> None:
    text = (
        "Both diets reduced steatosis (all p < 0.001) without significant differences between groups; mild: 60.6% "
        "vs. 71.4%, severe: 4.7% vs. 0%."
    )
    assert significance_of_groups(text) == [None, None]
