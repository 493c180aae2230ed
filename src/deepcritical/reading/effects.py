"""One statistical result a text states (an effect size with its interval, each group's value, a
p-value) and how its significance is judged from what is written: the p-value when one is stated,
else the confidence interval against the null value (1 for ratios, 0 for differences)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

Measure = Literal[
    "OR", "RR", "HR", "IRR", "MD", "SMD", "RD", "NNT", "percent_change", "group_values", "p_only"
]  # fmt: skip
MEASURES: frozenset[str] = frozenset(get_args(Measure))
RATIO_MEASURES: frozenset[str] = frozenset({"OR", "RR", "HR", "IRR"})
DIFFERENCE_MEASURES: frozenset[str] = frozenset({"MD", "SMD", "RD", "percent_change"})
# The conventional threshold: a text that states "p < 0.05" or "p = 0.03" calls its result significant.
ALPHA = 0.05


# A frozen dataclass, not a pydantic model: importing the reader stays cheap (pydantic's import and
# model build cost ~0.3 s, measured by bench/effects_bench.py), and nothing here needs validation.
@dataclass(frozen=True, slots=True)
class Effect:
    """A result as the text states it. ``p`` keeps its comparator ("<0.001", "=0.03", "NS"); ``groups``
    holds each group's value as written; ``quote`` is ``text[start:end]`` of the text that was read."""

    measure: Measure
    quote: str
    start: int
    end: int
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_level: float | None = None
    p: str | None = None
    groups: tuple[str, ...] = ()
    significant: bool | None = None
    within_group: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The fields by name, in the issue's order, as JSON takes them (groups as a list)."""
        fields = asdict(self)
        fields["groups"] = list(self.groups)
        order = (
            "measure", "value", "ci_low", "ci_high", "ci_level", "p", "groups", "significant", "within_group",
            "quote", "start", "end",
        )  # fmt: skip
        return {name: fields[name] for name in order}


def p_number(p: str) -> float | None:
    """The number of a p as :func:`read_effects` writes it ("<0.001" -> 0.001); None for "NS"."""
    number = p.lstrip("<>=≤≥")
    try:
        return float(number)
    except ValueError:
        return None


def significant_from_p(p: str) -> bool | None:
    """Significant at 0.05 as the p is written: "<0.05", "≤0.01", "=0.03" are; "=0.05", ">0.05", "NS" are
    not; "<0.10" says nothing either way."""
    if p == "NS":
        return False
    number = p_number(p)
    if number is None:
        return None
    comparator = p[0]
    if comparator in "<≤":
        return True if number <= ALPHA else None
    if comparator in ">≥":
        return False if number >= ALPHA else None
    return number < ALPHA


def significant_from_ci(measure: str, low: float | None, high: float | None) -> bool | None:
    """Whether the interval excludes the null value: 1 for a ratio, 0 for a difference. An interval that
    touches the null (1.00-1.59) does not exclude it. None where the measure has no null on this scale
    (NNT, one group's value) or no interval is stated."""
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return None
    if measure in RATIO_MEASURES:
        null = 1.0
    elif measure in DIFFERENCE_MEASURES:
        null = 0.0
    else:
        return None
    low, high = min(low, high), max(low, high)
    return not (low <= null <= high)


def judged(measure: str, p: str | None, low: float | None, high: float | None) -> bool | None:
    """Significance from the p-value when it says, else from the interval."""
    from_p = significant_from_p(p) if p is not None else None
    return from_p if from_p is not None else significant_from_ci(measure, low, high)
