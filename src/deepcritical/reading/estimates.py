"""The statistics reader's estimates: a value with its interval after a measure's name ("HR 0.77, 95% CI
0.72-0.82"), a measure's name then its value ("OR = 2.1"), and a percent change ("reduced by 21%"); groups'
own values with their intervals written one after another are each group's value."""

from __future__ import annotations

import re
from itertools import pairwise
from typing import cast

from deepcritical.reading import patterns as pt
from deepcritical.reading.effects import MEASURES, RATIO_MEASURES, Measure
from deepcritical.reading.stat_text import GROUP_GAP, Draft, StatText, number

# How far before a value its measure's name may stand ("hazard ratio for death at 5 years was 0.77").
_NAME_REACH = 150
# A hazard or odds ratio above this is a heart rate or a count, not a ratio.
_LARGEST_RATIO = 60.0
_RATIO_CONTEXT = re.compile(
    r"(?i:odds|hazard|risk\s+ratio|relative\s+risk|rate\s+ratio|ratio\s+of\s+(?:geometric\s+)?means|mean\s+ratio"
    # "the ratio of episode rates for the real group compared to the sham group was 0.99 (95% CI ...)"
    r"|ratio\s+of\s+(?:[\w-]+\s+){0,3}?(?:rates|risks|incidences|proportions))"
)
_RATIO_JUST_BEFORE = re.compile(rf"(?:{_RATIO_CONTEXT.pattern})[^\d;]{{0,20}}$")
# A vaccine's or a measure's efficacy is a fall in risk: "a vaccine efficacy of 11.7% (95% CI -41.3 to 44.9)" is
# -11.7 [-44.9, 41.3], as "reduced by 11.7%" is.
_EFFICACY_BEFORE = re.compile(r"\befficacy\s*(?:\([^()]{0,20}\)\s*)?(?:of|was|is|[:=,])?\s*$", re.IGNORECASE)
# A ratio restating the percent change just before it: "reduced by 34% in the treated group (0.66 [0.46-0.95])".
_PERCENT_JUST_BEFORE = re.compile(r"\bby\s+(?P<percent>\d+(?:\.\d+)?)\s?%[^().;\d]{0,60}\(\s*$")
# A value named as a change or a difference just before it ("an estimated reduction (95% CI) of 4.3"), or
# just after its interval ("16% (95% CI: 5 to 26%) lower than the control group").
_CHANGE_BEFORE = re.compile(
    r"(?i:reduc|differ|chang|increas|decreas|fell|fall|drop|declin|rose|rise|shorten|cut)\w*\s*"
    r"(?:\(\d{2}\s?%\s*CI\))?\s*(?:of|by|was|is|:|,)?\s*$"
)
# A value stated as a fall just before it: "fell by 8.2 mmHg (95% CI -10.1 to -6.3)" is -8.2, "reduced by 24%
# (95% CI 0 to 42%)" is -24 [-42, 0]; "and severe infection by 35% (...)" after such a fall is one too.
_FALL_BY = re.compile(
    r"(?:\b(?i:fell|falls?|dropped|drops?|declined|decreased|reduced|lowered|cut|shortened|halved)\s+"
    r"(?:(?:[\w-]+|\([^()]{1,80}\))\s+){0,9}?|\b(?i:reduction|decrease|fall|drop|decline)\s+(?:of\s+)?)"
    r"by\s+(?:an?\s+(?:mean|average|median)\s+of\s+)?$"
)
_BY_JUST_BEFORE = re.compile(r"\bby\s+$")
# One group's own change, with its interval: "the patients in the intervention group presented a decrease of 0.48 kg
# (95% CI ...)", "the control arm showed a mean increase in weight of 1.2 kg (...)": a group's value within its arm,
# no estimate between the arms.
_ONE_GROUP_S_CHANGE = re.compile(
    r"\b(?:group|arm)\s+(?:showed|presented|had|experienced|exhibited|reported)\s+an?\s+(?:mean\s+|average\s+)?"
    r"(?:decrease|increase|change|reduction|gain|loss|rise|fall|improvement|decline)\s+"
    r"(?:in\s+[\w\s-]{1,30}?\s+)?of\s*$",
    re.IGNORECASE,
)
# A bracketed interval after a value stated as a change "by" it is the change's: "differed by 2.7 mmHg [-1.1 to
# 6.4]", "fell by 3.0 points (1.2 to 4.8)".
_CHANGED_BY_JUST_BEFORE = re.compile(
    r"\b(?i:differ|reduc|increas|decreas|fell|fall|drop|declin|rose|rise|lower|improv|shorten|length)\w*\s+by\s+"
    r"(?:an?\s+(?:mean|average|median)\s+of\s+)?$"
)
# A bracketed interval after "median" or "mean" is a group's value and its range, not an estimate.
_AVERAGE_JUST_BEFORE = re.compile(r"\b(?i:median|mean|average)\s*(?:[=:]|was|is|of)?\s*$")
# Two values with their intervals joined by "vs" are each group's value ("-5.02 [95% CI -5.9, -4.1] kg vs. -4.1
# [95% CI -4.8, -3.3] kg"), not two estimates.
# Never across a semicolon: "fell by 8.2 mmHg (95% CI ...) compared with placebo; NNT 12 (95% CI ...)" is two results.
_VERSUS_GAP = re.compile(r"[^\d;]{0,20}?\b(?:vs\.?|versus|compared\s+(?:with|to))[^\d;]{0,20}", re.IGNORECASE)
# The second group's range after the first's ("median 6 [IQR 4-9] vs 7 [5-10] days"): a group's value, no estimate.
_RANGE_VERSUS_JUST_BEFORE = re.compile(r"\b(?i:IQR|interquartile\s+range|range)\b[^\])]*[\])]\s*(?i:vs\.?|versus)\s*$")
_CHANGE_AFTER = re.compile(r"[\s;,)\]]*(?:p\s*[<=>][^)]*\)\s*)?(?i:lower|higher|more|fewer|less|greater)\b")


