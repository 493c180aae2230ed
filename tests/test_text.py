"""text.shorten: the one way a title, a snippet or a message is shortened."""

from __future__ import annotations

import pytest

from deepcritical.text import shorten


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
