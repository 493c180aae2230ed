"""The study-results table: for each counted study, its design, n and the result its text states in
numbers (an effect with its interval, else each group's value, else a p-value), read by the statistics
reader (reading/statistics.py). One list of rows feeds ``run.json`` and ``report.md``, so both show the
same numbers."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise

from pydantic import BaseModel, Field

from deepcritical.appraisal.strength import Strength
from deepcritical.models import DESIGNS, POPULATION_LABELS, Evidence
from deepcritical.reading.effects import RATIO_MEASURES, Effect
from deepcritical.sources.grading import sample_size
from deepcritical.text import shorten

# Which stated result stands for a study: an effect size with its interval first, then one without,
# then each group's value with a p-value, then a p-value alone.
EFFECT_SIZES = ("HR", "OR", "RR", "IRR", "MD", "SMD", "RD", "NNT", "percent_change")
QUOTE_CHARS = 160
# The fields a row takes from the reader's Effect as they are.
_FROM_EFFECT = ("measure", "value", "unit", "ci_low", "ci_high", "ci_level", "ci_sides", "p", "groups", "significant")


class StudyResult(BaseModel):
    """One counted study's stated result, as the statistics reader read it from the item's text."""

    id: str
    design: str = Field(description="The design as the report names it")
    n: int | None = Field(default=None, description="Participants, when the grader found them")
    measure: str
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_level: float | None = None
    ci_sides: int | None = Field(default=None, description="1 for a one-sided interval (never plotted), else 2")
    p: str | None = Field(default=None, description='As written, with its comparator: "<0.001", "=0.03", "NS"')
    groups: list[str] = Field(default_factory=list, description="Each group's value as written")
    significant: bool | None = None
    quote: str = Field(description="The words the result was read from")
    others: int = Field(default=0, description="Further results the same text states, not shown")
    outcome: str | None = Field(default=None, description="The outcome the words before the result name")
    subgroup: str | None = Field(
        default=None,
        description='The studies the estimate pools, as its sentence names them ("Twenty-seven observational studies")',
    )
    population: str | None = Field(default=None, description="Humans, animals or cells, when the grader knows")
    direction: str | None = Field(
        default=None, description="The study's reading for the question: favourable, null or unfavourable"
    )
    unit: str | None = Field(
        default=None, description='A difference\'s unit as written after its value, or what a ratio is per ("per SD")'
    )
    another_outcome: bool = Field(
        default=False,
        description="The study states a result, but for another outcome than the question's (not weighed)",
    )

    @property
    def result_direction(self) -> str:
        """Which way this row's own result goes, whatever the study's reading: "lower" or "higher" (its estimate
        below or above no effect, significantly), "no clear difference" (not significant), "significant" (a
        p-value or group values that do not say which way), or "" when it states no significance to tell."""
        if self.significant is None:
            return ""
        if not self.significant:
            return "no clear difference"
        if self.value is None or self.measure not in EFFECT_SIZES or self.measure == "NNT":
            return "significant"
        no_effect = 1.0 if self.measure in RATIO_MEASURES else 0.0
        return "lower" if self.value < no_effect else "higher" if self.value > no_effect else "no clear difference"

    @property
    def reading(self) -> str:
        """The study's reading as the table words it: its direction on the question; else that its result is
        for another outcome; else no clear result."""
        if self.direction:
            return self.direction
        return "result for another outcome" if self.another_outcome else "no clear result"


def _rank(effect: Effect) -> tuple[int, int]:
    if effect.measure in EFFECT_SIZES and effect.ci_low is not None:
        kind = 0
    elif effect.measure in EFFECT_SIZES:
        kind = 1
    elif effect.measure == "group_values" and effect.p is not None:
        kind = 2
    elif effect.measure == "p_only":
        kind = 3
    else:
        kind = 4
    return kind, effect.start


def study_results(counted: Strength, evidence: Mapping[str, Evidence]) -> list[StudyResult]:
    """Rows for each counted study whose text states a result in numbers, in the table's order: every
    effect size it states with an interval (one row each, with its outcome), else its best stated result. Only
    results between the arms (``Effect.compares_arms``): a change within one arm, or one group's mean with its
    interval, is no study's result on its comparison."""
    from deepcritical.reading.outcomes import outcomes_of, subgroup_of
    from deepcritical.reading.statistics import read_effects

    rows = []
    for item_id in counted.counted:
        item = evidence.get(item_id)
        if item is None:
            continue
        effects = [e for e in read_effects(item.content) if e.compares_arms and _rank(e)[0] < 4]
        if not effects:
            continue
        shown = [e for e in effects if _rank(e)[0] == 0] or [min(effects, key=_rank)]
        # An estimate whose words name no outcome ("the estimate was 0.95") is about the one before it: every
        # stated result but a bare p-value carries its outcome on, shown or not.
        carried = [e for e in effects if e.measure != "p_only"]
        starts = [e.start for e in carried]
        outcomes = dict(zip(starts, outcomes_of(item.content, starts), strict=True))
        ends = {effect.start: previous.end for previous, effect in pairwise(effects)}
        for effect in shown:
            stated = {name: value for name, value in effect.as_dict().items() if name in _FROM_EFFECT}
            rows.append(
                StudyResult(
                    id=item.id,
                    design=DESIGNS[item.grade.design].label,
                    n=_participants(item),
                    quote=shorten(effect.quote, QUOTE_CHARS, on_word=True),
                    others=len(effects) - len(shown),
                    outcome=outcomes.get(effect.start) or outcomes_of(item.content, [effect.start])[0],
                    subgroup=subgroup_of(item.content, effect.start, ends.get(effect.start, 0)),
                    population=POPULATION_LABELS[item.grade.population] if item.grade.population != "unknown" else None,
                    direction=counted.directions.get(item.id),
                    another_outcome=item.id in counted.on_another_outcome,
                    **stated,
                )
            )
    return rows


def _participants(item: Evidence) -> int | None:
    """The study's n as the grader found it; a preprint's from its abstract, which the grader does not read for
    one (a preprint is outside the evidence scale, so its size weighs nothing there, but a reader wants it)."""
    if item.grade.sample_size is None and item.grade.design == "preprint" and item.grade.population == "humans":
        return sample_size(item.content)
    return item.grade.sample_size