def _measure(name: str) -> Measure:
    """A measure named by its group in ``patterns.measure_names`` (the groups are named by measure)."""
    if name not in MEASURES:
        raise ValueError(f"not a measure: {name}")
    return cast(Measure, name)


def _measure_before(doc: StatText, at: int, floor: int) -> tuple[Measure, int] | None:
    """The nearest measure named before ``at`` (after ``floor``, in the same sentence), with its start."""
    floor = max(floor, doc.sentence_start(at), at - _NAME_REACH)
    found: tuple[Measure, int] | None = None
    for match in pt.measure_names().finditer(doc.plain, floor, at):
        name = match.lastgroup
        if name is not None and not _lookalike_name(doc, name, match.group(0)) and not _said_of(doc, match, at):
            found = (_measure(name), match.start())
    return found


# "a statistically significant difference seen in the IBS SSS for the website, with the no website group having a
# lower IBS SSS score than the website groups (IBS SSS no website =162.8 (95% CI 137.4-188.3), ...)": a difference
# said to be there (or not) names no value far after it; "no significant difference between the groups at six
# [0.012 (-0.016, 0.041)" names the value close after it.
_SAID_OF_DIFFERENCE = re.compile(r"\b(?:significant|no|not|any|some)\s+$", re.IGNORECASE)
_SAID_OF_REACH = 60


def _said_of(doc: StatText, name: re.Match[str], at: int) -> bool:
    return (
        name.group(0).lower().startswith("difference")
        and at - name.end() > _SAID_OF_REACH
        and _SAID_OF_DIFFERENCE.search(doc.plain, max(0, name.start() - 30), name.start()) is not None
    )


def _lookalike_name(doc: StatText, measure: str, written: str) -> bool:
    return (measure == "HR" and doc.heart_rate and written.endswith(("HR", "HRs"))) or (
        measure == "RR" and doc.respiratory_rate and written.endswith(("RR", "RRs"))
    )


