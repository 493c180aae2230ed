"""What the result reader looks at, as named features: the same functions build them for training
(``training/result_reader.py``) and for reading, so the weights always meet the features they learned.

Two kinds. A *ranker* scores how likely a unit states the result for one comparison and outcome: how much
of the outcome, intervention and comparator it names, whether it states statistics, and its section. A
*classifier* reads the unit's result: the words of the unit with the intervention, comparator and outcome
replaced by placeholders (so "the tranexamic acid group had fewer ..." and "the metformin group had fewer
..." are one pattern), the significance it states (p-values, intervals against their null), and which
group a direction word speaks of (which group comes first, which follows "than" or "compared with", and
which group's number is the larger)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache, lru_cache

from deepcritical.reading.comparison import (
    COMPARATOR,
    INTERVENTION,
    Comparison,
    mapped_arms,
    masked_tokens,
    reference_arm,
    stems,
    tokens,
)
from deepcritical.reading.units import TextUnit

LABELS = ("increased", "decreased", "no_difference")

_UP = frozenset(
    [
        "increas",
        "higher",
        "high",
        "greater",
        "more",
        "elev",
        "rais",
        "longer",
        "gain",
        "rise",
        "rose",
        "enhanc",
        "larger",
        "better",
        "superior",
        "improv",
    ]
)
_DOWN = frozenset(
    [
        "decreas",
        "lower",
        "low",
        "reduc",
        "fewer",
        "less",
        "shorter",
        "declin",
        "drop",
        "fell",
        "diminish",
        "attenu",
        "inferior",
        "wors",
        "smaller",
    ]
)
_NULL = frozenset(["similar", "compar", "equival", "unchang", "differ"])


@cache
def _regexes() -> dict[str, re.Pattern[str]]:
    number = r"[-−–]?\d+(?:[.·]\d+)?"
    return {
        "p_value": re.compile(
            r"\bp\s*(?:-?\s*values?|\s*for\s+\w+)?\s*(<|>|=|≤|≥|&lt;|&gt;|<\s*or\s*=)\s*(0?[.·]\d+|1(?:[.·]0+)?|[1-9]\s*[x×]\s*10\s*[-−–]\s*\d+)",
            re.IGNORECASE,
        ),
        "not_significant": re.compile(
            r"\b(?:no|not|non-?|nor|without)\s+(?:\w+\s+){0,2}?(?:statistically\s+)?significan|\bn\.?s\.?(?=[\s,;)])"
            r"|\binsignificant|\bnonsignificant|\bdid not (?:\w+\s+){0,2}?differ|\bno (?:\w+\s+){0,2}?differences?\b"
            r"|\bwere (?:similar|comparable)\b",
            re.IGNORECASE,
        ),
        "significant": re.compile(r"\bsignifican\w*", re.IGNORECASE),
        "interval": re.compile(
            r"\(?\s*(?:95\s*%|95\s*per\s*cent|99\s*%)?\s*(?:CI|confidence interval)[\s:,=]*\[?\(?\s*"
            rf"({number})\s*(?:to|–|-|—|,|;)\s*({number})",
            re.IGNORECASE,
        ),
        "ratio": re.compile(r"\b(?:a?OR|RR|HR|IRR|odds ratio|risk ratio|hazard ratio|relative risk|rate ratio)\b"),
    }


def _p_values(text: str) -> list[tuple[str, float]]:
    values = []
    for comparator, written in _regexes()["p_value"].findall(text):
        comparator = {"&lt;": "<", "&gt;": ">"}.get(comparator, comparator)
        cleaned = written.replace("·", ".").replace(" ", "")
        if "10" in cleaned and ("x" in cleaned or "×" in cleaned):
            value = 1e-4
        else:
            try:
                value = float(cleaned)
            except ValueError:
                continue
        values.append(("<" if "<" in comparator or "≤" in comparator else ">" if ">" in comparator else "=", value))
    return values


def significance_features(text: str) -> dict[str, float]:
    features: dict[str, float] = {}
    patterns = _regexes()
    for comparator, value in _p_values(text):
        small = value < 0.05 or (comparator == "<" and value <= 0.05)
        features["p_small" if small else "p_large"] = 1.0
    if patterns["not_significant"].search(text):
        features["says_not_significant"] = 1.0
    if patterns["significant"].search(text):
        features["says_significant"] = 1.0
    ratio = bool(patterns["ratio"].search(text))
    for low_text, high_text in patterns["interval"].findall(text):
        low, high = (float(v.replace("−", "-").replace("–", "-").replace("·", ".")) for v in (low_text, high_text))
        if ratio and low > 0:
            features["ratio_below_1" if high < 1 else "ratio_above_1" if low > 1 else "ratio_spans_1"] = 1.0
        else:
            features["difference_below_0" if high < 0 else "difference_above_0" if low > 0 else "spans_0"] = 1.0
    return features


def _first(tokens: Sequence[str], wanted: str) -> int | None:
    return next((index for index, token in enumerate(tokens) if token == wanted), None)


def _direction_words(stemmed: Iterable[str]) -> set[str]:
    found = set()
    for token in stemmed:
        if token in _UP:
            found.add("up")
        elif token in _DOWN:
            found.add("down")
    return found


def _arm_numbers(tokens: Sequence[str]) -> str | None:
    """Which arm's number is larger: "xint 28 % ... xcomp 52 %" and "28 % of the xint group and 52 % of
    the xcomp group" are both ``lt``. An arm takes the number just before it when "of", "in" or "with"
    joins them, else the first number after it."""
    seen: dict[str, float] = {}
    for index, token in enumerate(tokens):
        if token not in (INTERVENTION, COMPARATOR) or token in seen:
            continue
        before = tokens[max(0, index - 4) : index]
        if any(word in ("of", "in", "with") for word in before):
            numbers = [word for word in before if word.startswith("#")]
            if numbers:
                seen[token] = float(numbers[-1][1:])
                continue
        for follower in tokens[index + 1 : index + 8]:
            if follower in (INTERVENTION, COMPARATOR):
                break
            if follower.startswith("#"):
                seen[token] = float(follower[1:])
                break
    if len(seen) < 2:
        return None
    difference = seen[INTERVENTION] - seen[COMPARATOR]
    return "gt" if difference > 0 else "lt" if difference < 0 else "eq"


def _arm_order(masked: Sequence[str]) -> str:
    """Which arm the unit names first: a direction word usually speaks of the first."""
    first_int, first_comp = _first(masked, INTERVENTION), _first(masked, COMPARATOR)
    if first_int is None:
        return "none" if first_comp is None else "comp_only"
    if first_comp is None:
        return "int_only"
    return "int_first" if first_int < first_comp else "comp_first"


def _with_numbers(text: str, comparison: Comparison) -> list[str]:
    """Masked tokens with each number written ``#value`` (for the arms' numbers), p-values left out."""
    cleaned = _regexes()["p_value"].sub(" ", text.replace("·", "."))
    raw, stemmed = tokens(cleaned)
    mapped = mapped_arms(raw, stemmed, comparison)
    out = []
    for token, stem in zip(raw, mapped, strict=True):
        if stem in (INTERVENTION, COMPARATOR) or not token[0].isdigit():
            out.append(stem)
            continue
        try:
            out.append(f"#{float(token)}")
        except ValueError:
            continue
    return out


