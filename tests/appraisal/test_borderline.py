"""A verdict whose favourable share lies a hair from a threshold is called borderline, in its headline, the
report's verdict section and its rationale; the split of a maybe is worded plainly."""

from __future__ import annotations

import pytest

from deepcritical.appraisal.verdict import BORDERLINE_MARGIN, CLEAR_SHARE, threshold_margin
from deepcritical.outputs import Verdict, confidence_words
from deepcritical.report.markdown_writer import blocks_markdown
from deepcritical.report.sections import verdict_block


@pytest.mark.parametrize(
    ("share", "borderline"),
    [(0.647, True), (0.653, True), (0.351, True), (0.5, False), (0.9, False), (CLEAR_SHARE + BORDERLINE_MARGIN, False)],
)
def test_a_share_close_to_a_threshold_is_borderline(share: float, borderline: bool) -> None:
    assert (threshold_margin(share) < BORDERLINE_MARGIN) is borderline


def test_a_borderline_verdict_says_so_where_it_is_read() -> None:
    verdict = Verdict(label="maybe", confidence=0.706, borderline=True, confidence_is_split=True)
    assert verdict.headline.startswith("maybe, borderline (")
    assert "(borderline; the studies are divided: 0.71, where 1 is an even split, computed in code)" in (
        blocks_markdown(verdict_block(verdict, {}))
    )
    plain = Verdict(label="yes", confidence=0.9)
    assert "borderline" not in plain.headline
    assert "borderline" not in blocks_markdown(verdict_block(plain, {}))


def test_a_maybes_split_is_worded_plainly() -> None:
    assert confidence_words("maybe", 0.81, split=True) == "the studies are divided: 0.81, where 1 is an even split"
