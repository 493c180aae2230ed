"""The statistics reader: every statistical result a text states, read by the field's conventions of
writing them (no model). An estimate is a value with its interval after a measure's name ("HR 0.77,
95% CI 0.72-0.82"); each group's value is a count, a percentage, a mean ± SD or one side of "x vs y";
a p-value belongs to the result it follows, else it is a result of its own (``p_only``).

Everything is matched on a normalised copy of the text of the same length (unicode minus, middle
dot, thin spaces made plain), so every offset is an offset into the text as given."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from typing import Literal

from deepcritical.reading import patterns as pt
from deepcritical.reading.effects import RATIO_MEASURES, Effect, judged, significant_from_p
from deepcritical.reading.estimates import find_estimates, find_percent_changes
from deepcritical.reading.group_values import cluster_draft, find_group_values
from deepcritical.reading.number_tagger import GroupTagger, NumberToken, default_tagger, number_tokens, runs
from deepcritical.reading.number_tagger import token_features as tagger_features
from deepcritical.reading.p_values import attach_p_values, find_p_values, written_p
from deepcritical.reading.stat_text import Draft, StatText, number
from deepcritical.text import collapse_whitespace

# ``read_effects``' tagger by default: the shipped one (reading/number_tagger.json) when there is one.
SHIPPED: Literal["shipped"] = "shipped"


def read_effects(text: str, tagger: GroupTagger | Literal["shipped"] | None = SHIPPED) -> list[Effect]:
    """Every statistical result ``text`` states, in the order they are written; ``tagger`` (the shipped one by
    default, None for the rules alone) judges which numbers are groups' values."""
    doc = _stat_text(text)
    rules = _RulesReading.of(doc)
    groups = rules.groups
    chosen = default_tagger() if tagger == SHIPPED else tagger
    if chosen is not None:
        groups = _tagged_groups(doc, groups, chosen, rules.taken_before, rules.p_starts)
    drafts = [*rules.drafts, *groups]
    drafts.sort(key=lambda d: d.start)
    drafts = attach_p_values(doc, drafts, rules.p_values)
    effects = [_effect(doc, draft) for draft in sorted(drafts, key=lambda d: (d.start, d.end))]
    return _significance_of_groups_without_p(doc, effects)


@dataclass(frozen=True)
class _RulesReading:
    """What the rules read before the tagger: estimates and percent changes (``drafts``), the p-values, which
    characters those took (``taken_before``) and the groups' values."""

    drafts: list[Draft]
    p_values: list[tuple[int, int, str]]
    taken_before: bytearray
    p_starts: list[int]
    groups: list[Draft]

    @classmethod
    def of(cls, doc: StatText) -> _RulesReading:
        drafts = find_estimates(doc)
        p_values = find_p_values(doc)
        drafts += find_percent_changes(doc)
        taken_before = bytearray(doc.taken)
        p_starts = [start for start, _end, _p in p_values]
        return cls(drafts, p_values, taken_before, p_starts, find_group_values(doc, p_starts))


def number_features(text: str) -> tuple[str, list[NumberToken], list[list[str]]]:
    """The normalised text, its numbers and each number's features, as ``read_effects`` gives them to its tagger
    (training/number_tagger.py fits the tagger on them)."""
    doc = _stat_text(text)
    rules = _RulesReading.of(doc)
    tokens = number_tokens(doc.plain)
    return doc.plain, tokens, _features(doc, tokens, rules.groups, rules.taken_before, rules.p_starts)


def _features(
    doc: StatText, tokens: list[NumberToken], groups: list[Draft], taken_before: bytearray, p_starts: list[int]
) -> list[list[str]]:
    covered = bytearray(len(doc.plain))
    for draft in groups:
        covered[draft.start : draft.end] = b"\x01" * (draft.end - draft.start)
    leads = {lead for draft in groups for lead in _leads(doc, draft)}
    return tagger_features(doc, tokens, taken_before, leads, covered, p_starts)


def _leads(doc: StatText, draft: Draft) -> list[int]:
    """Where each group's value of a rule's draft begins (its groups are quoted from the text in order)."""
    found, at = [], draft.start
    for group in draft.groups:
        position = doc.original.find(group, at)
        if position < 0:
            break
        found.append(position)
        at = position + len(group)
    return found


_FROM_BEFORE = re.compile(r"\bfrom\s+$", re.IGNORECASE)
_TO_BETWEEN = re.compile(r"\s?%?\s*(?:[A-Za-z/]+\s+)?to\s+")
_VALUE_KINDS = (pt.count_value, pt.mean_sd_value, pt.range_value, pt.percent_value)