def find_estimates(doc: StatText) -> list[Draft]:
    drafts: list[Draft] = []
    previous_end = 0
    fell_in_sentence = -1  # the start of the sentence whose last estimate was stated as a fall
    labelled = list(pt.value_with_ci().finditer(doc.plain))
    bare = [m for m in pt.value_with_bare_interval().finditer(doc.plain)]
    for match in sorted(labelled + bare, key=lambda m: m.start()):
        if not doc.free(match.start(), match.end()):
            continue
        has_label = "level" in match.re.groupindex
        level_text = (match.group("level") or match.group("level2")) if has_label else None
        if has_label and doc.infusion and level_text is None:
            continue  # "CI" here is a continuous infusion
        named, named_here = _name_of(doc, match, drafts, previous_end, has_label=has_label)
        if (
            not has_label
            and named is None
            and not _ci_label_just_before(doc, match.start())
            and not _CHANGED_BY_JUST_BEFORE.search(doc.plain, max(0, match.start() - 60), match.start())
        ):
            continue  # "4.0 (2.0-6.0)": a median and its range, read as a group's value
        before = doc.plain[max(doc.sentence_start(match.start()), match.start() - 160) : match.start()]
        if not has_label and (_AVERAGE_JUST_BEFORE.search(before) or _RANGE_VERSUS_JUST_BEFORE.search(before)):
            continue  # "median = 4 [1-8] wk": a group's median and its range, whatever measure the sentence names
        value = number(match.group("value"))
        bounds = match.groupdict()
        low = number(bounds["lo"] or bounds.get("lo2") or "")
        high = number(bounds["hi"] or bounds.get("hi2") or bounds.get("hi3") or "")
        sentence = doc.sentence_start(match.start())
        fall = _FALL_BY.search(before) is not None or (
            fell_in_sentence == sentence and _BY_JUST_BEFORE.search(before) is not None
        )
        efficacy = _EFFICACY_BEFORE.search(before) is not None and "%" in match.group(0)
        if efficacy:
            value, low, high = -value, -high, -low
        elif fall and not min(low, high) <= value <= max(low, high) and min(low, high) <= -value <= max(low, high):
            value = -value  # "fell by 8.2 mmHg (95% CI -10.1 to -6.3)"
        elif fall and value > 0 and min(low, high) >= 0:
            value, low, high = -value, -max(low, high), -min(low, high)  # "reduced by 24% (95% CI 0 to 42%)"
        if not min(low, high) <= value <= max(low, high):
            continue  # an estimate lies inside its interval: this interval is some other value's
        measure, start = _estimate_measure(doc, match, named, value)
        one_group = named is None and _ONE_GROUP_S_CHANGE.search(before) is not None
        if one_group:
            measure = "group_values"  # "the intervention group presented a decrease of 0.48 kg (95% CI ...)"
        if efficacy:
            measure = "percent_change"
        if measure == "MD" and _risk_difference(doc, match, named=named_here):
            measure = "RD"
        if measure in RATIO_MEASURES and not 0 < value <= _LARGEST_RATIO:
            continue
        doc.take(start, match.end())
        previous_end = match.end()
        fell_in_sentence = sentence if fall else fell_in_sentence
        level = float(level_text) if level_text else (95.0 if has_label else None)
        sides_text = (match.group("level_sides") or match.group("level_sides2")) if has_label else None
        sides = 1 if sides_text in ("one", "1") else 2
        drafts.append(Draft(measure, start, match.end(), value, low, high, level, sides=sides, within=one_group))
    _groups_joined_by_versus(doc, drafts)
    for match in pt.measure_then_value().finditer(doc.plain):
        value_text = match.group("value")
        measure = _measure(next(n for n, v in match.groupdict().items() if v is not None and n != "value"))
        if not doc.free(match.start(), match.end()):
            continue
        if _lookalike_name(doc, measure, match.group(measure)) or (measure == "MD" and "ifference" in match.group(0)):
            continue  # a bare "difference of 3" is too loose without an interval
        value = number(value_text)
        if measure in RATIO_MEASURES and not 0 < value <= _LARGEST_RATIO:
            continue
        doc.take(match.start(), match.end())
        drafts.append(Draft(measure, match.start(), match.end(), value))
    return _grouped(doc, drafts)


def _name_of(
    doc: StatText, match: re.Match[str], drafts: list[Draft], previous_end: int, *, has_label: bool
) -> tuple[tuple[Measure, int] | None, bool]:
    """The measure an interval's value is of, and where its name starts: a name before it, else the measure of the
    estimate just before it in its sentence or called "the estimate", else the ratio a bare interval restates; and
    whether the name stands here (not the measure of the estimate before, already judged a risk difference or not)."""
    named = _measure_before(doc, match.start(), previous_end)
    if named is not None:
        return named, True
    if (
        drafts
        # "37.5 (95% CI ...) in one group, compared with 15.2 (...) in the other (ratio of means 0.41, 95% CI ...)":
        # a ratio named just before a value is its measure, not the groups' values before it
        and not (
            drafts[-1].measure == "group_values"
            and _RATIO_JUST_BEFORE.search(doc.plain, max(0, match.start() - 80), match.start())
        )
        and drafts[-1].end >= doc.sentence_start(match.start())
    ):
        return (drafts[-1].measure, match.start()), False  # "... at six [0.012 (...)] or 12 months [0.011 (...)]"
    if drafts and _estimate_named_before(doc, match.start(), drafts[-1]):
        return (drafts[-1].measure, match.start()), False  # "RR ... was 0.80 (95% CI ...). ... the estimate was 0.95"
    return (None if has_label else _ratio_restating_a_change(doc, match, drafts)), False