def arm_numbers(text: str, comparison: Comparison) -> str | None:
    """Whether the intervention's arm has the larger number (``gt``), the smaller (``lt``) or the same
    (``eq``), when the unit states a number for each arm; None otherwise."""
    return _arm_numbers(_with_numbers(text, comparison))


def classifier_features(text: str, comparison: Comparison) -> dict[str, float]:
    """The features a result's reading is learned from (see the module's docstring)."""
    masked = masked_tokens(text, comparison)
    features: dict[str, float] = {}
    for n in (1, 2, 3):
        for index in range(len(masked) - n + 1):
            key = "w:" + " ".join(masked[index : index + n])
            features[key] = features.get(key, 0.0) + 1.0
    # Counts of word n-grams are damped: a long unit says no more than a short one.
    for key, value in features.items():
        features[key] = 1.0 + (0.0 if value <= 1 else min(value, 4.0) ** 0.5 - 1.0)
    features |= significance_features(text)
    directions = _direction_words(masked)
    order, reference = _arm_order(masked), reference_arm(masked) or "none"
    features[f"order:{order}"] = 1.0
    features[f"reference:{reference}"] = 1.0
    for direction in directions or {"none"}:
        features[f"dir:{direction}"] = 1.0
        features[f"dir:{direction}|order:{order}"] = 1.0
        features[f"dir:{direction}|reference:{reference}"] = 1.0
    numbers = arm_numbers(text, comparison)
    if numbers is not None:
        features[f"arms:{numbers}"] = 1.0
        for direction in directions or {"none"}:
            features[f"arms:{numbers}|dir:{direction}"] = 1.0
    if any(token in _NULL for token in masked):
        features["null_word"] = 1.0
    features["bias"] = 1.0
    return features