def _tagged_groups(
    doc: StatText, groups: list[Draft], tagger: GroupTagger, taken_before: bytearray, p_starts: list[int]
) -> list[Draft]:
    """The rules' groups the tagger accepts (the mean probability of their leading values over its threshold) and,
    in ``hybrid`` mode, each run of accepted values that no kept group holds, as one comparison."""
    tokens = number_tokens(doc.plain)
    if not tokens:
        return groups
    features = _features(doc, tokens, groups, taken_before, p_starts)
    probability = {token.start: tagger.probability(row) for token, row in zip(tokens, features, strict=True)}
    kept = []
    for draft in groups:
        leads = [probability[lead] for lead in _leads(doc, draft) if lead in probability]
        if not leads or sum(leads) / len(leads) >= tagger.threshold:
            kept.append(draft)
    if tagger.mode != "hybrid":
        return kept
    held = bytearray(len(doc.plain))
    for draft in kept:
        held[draft.start : draft.end] = b"\x01" * (draft.end - draft.start)
    accepted = [
        probability[token.start] >= tagger.threshold
        and not any(held[token.start : token.end])
        and not any(taken_before[token.start : token.end])
        for token in tokens
    ]
    for run in runs(doc, tokens, accepted, p_starts):
        draft = cluster_draft(doc, [_value_span(doc, token) for token in run])
        # "fell from 6.1 to 4.2 with drug A": one group's values before and after (the labels' convention)
        draft.within = draft.within or (
            len(run) == 2
            and _FROM_BEFORE.search(doc.plain, max(0, run[0].start - 8), run[0].start) is not None
            and _TO_BETWEEN.fullmatch(doc.plain, run[0].end, run[1].start) is not None
        )
        kept.append(draft)
    return sorted(kept, key=lambda draft: draft.start)


def _value_span(doc: StatText, token: NumberToken) -> tuple[int, int]:
    """A group's value from its leading number: the longest count, mean ± SD, range or percentage written there."""
    end = token.end
    for kind in _VALUE_KINDS:
        match = kind().match(doc.plain, token.start)
        if match is not None:
            end = max(end, match.end())
    return token.start, end


def _stat_text(text: str) -> StatText:
    plain = pt.normalised(text)
    lookalike = " ".join(m.group(0) for m in pt.look_alikes().finditer(plain))
    doc = StatText(
        original=text,
        plain=plain,
        taken=bytearray(len(plain)),
        sentence_starts=[0, *(m.end() for m in pt.sentence_ends().finditer(plain))],
        heart_rate="HR" in lookalike,
        respiratory_rate="RR" in lookalike,
        infusion="(CI)" in lookalike and "nfusion" in lookalike,
        saline="(NS)" in lookalike,
    )
    return doc


# What a sentence says of its groups' values when no p-value is given for them: "(14.1% versus 16.8%) ... were
# similar in both groups", "did not differ", "significantly shorter in the A group (3 vs 6 days)".
_NO_DIFFERENCE_SAID = re.compile(
    r"\b(?:no|not|nor|without)\s+(?:statistically\s+)?significant(?:ly)?\b|\bdid\s+not\s+differ|\bdo\s+not\s+differ"
    r"|\b(?:were|was|are|is|remained)\s+(?:very\s+)?(?:similar|comparable)\b|\bno\s+differences?\b",
    re.IGNORECASE,
)
_DIFFERENCE_SAID = re.compile(
    r"(?<!not )\bsignificantly\s+(?:higher|lower|more|less|greater|better|worse|shorter|longer|increased|reduced"
    r"|decreased|improved|fewer|smaller|larger|faster|slower)\b"
    # "a significant increase in the time ... in the training group (318 s) compared to control (248 s)"
    r"|\b(?:an?|the)\s+(?:statistically\s+)?significant\s+(?:increase|decrease|reduction|improvement|rise|fall)\b",
    re.IGNORECASE,
)
# One p-value said of every comparison of its sentence: "(all p>0.50)", "(p > 0.05 for all)".
_P_OF_ALL = re.compile(r"\ball\s*$|^\s*for\s+all\b", re.IGNORECASE)
# How far after its group values an estimate of their difference may stand and lend them its significance:
# "38.7% (24/62) ... 12.7% (8/63) (odds ratio 4.342, 95% CI 1.764-10.687; P = 0.001)"; never across a semicolon.
_ESTIMATE_AFTER_GROUPS = 25
# ... or after a semicolon that closes the groups' part of one bracket, the estimate's name after it: "(Mean 31 vs.
# 23; difference=8, 95% CI 1.3 to 13.5, p=0.019)", "(251 [7.0%] ... vs 350 [9.8%] in 3575 women in the placebo
# group; hazard ratio [HR] 0.71 [95% CI 0.60-0.83])".
_SEMICOLON_CLOSES = re.compile(r"[^;()\[\]]{0,60};[^;\d]{0,30}")


