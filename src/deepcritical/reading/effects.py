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
    holds each group's value as written; ``quote`` is ``text[start:end]`` of the text that was read.

    In context: ``measure`` names what the value is (a ratio, a difference, a percent change, each group's
    value), ``unit`` its unit as written after the value ("mmHg", "%", "SD" for a standardised difference, "per
    SD" for a ratio per unit), ``ci_level`` and ``ci_sides`` (1 for a one-sided interval, else 2) its interval,
    ``within_group`` whether it is a change within one arm (or across time points), and ``compares_arms`` whether
    it compares the arms at all: only such a result is a study's result on its comparison."""

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
    unit: str | None = None
    ci_sides: int | None = None

    @property
    def compares_arms(self) -> bool:
        """A result between the arms: not a change within one arm, not one group's value alone (a mean with
        its interval compares nothing)."""
        return not self.within_group and not (self.measure == "group_values" and len(self.groups) < 2)

    def as_dict(self) -> dict[str, Any]:
        """The fields by name, in the issue's order, as JSON takes them (groups as a list)."""
        fields = asdict(self)
        fields["groups"] = list(self.groups)
        order = (
            "measure", "value", "unit", "ci_low", "ci_high", "ci_level", "ci_sides", "p", "groups", "significant",
            "within_group", "quote", "start", "end",
        )  # fmt: skip
        result = {name: fields[name] for name in order}
        result["compares_arms"] = self.compares_arms
        return result


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
