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