def _significance_of_groups_without_p(doc: StatText, effects: list[Effect]) -> list[Effect]:
    """Groups' values between the arms without a p-value take the significance of the estimate of their
    difference just after them, else the significance their sentence states in words, when it states one way
    only and gives no p-value of any result (the words may then be that result's)."""
    read: list[Effect] = []
    for index, effect in enumerate(effects):
        if (
            effect.measure == "group_values"
            and effect.p is None
            and effect.significant is None
            and effect.compares_arms
        ):
            said = _said_of(doc, effect, effects[index + 1 :])
            if said is not None:
                effect = replace(effect, significant=said)
        read.append(effect)
    return read


def _in_brackets(doc: StatText, at: int) -> bool:
    before = doc.plain[doc.sentence_start(at) : at]
    return before.count("(") + before.count("[") > before.count(")") + before.count("]")


def _estimate_of(doc: StatText, groups: Effect, estimate: Effect) -> bool:
    """Whether ``estimate`` is of the difference between ``groups``: just after them with no semicolon between,
    or after a semicolon that closes the groups' part of one bracket."""
    gap = doc.plain[groups.end : estimate.start]
    if ";" not in gap:
        return len(gap) <= _ESTIMATE_AFTER_GROUPS
    return _SEMICOLON_CLOSES.fullmatch(gap) is not None and _in_brackets(doc, groups.start)


def _said_of(doc: StatText, groups: Effect, later: list[Effect]) -> bool | None:
    estimate = next(iter(later), None)
    if (
        estimate is not None
        and estimate.measure not in ("group_values", "p_only", "percent_change")
        and estimate.significant is not None
        and _estimate_of(doc, groups, estimate)
        and doc.sentence_start(estimate.start) <= groups.start
    ):
        return estimate.significant
    start = doc.sentence_start(groups.start)
    next_start = bisect.bisect_right(doc.sentence_starts, groups.end)
    end = doc.sentence_starts[next_start] if next_start < len(doc.sentence_starts) else len(doc.plain)
    sentence = doc.plain[start:end]
    no_difference, difference = _NO_DIFFERENCE_SAID.search(sentence), _DIFFERENCE_SAID.search(sentence)
    in_words = False if no_difference and not difference else True if difference and not no_difference else None
    p_values = list(pt.p_value().finditer(sentence))
    if len(p_values) == 1 and (
        _P_OF_ALL.search(sentence, 0, p_values[0].start()) or _P_OF_ALL.search(sentence[p_values[0].end() :])
    ):
        written = written_p(p_values[0])
        by_p = significant_from_p(written) if written is not None else None
        # "reduced steatosis in both arms (all p < 0.001) without significant differences between groups": the p is
        # of other comparisons than the words'
        return by_p if in_words is None or in_words == by_p else None
    if p_values:
        return None
    return in_words if in_words is not None else _said_next(doc, end)


# The next sentence saying what the comparisons before it showed: "Both findings were not statistically significant
# after adjustment for multiple testing", "These differences were significantly ...".
_SAID_NEXT = re.compile(r"\s*(?:both|these|the|all|neither)\s+(?:findings|differences|results|comparisons)\b", re.I)


def _said_next(doc: StatText, end: int) -> bool | None:
    if not _SAID_NEXT.match(doc.plain, end):
        return None
    next_start = bisect.bisect_right(doc.sentence_starts, end)
    sentence = doc.plain[end : doc.sentence_starts[next_start] if next_start < len(doc.sentence_starts) else None]
    if re.search(r"\d", sentence):
        return None
    no_difference, difference = _NO_DIFFERENCE_SAID.search(sentence), _DIFFERENCE_SAID.search(sentence)
    return False if no_difference and not difference else True if difference and not no_difference else None


def _unbalanced(quote: str) -> bool:
    return quote.count(")") > quote.count("(") or quote.count("]") > quote.count("[")


# How far a quote reaches for the other half of a bracket it cuts: within its clause, never past a line.
_BRACKET_REACH = 120
_PAIRS = {"(": ")", "[": "]"}


