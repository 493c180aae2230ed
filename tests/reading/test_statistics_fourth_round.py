"""Significance of groups' values read by round 4's rules (issue 39): an estimate after a semicolon inside the
groups' own bracket, and the next sentence saying what the comparisons showed (examples written here)."""

from __future__ import annotations

from deepcritical.reading.statistics import read_effects


def significance_of_groups(text: str) -> list[tuple[tuple[str, ...], bool | None]]:
    return [(e.groups, e.significant) for e in read_effects(text) if e.measure == "group_values"]


def test_an_estimate_after_a_semicolon_in_the_groups_bracket_judges_them() -> None:
    text = "Scores were higher with coaching (mean 44 vs. 36; difference 8, 95% CI 2.1 to 13.9, p = 0.01)."
    assert significance_of_groups(text) == [(("44", "36"), True)]
    named = (
        "Fractures occurred often (120 [6.1%] in 1970 women in the calcium group vs 160 [8.2%] in 1962 women in "
        "the placebo group; hazard ratio [HR] 0.74 [95% CI 0.58-0.94])."
    )
    assert significance_of_groups(named) == [(("120 [6.1%]", "160 [8.2%]"), True)]


def test_a_semicolon_outside_a_bracket_still_ends_the_comparison() -> None:
    text = "Scores were 44 in the A group vs 36 in the B group; the difference in pain was 0.3 (95% CI 0.1 to 0.5)."
    assert significance_of_groups(text) == [(("44", "36"), None)]


def test_the_next_sentence_says_what_the_comparisons_showed() -> None:
    text = (
        "Readers did better with films than with screens (70 vs 58 correct reads). "
        "The differences were not statistically significant after correction."
    )
    assert significance_of_groups(text) == [(("70", "58 correct"), False)]
    with_numbers = (
        "Readers did better with films than with screens (70 vs 58 correct reads). "
        "The differences were significant in 3 of 4 readers."
    )
    assert significance_of_groups(with_numbers) == [(("70", "58 correct"), None)]
