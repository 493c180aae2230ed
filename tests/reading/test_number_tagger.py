"""The statistics reader's number tagger (reading/number_tagger.py, issue 39 round 4): which numbers are groups'
values, learned from the hand-labelled sets, joined to the rules' group values (examples written here)."""

from __future__ import annotations

from deepcritical.reading.number_tagger import GroupTagger, default_tagger, number_tokens
from deepcritical.reading.statistics import number_features, read_effects


def groups_read(text: str, tagger: GroupTagger | None) -> list[tuple[str, ...]]:
    return [effect.groups for effect in read_effects(text, tagger) if effect.measure == "group_values"]


def test_the_shipped_tagger_is_loaded_and_read_by_default() -> None:
    tagger = default_tagger()
    assert tagger is not None
    assert tagger.mode in ("filter", "hybrid")
    assert 0 < tagger.threshold < 1
    text = "Steatorrhoea at one year was reported in nine of 42 A patients and 18 of 41 B patients (P = 0.029)."
    assert read_effects(text) == read_effects(text, tagger)


def test_counts_in_words_and_digits_are_numbers() -> None:
    values = [token.value for token in number_tokens("nine of 42 patients and 18 of 41; none died, three left")]
    assert values == [9, 42, 18, 41, 0, 3]


def test_a_tagger_that_accepts_everything_in_filter_mode_keeps_the_rules_groups() -> None:
    accept_all = GroupTagger({}, 0.0, 0.0, "filter")  # every number at 0.5, over a threshold of 0
    text = "Pain fell more with A (3.1 vs 4.6, p = 0.01); 45 (91.8%) and 43 (87.8%) were cured."
    assert groups_read(text, accept_all) == groups_read(text, None)


def test_a_tagger_that_rejects_everything_drops_the_rules_groups() -> None:
    reject_all = GroupTagger({}, -10.0, 0.5, "hybrid")
    text = "Pain fell more with A (3.1 vs 4.6, p = 0.01)."
    assert groups_read(text, None) == [("3.1", "4.6")]
    assert groups_read(text, reject_all) == []
    p_values = [effect.p for effect in read_effects(text, reject_all)]
    assert p_values == ["=0.01"]  # the p-value stays, as a result of its own


def test_features_see_what_the_rules_read() -> None:
    _plain, tokens, rows = number_features("Mortality was 12% vs 18% (p = 0.03).")
    by_value = {token.value: row for token, row in zip(tokens, rows, strict=True)}
    assert "rule_lead" in by_value[12]
    assert "percent" in by_value[12]
    assert "rule_lead" not in by_value[0.03]


def test_the_tagger_reads_groups_the_rules_miss() -> None:
    # Counts of a total named by their group, and values each followed by its group in brackets: no rule reads them.
    counts = "Diarrhoea at one year was reported in 7 of 40 A patients and 15 of 39 B patients (P = 0.031)."
    named = "Median age was 4.2 months (early group) and 6.3 months (late group) (P = .41)."
    for text, expected in ((counts, ("7", "15")), (named, ("4.2", "6.3"))):
        assert groups_read(text, None) == []
        assert [tuple(g.split()[0] for g in groups) for groups in groups_read(text, default_tagger())] == [expected]
    with_p = [e for e in read_effects(counts) if e.measure == "group_values"]
    assert with_p[0].p == "=0.031"
    assert with_p[0].significant is True
