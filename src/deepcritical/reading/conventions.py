"""The result reader's conventions: what a unit's own statistics and words settle whatever the classifiers read
(``results.ResultReader.read`` asks them of each unit it reads). Its first comparative estimate with a stated
significance, words of no effect, p-values all 0.05 or more, and each arm's value with a small p-value; each
was measured on Evidence Inference's validation articles (``phases/16_result_reader.md``, rounds 1, 5 and 7)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache, lru_cache

from deepcritical.reading.effects import RATIO_MEASURES, Effect
from deepcritical.reading.result_features import LABELS, significance_features
from deepcritical.reading.statistics import read_effects


@lru_cache(maxsize=4096)
def _effects(text: str) -> tuple[Effect, ...]:
    """``read_effects`` once per unit's text: each convention asks it, and an article's units are read again for
    each of its comparisons."""
    return tuple(read_effects(text))


# How sure a reading is when the unit's own numbers settle it.
NUMBERS_PROBABILITY = 0.9


def stated_by_numbers(text: str) -> dict[str, float] | None:
    """The reading the unit's first comparative estimate gives by the field's conventions, when its
    significance is stated (a p-value, or an interval against its null value): a ratio below 1, or a
    difference below 0, is a decrease under the intervention. None when no such estimate is there."""
    for effect in _effects(text):
        if not effect.compares_arms or effect.significant is None or effect.value is None:
            continue
        if effect.measure in RATIO_MEASURES:
            null = 1.0
        elif effect.measure in ("MD", "SMD", "RD"):
            null = 0.0
        else:
            continue
        label = "no_difference" if not effect.significant else "decreased" if effect.value < null else "increased"
        rest = (1.0 - NUMBERS_PROBABILITY) / 2
        return {name: NUMBERS_PROBABILITY if name == label else rest for name in LABELS}
    return None


@cache
def _no_effect() -> re.Pattern[str]:
    return re.compile(
        r"\b(?:did|does|do|was|were|is|are|had|has|have)\s+not\s+(?:significantly\s+)?(?:slow|reduce|improve|change"
        r"|affect|alter|prevent|lower|increase|decrease|differ|benefit|shorten|prolong|delay|influence|modify)\w*"
        r"|\bfailed\s+to\s+(?:slow|reduce|improve|change|affect|prevent|lower|show|demonstrate)\w*"
        r"|\bno\s+(?:significant\s+|statistically\s+significant\s+|meaningful\s+|clinically\s+relevant\s+)?"
        r"(?:effect|difference|change|benefit|improvement|reduction|increase|decrease|association)s?\b",
        re.IGNORECASE,
    )


def stated_as_no_effect(text: str) -> dict[str, float] | None:
    """A unit that states no effect in words ("did not slow", "failed to improve", "no difference") and no
    significant estimate reads as no significant difference."""
    # A significant change within one arm ("both groups improved, p < 0.001") is no difference between them.
    if not _no_effect().search(text) or any(effect.significant and effect.compares_arms for effect in _effects(text)):
        return None
    rest = (1.0 - NUMBERS_PROBABILITY) / 2
    return {name: NUMBERS_PROBABILITY if name == "no_difference" else rest for name in LABELS}


# The features of a unit that states a significant difference somewhere: then its large p-values speak of
# another comparison or outcome, and settle nothing.
_SIGNIFICANT = frozenset(["p_small", "ratio_below_1", "ratio_above_1", "difference_below_0", "difference_above_0"])


# A p-value of another test than the arms' difference: heterogeneity between studies, an interaction, a trend.
_OTHER_TESTS = re.compile(
    r"\bp\s*(?:-?\s*values?\s*)?(?:for|of)\s+(?:the\s+)?(?:heterogeneity|interaction|trend)\w*\s*(?:[<>=≤≥]|&[lg]t;)\s*"
    r"[0-9.·]+",
    re.IGNORECASE,
)

# A unit whose small p-value tests something else than a difference between the arms: non-inferiority or
# equivalence (a small p says the arms do not differ beyond a margin), an interaction, a trend, heterogeneity
# ("12% and 14% (p = 0.001 for non-inferiority)", "(p for interaction = 0.01)"): its arms' values with that p state
# no significant difference.
_NOT_THE_DIFFERENCE = re.compile(
    r"\b(?:non-?inferior\w*|equivalen\w*|interaction|heterogeneity|trend)\b", re.IGNORECASE
)


def stated_by_p_values(text: str) -> dict[str, float] | None:
    """A unit whose every p-value is 0.05 or more, with no interval or word stating a significant
    difference, reads as no significant difference ("27.9% with hydrocortisone and 28.8% with placebo
    (p=0.50)"): the arms' numbers differ, as they always do, and the test says the difference is chance's."""
    features = significance_features(_OTHER_TESTS.sub(" ", text))
    if "p_large" not in features or _SIGNIFICANT.intersection(features):
        return None
    if "says_significant" in features and "says_not_significant" not in features:
        return None
    rest = (1.0 - NUMBERS_PROBABILITY) / 2
    return {name: NUMBERS_PROBABILITY if name == "no_difference" else rest for name in LABELS}


def significant_by_groups(text: str, reading: Mapping[str, float]) -> dict[str, float]:
    """``reading``, unless it reads no significant difference in a unit that states each arm's value with a
    p-value under 0.05 ("3.1 % in the carbetocin group and 7.2 % in all oxytocin groups combined, p = 0.0110"):
    such a unit states a significant difference, and a classifier that reads it as none contradicts its own
    statistic (the classifiers read the numbers masked). Which way the difference goes stays the classifier's
    reading: no difference gets what the other conventions leave the labels they rule out, and increase and
    decrease share the rest as the classifier shares them. A bare p-value does not settle it (it may be for
    another comparison: read so, macro-F1 fell on the validation articles; phases/16_result_reader.md, round 7),
    nor does a unit whose p-value may test non-inferiority, an interaction or a trend (``_NOT_THE_DIFFERENCE``)."""
    if max(reading, key=reading.__getitem__) != "no_difference":
        return dict(reading)
    moving = reading["increased"] + reading["decreased"]
    if _NOT_THE_DIFFERENCE.search(text):  # the small p-value may be the test of no difference beyond a margin
        return dict(reading)
    groups = [effect for effect in _effects(text) if effect.measure == "group_values" and effect.compares_arms]
    if moving <= 0 or not any(effect.significant for effect in groups):
        return dict(reading)
    ruled_out = 1.0 - NUMBERS_PROBABILITY
    return {
        "increased": (1.0 - ruled_out) * reading["increased"] / moving,
        "decreased": (1.0 - ruled_out) * reading["decreased"] / moving,
        "no_difference": ruled_out,
    }
