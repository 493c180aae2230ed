"""Each row of the study-results table has its own direction, whatever the study's one reading: the CSV export
writes it as ``direction`` beside the study's reading (``study_reading``)."""

from __future__ import annotations

import pytest

from deepcritical.appraisal.results import StudyResult


@pytest.mark.parametrize(
    ("measure", "value", "significant", "expected"),
    [
        ("HR", 0.77, True, "lower"),
        ("OR", 1.40, True, "higher"),
        ("HR", 0.91, False, "no clear difference"),
        ("MD", -7.0, True, "lower"),
        ("percent_change", 12.0, True, "higher"),
        ("p_only", None, True, "significant"),
        ("HR", 0.9, None, ""),
    ],
)
def test_a_rows_own_direction(measure: str, value: float | None, significant: bool | None, expected: str) -> None:
    row = StudyResult(
        id="pmid:1", design="RCT", measure=measure, value=value, significant=significant, quote="q", direction="null"
    )
    assert row.result_direction == expected
    assert row.reading == "null"  # the study's reading stays its own