def _ratio_restating_a_change(doc: StatText, match: re.Match[str], drafts: list[Draft]) -> tuple[Measure, int] | None:
    """A bare "(0.66 [0.46-0.95])" just after "by 34%": the ratio the percent change restates (1 - 0.34), of the
    ratio measure named last (else a relative risk)."""
    said = _PERCENT_JUST_BEFORE.search(doc.plain, max(0, match.start() - 100), match.start())
    if said is None:
        return None
    change, value = float(said.group("percent")) / 100, number(match.group("value"))
    if min(abs(value - (1 - change)), abs(value - (1 + change))) > 0.011:
        return None
    ratios = [draft.measure for draft in drafts if draft.measure in RATIO_MEASURES]
    return (ratios[-1] if ratios else "RR"), match.start()


def _groups_joined_by_versus(doc: StatText, drafts: list[Draft]) -> None:
    """Two differences or values, each with its interval, joined by "vs": each group's value, not estimates
    (ratios stay estimates: "HR 0.8 (...) vs 0.9 (...)" compares two subgroups' ratios)."""
    for first, second in pairwise(drafts):
        if (
            first.measure not in RATIO_MEASURES
            and second.measure not in RATIO_MEASURES
            and first.end <= second.start
            and _VERSUS_GAP.fullmatch(doc.plain[first.end : second.start])
        ):
            first.measure = second.measure = "group_values"


def _grouped(doc: StatText, drafts: list[Draft]) -> list[Draft]:
    """Groups' own estimates written one after another ("41.9 months (95% CI 31.8-58.0) in one group and
    30.7 months (95% CI 22.7-38.3) in the other") are one result: each group's value as written; never across a
    p-value or a sentence's end (each pair of "93.2% [95% CI ...] vs 66.7% [95% CI ...]; P < .001" is its own)."""
    merged: list[Draft] = []
    for draft in sorted(drafts, key=lambda d: d.start):
        if draft.measure == "group_values":
            draft.groups = [doc.original[draft.start : draft.end].strip()]
            last = merged[-1] if merged else None
            if (
                last
                and last.measure == "group_values"
                and draft.start - last.end <= GROUP_GAP
                and doc.sentence_start(draft.start) <= last.end
                and not pt.p_value().search(doc.plain, last.end, draft.start)
            ):
                last.groups += draft.groups
                last.end, last.value, last.low, last.high, last.level = draft.end, None, None, None, None
                continue
        merged.append(draft)
    return merged


# "the estimate was", "the pooled estimate of", "the summary estimate fell to": a value called an estimate
# after one the text has named (the same measure, a sentence or two on).
_ESTIMATE_WORD = re.compile(
    r"\bestimates?\s+(?:was|were|is|of|became|(?:fell|rose|changed|moved)\s+to|[:=])\s*$", re.IGNORECASE
)
_ESTIMATE_REACH = 400


def _estimate_named_before(doc: StatText, at: int, last: Draft) -> bool:
    """Whether the words just before ``at`` call it "the estimate" and the text's last result, not far before,
    is an effect size with its interval, whose measure it then is."""
    window = doc.plain[max(doc.sentence_start(at), at - 60) : at]
    return (
        last.low is not None
        and last.measure not in ("group_values", "p_only")
        and at - last.end <= _ESTIMATE_REACH
        and _ESTIMATE_WORD.search(window) is not None
    )


def _ci_label_just_before(doc: StatText, at: int) -> bool:
    """ "OR (95% CI) 2.1 (1.2-3.4)": the label stands before the value."""
    window = doc.plain[max(doc.sentence_start(at), at - 40) : at]
    return pt.ci_label_alone().search(window) is not None and not re.search(r"\d\s*[)\]]?\s*[,;]?\s*$", window[:-1])


def _estimate_measure(
    doc: StatText, match: re.Match[str], named: tuple[Measure, int] | None, value: float
) -> tuple[Measure, int]:
    if named is not None:
        return named
    sentence = doc.plain[doc.context_start(match.start()) : match.start()]
    just_before, just_after = sentence[-40:], doc.plain[match.end() : match.end() + 25]
    changed = _CHANGE_BEFORE.search(just_before) or _CHANGE_AFTER.match(just_after)
    if changed and "%" in doc.plain[match.start("value") : match.end("value") + 3]:
        return "percent_change", match.start()
    if _RATIO_CONTEXT.search(sentence):
        return ("OR" if "odds" in sentence.lower() else "HR" if "hazard" in sentence.lower() else "RR"), match.start()
    if value < 0 or number(match.group("lo") or match.group("lo2")) < 0 or changed:
        return "MD", match.start()
    if _change_against_a_comparator(doc, match, sentence):
        return "MD", match.start()
    return "group_values", match.start()