def _balanced(text: str, start: int, end: int) -> tuple[int, int]:
    """``start, end`` widened so that every bracket the quote holds is closed in it: "24% to 4% (p=0.007"
    reaches its ")", "RR) of all-cause dementia was 0.80" its "(". A bracket whose other half is not near (on the
    same line, within ``_BRACKET_REACH``) is cut off instead, with what follows or precedes it."""
    for opening, closing in _PAIRS.items():
        depth, unmatched_close = 0, -1
        for at in range(start, end):
            if text[at] == opening:
                depth += 1
            elif text[at] == closing:
                if depth:
                    depth -= 1
                else:
                    unmatched_close = at
        if unmatched_close >= 0:  # a close with no open in the quote: reach back for the open
            found = _reach(text, unmatched_close, -1, opening, closing, max(0, start - _BRACKET_REACH))
            start = found if found is not None else unmatched_close + 1
        while depth:  # an open with no close: reach on for the close
            found = _reach(text, end - 1, 1, closing, opening, min(len(text), end + _BRACKET_REACH))
            if found is None:
                end = text.rindex(opening, start, end)
                break
            end, depth = found + 1, depth - 1
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1] in " ;,":
        end -= 1
    return start, end


def _reach(text: str, at: int, step: int, wanted: str, other: str, limit: int) -> int | None:
    """The position of the ``wanted`` bracket that pairs with the one at or before ``at`` (moving by ``step``),
    before ``limit`` and on the same line; None when there is none."""
    depth = 0
    position = at + step
    while (position >= limit if step < 0 else position < limit) and text[position] != "\n":
        if text[position] == other:
            depth += 1
        elif text[position] == wanted:
            if not depth:
                return position
            depth -= 1
        position += step
    return None


def _effect(doc: StatText, draft: Draft) -> Effect:
    start, end = draft.start, draft.end
    while start < end and doc.original[start].isspace():
        start += 1
    # "(HR 0.77, 95% CI 0.72-0.82)": the interval's pattern may take the close of a bracket opened before
    # the quote; the quote ends before it.
    while end > start and doc.original[end - 1] in ")]" and _unbalanced(doc.original[start:end]):
        end -= 1
    # A bracket left open or closed inside the quote is completed from the text around it.
    start, end = _balanced(doc.original, start, end)
    draft.end = end
    sentence = doc.plain[doc.context_start(start) : draft.end]
    # A mean difference too may be one arm's change ("the mean change from baseline with X was -3.2 mmHg (95% CI
    # -4.0 to -2.4)"); a ratio or a standardised difference always compares two groups.
    within = draft.within or (
        draft.measure in ("p_only", "percent_change", "group_values", "MD")
        and pt.within_group_words().search(sentence) is not None
        and pt.between_group_words().search(sentence) is None
    )
    return Effect(
        measure=draft.measure,
        value=draft.value,
        ci_low=draft.low,
        ci_high=draft.high,
        ci_level=draft.level,
        p=draft.p,
        groups=tuple(draft.groups),
        significant=judged(draft.measure, draft.p, draft.low, draft.high),
        within_group=within,
        unit=_unit(doc.original, draft.measure, draft.value, start, draft.end),
        ci_sides=draft.sides if draft.low is not None else None,
        quote=doc.original[start : draft.end],
        start=start,
        end=draft.end,
    )


_PER_UNIT = re.compile(pt.PER_UNIT)
# A difference's unit, written after its value: "-7.0 mm", "2.3 kg/m2", "4.1 percentage points".
_UNIT_AFTER = re.compile(r"(?:\s*(?:±|\+/-)\s*[\d.]+)?\s*(percentage points|%|[A-Za-zµ]+(?:/[A-Za-z0-9.-]+)*)")
_NOT_UNITS = frozenset({"CI", "95", "to", "and", "vs", "p", "P", "in", "with", "for", "or", "SD", "SE", "e"})


def _unit(text: str, measure: str, value: float | None, start: int, end: int) -> str | None:
    """The unit of a mean or risk difference ("SD" for a standardised one, "%" for a percent change), or what a
    per-unit ratio is per ("per SD", "per 10 nmol/L"); None for a ratio of two groups or a unit unstated."""
    if measure == "SMD":
        return "SD"
    if measure == "percent_change":
        return "%"
    if measure in RATIO_MEASURES:
        per = _PER_UNIT.search(text, start, end)
        return collapse_whitespace(per.group(0)) if per else None
    if measure not in ("MD", "RD") or value is None:
        return None
    quote = pt.normalised(text[start:end])
    for written in re.finditer(pt.NUM, quote):
        if abs(number(written.group(0))) == abs(value):
            match = _UNIT_AFTER.match(quote, written.end())
            return match.group(1) if match and match.group(1) not in _NOT_UNITS else None
    return None
