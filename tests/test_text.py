"""text.shorten: the one way a title, a snippet or a message is shortened."""

from __future__ import annotations

import pytest

from deepcritical.text import collapse_whitespace, sentence_starts, shorten, split_sentences


def test_a_short_text_is_only_folded_onto_one_line() -> None:
    assert shorten("  a\n\tb  c ", 20) == "a b c"


@pytest.mark.parametrize("limit", [2, 3, 10, 17, 50])
def test_a_long_text_is_cut_to_the_limit_and_marked(limit: int) -> None:
    text = "alpha beta gamma delta epsilon zeta eta theta " * 3
    short = shorten(text, limit)
    assert len(short) == limit
    assert short.endswith("…")
    assert text.startswith(short[:-1].rstrip())


@pytest.mark.parametrize("limit", [8, 17, 40])
def test_a_cut_on_a_word_keeps_whole_words_only(limit: int) -> None:
    text = "alpha beta gamma delta epsilon zeta eta theta"
    short = shorten(text, limit, on_word=True)
    assert len(short) <= limit
    assert short.endswith(" …")
    kept = short.removesuffix(" …").split(" ")
    assert kept == text.split(" ")[: len(kept)]


def test_a_single_long_word_is_still_cut_within_the_limit() -> None:
    short = shorten("x" * 40, 10, on_word=True)
    assert len(short) <= 10
    assert short.endswith(" …")


def test_whitespace_runs_and_line_breaks_collapse_to_one_space_and_the_ends_are_trimmed() -> None:
    assert collapse_whitespace("  Aspirin\n\tand \u00a0 heparin  ") == "Aspirin and heparin"


@pytest.mark.parametrize(
    "text",
    [
        "As Smith et al. 2019 found, mortality fell.",
        "Mortality was lower with aspirin vs. placebo in the trial.",
        "Several drugs, e.g. Aspirin, were given.",
        "The curve (Fig. 2) shows the effect; see Figs. 3 and 4.",
        "The effect was small (OR 0.85, 95% CI 0.65-1.12; p = .03) in approx. 200 patients.",
    ],
)
def test_an_abbreviation_or_a_statistic_does_not_end_a_sentence(text: str) -> None:
    assert split_sentences(text) == [text]


def test_sentences_end_before_a_capital_a_digit_or_a_bracket() -> None:
    text = "Mortality fell. 120 patients died! (Most were old). [Ref 2] is cited. Was it aspirin? yes, it was."
    parts = [
        "Mortality fell.",
        "120 patients died!",
        "(Most were old).",
        "[Ref 2] is cited.",
        "Was it aspirin? yes, it was.",
    ]
    assert split_sentences(text) == parts
    assert [text[start:].split()[0] for start in sentence_starts(text)] == ["120", "(Most", "[Ref", "Was"]