# "Inhaled steroids increased the stained area of versican (9.6% [CI 0.9 to 18.3%]; p = 0.03) ... compared to
# placebo": a value with its interval after the outcome a treatment changed, the comparator named after it, is
# the change against that comparator; "12% in the treated group (95% CI 9-15%)" is a group's value.
_CHANGE_VERB = re.compile(
    r"\b(?:increased|reduced|decreased|improved|lowered|raised|shortened|lengthened|prolonged)\b", re.IGNORECASE
)
_COMPARATOR_AFTER = re.compile(r"\b(?:compared\s+(?:to|with)|than|versus|vs\.?)\s", re.IGNORECASE)
_GROUP_NAMED_BEFORE = re.compile(r"\b(?:groups?|arms?|patients|participants|subjects)\b[^\d]{0,25}$", re.IGNORECASE)


def _change_against_a_comparator(doc: StatText, match: re.Match[str], sentence: str) -> bool:
    after = doc.plain[match.end() : match.end() + 200]
    stop = re.search(r"\.\s+(?=[A-Z])|\n", after)
    after = after[: stop.start() if stop else None]
    return (
        _CHANGE_VERB.search(sentence) is not None
        and _COMPARATOR_AFTER.search(after) is not None
        and _GROUP_NAMED_BEFORE.search(sentence[-40:]) is None
        and re.search(r"\b(?:group|arm)\b", after[:40], re.IGNORECASE) is None
    )


_PERCENTAGE_POINTS = re.compile(r"\s?(?:percentage|percent)[\s-]+points?\b", re.IGNORECASE)
_PERCENT = re.compile(r"\d\s?%")
_AVERAGE = re.compile(r"\b(?:mean|median|average)\b", re.IGNORECASE)
_RATES = re.compile(r"\b(?:rates?|proportions?|risks?|incidences?)\b", re.IGNORECASE)


def _risk_difference(doc: StatText, match: re.Match[str], *, named: bool) -> bool:
    """Whether a difference is one of two risks: in percentage points, after the groups' own percentages in
    the same sentence ("mortality was 28.5% with rosuvastatin and 24.9% with placebo (difference 3.6
    percentage points ...)"). A difference of averages measured in percent ("mean HbA1c 7.1% vs 7.6%
    (difference -0.5 percentage points)") stays a mean difference: a sentence naming a mean, median or
    average is not read as one of risks."""
    sentence = doc.plain[doc.sentence_start(match.start()) : match.start()]
    if _AVERAGE.search(sentence):
        return False
    if _PERCENTAGE_POINTS.match(doc.plain, match.end("value")):
        return len(_PERCENT.findall(sentence)) >= 2
    # "The difference in success rates was 56.6% (95% CI 41.4-70.0%)": a difference, so named, of two rates in
    # percent (a value read as a difference for its sign alone, "EDOM: -2.2%", stays a mean difference).
    in_percent = re.match(r"\s?%", doc.plain[match.end("value") : match.end("value") + 2]) is not None
    return named and in_percent and (len(_PERCENT.findall(sentence)) >= 2 or _RATES.search(sentence) is not None)


_FALL = re.compile(
    r"\b(?:fewer|less|lower\w*|reduc\w*|decreas\w*|declin\w*|drop\w*|fell|falls?|cut\w*|halv\w*|shorten\w*)\b",
    re.IGNORECASE,
)


def find_percent_changes(doc: StatText) -> list[Draft]:
    drafts = []
    for match in pt.percent_change().finditer(doc.plain):
        key = "v" if match.group("v") else "v2"
        if doc.free(match.start(key), match.end(key)):
            doc.take(match.start(), match.end())
            # A fall is a negative change: "fell by 7.3%" is -7.3, "21% fewer (95% CI 0 to 38%)" -21 [-38, 0]; the
            # word or verb of change says which ("increased by less than 5%" is a rise).
            sign = -1.0 if _FALL.search(match.group("word") or match.group("verb") or "") else 1.0
            draft = Draft("percent_change", match.start(), match.end(), sign * number(match.group(key)))
            if match.group("lo") is not None:
                low, high = sign * number(match.group("lo")), sign * number(match.group("hi"))
                draft.low, draft.high = min(low, high), max(low, high)
                draft.level = float(match.group("level") or match.group("level2") or 95)
                draft.sides = 1 if (match.group("level_sides") or match.group("level_sides2")) in ("one", "1") else 2
            drafts.append(draft)
    return drafts