def ranker_features(unit: TextUnit, comparison: Comparison, best_outcome_share: float) -> dict[str, float]:
    """How likely ``unit`` states the result for ``comparison``; ``best_outcome_share`` is the largest share
    of the outcome any unit of the same article names (so "names the outcome best" is a feature)."""
    present, own = _unit_features(unit.text)
    features: dict[str, float] = {"bias": 1.0}

    def share(wanted: frozenset[str]) -> float:
        return len(wanted & present) / len(wanted) if wanted else 0.0

    outcome, intervention, comparator = (
        share(comparison.outcome),
        share(comparison.intervention),
        share(comparison.comparator),
    )
    features["outcome_share"] = outcome
    features["outcome_all"] = float(outcome == 1.0)
    features["outcome_best"] = float(outcome > 0 and outcome >= best_outcome_share)
    features["intervention_share"] = intervention
    features["comparator_share"] = comparator
    features["both_arms"] = float(intervention > 0 and comparator > 0)
    features["outcome_and_arm"] = outcome * max(intervention, comparator)
    features |= own
    kind = section_kind(unit.section)
    features[f"section:{kind}"] = 1.0
    features[f"section:{kind}|abstract:{unit.in_abstract}"] = 1.0
    features[f"section:{kind}|outcome_share"] = outcome
    return features


@lru_cache(maxsize=8192)
def _unit_features(text: str) -> tuple[frozenset[str], dict[str, float]]:
    """A unit's stems and the ranker's features that do not depend on the comparison. Cached: a study is
    read for each of its comparisons and outcomes, and every unit is scored each time (a third of the
    transformer reader's time on whole articles went to recomputing them; phases/16_result_reader.md,
    round 4). Callers copy the dictionary, never change it."""
    _, stemmed = _unit_tokens(text)
    features = {f"sig:{name}": value for name, value in significance_features(text).items()}
    features["has_percent"] = float("%" in text)
    features["digits"] = min(sum(map(str.isdigit, text)), 40) / 40
    features["direction_word"] = float(bool(_direction_words(stemmed)))
    features["table_row"] = float(" | " in text)
    features["long"] = float(len(text) > 400)
    features["short"] = float(len(text) < 60)
    return frozenset(stemmed), features


@lru_cache(maxsize=8192)
def _unit_tokens(text: str) -> tuple[list[str], list[str]]:
    return tokens(text)


@lru_cache(maxsize=8192)
def stem_set(text: str) -> frozenset[str]:
    """``stems(text)`` as a set, cached like ``_unit_features``."""
    return frozenset(stems(text))


def section_kind(section: str) -> str:
    """The kind of section a unit stands in (results, conclusion, discussion, methods, background, title or
    other), from its heading as ``split_units`` reads it."""
    return (
        "results"
        if re.search(r"RESULT|FINDING|OUTCOME|EFFICACY", section)
        else "conclusion"
        if re.search(r"CONCLUSION|INTERPRETATION|SUMMARY", section)
        else "discussion"
        if "DISCUSSION" in section
        else "methods"
        if re.search(
            r"METHOD|DESIGN|SETTING|PARTICIPANT|PATIENT|SUBJECT|INTERVENTION|STATISTIC|RANDOMI|PROCEDURE|MEASURE",
            section,
        )
        else "background"
        if re.search(r"BACKGROUND|INTRODUCTION|OBJECTIVE|AIM|PURPOSE|CONTEXT", section)
        else "title"
        if "TITLE" in section
        else "other"
    )
