"""The statistics reader: every statistical result a text states, read by the field's conventions of
writing them (no model). An estimate is a value with its interval after a measure's name ("HR 0.77,
95% CI 0.72-0.82"); each group's value is a count, a percentage, a mean ± SD or one side of "x vs y";
a p-value belongs to the result it follows, else it is a result of its own (``p_only``).

Everything is matched on a normalised copy of the text of the same length (unicode minus, middle
dot, thin spaces made plain), so every offset is an offset into the text as given."""

from __future__ import annotations

import re
from itertools import pairwise
from typing import cast

from deepcritical.reading import patterns as pt
from deepcritical.reading.effects import MEASURES, RATIO_MEASURES, Effect, Measure, judged
from deepcritical.reading.p_values import attach_p_values, find_p_values
from deepcritical.reading.stat_text import Draft, StatText, between

# How far before a value its measure's name may stand ("hazard ratio for death at 5 years was 0.77").
_NAME_REACH = 150
# How far apart two values of the same kind may stand and still be groups of one comparison.
_GROUP_GAP = 160
# A hazard or odds ratio above this is a heart rate or a count, not a ratio.
_LARGEST_RATIO = 60.0
_RATIO_CONTEXT = re.compile(r"(?i:odds|hazard|risk\s+ratio|relative\s+risk|rate\s+ratio)")
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
# A bracketed interval after "median" or "mean" is a group's value and its range, not an estimate.
_AVERAGE_JUST_BEFORE = re.compile(r"\b(?i:median|mean|average)\s*(?:[=:]|was|is|of)?\s*$")
# Two values with their intervals joined by "vs" are each group's value ("-5.02 [95% CI -5.9, -4.1] kg vs. -4.1
# [95% CI -4.8, -3.3] kg"), not two estimates.
_VERSUS_GAP = re.compile(r"[^\d]{0,20}?\b(?:vs\.?|versus|compared\s+(?:with|to))[^\d]{0,20}", re.IGNORECASE)
_CHANGE_AFTER = re.compile(r"[\s;,)\]]*(?:p\s*[<=>][^)]*\)\s*)?(?i:lower|higher|more|fewer|less|greater)\b")


def read_effects(text: str) -> list[Effect]:
    """Every statistical result ``text`` states, in the order they are written."""
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
    drafts = _estimates(doc)
    p_values = find_p_values(doc)
    drafts += _percent_changes(doc)
    drafts += _group_values(doc, [start for start, _end, _p in p_values])
    drafts.sort(key=lambda d: d.start)
    drafts = attach_p_values(doc, drafts, p_values)
    return [_effect(doc, draft) for draft in sorted(drafts, key=lambda d: (d.start, d.end))]


def _number(text: str) -> float:
    return float(text.replace("+", "").replace(",", ""))


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


def _estimates(doc: StatText) -> list[Draft]:
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
        named = _measure_before(doc, match.start(), previous_end)
        if named is None and drafts and drafts[-1].end >= doc.sentence_start(match.start()):
            named = (drafts[-1].measure, match.start())  # "... at six [0.012 (...)] or 12 months [0.011 (...)]"
        elif named is None and drafts and _estimate_named_before(doc, match.start(), drafts[-1]):
            # "RR ... was 0.80 (95% CI ...). ... the estimate was 0.95 (...)"
            named = (drafts[-1].measure, match.start())
        if not has_label and named is None and not _ci_label_just_before(doc, match.start()):
            continue  # "4.0 (2.0-6.0)": a median and its range, read as a group's value
        before = doc.plain[max(doc.sentence_start(match.start()), match.start() - 160) : match.start()]
        if not has_label and _AVERAGE_JUST_BEFORE.search(before):
            continue  # "median = 4 [1-8] wk": a group's median and its range, whatever measure the sentence names
        value = _number(match.group("value"))
        bounds = match.groupdict()
        low = _number(bounds["lo"] or bounds.get("lo2") or "")
        high = _number(bounds["hi"] or bounds.get("hi2") or bounds.get("hi3") or "")
        sentence = doc.sentence_start(match.start())
        fall = _FALL_BY.search(before) is not None or (
            fell_in_sentence == sentence and _BY_JUST_BEFORE.search(before) is not None
        )
        if fall and not min(low, high) <= value <= max(low, high) and min(low, high) <= -value <= max(low, high):
            value = -value  # "fell by 8.2 mmHg (95% CI -10.1 to -6.3)"
        elif fall and value > 0 and min(low, high) >= 0:
            value, low, high = -value, -max(low, high), -min(low, high)  # "reduced by 24% (95% CI 0 to 42%)"
        if not min(low, high) <= value <= max(low, high):
            continue  # an estimate lies inside its interval: this interval is some other value's
        measure, start = _estimate_measure(doc, match, named, value)
        if measure == "MD" and _risk_difference(doc, match, named=named is not None):
            measure = "RD"
        if measure in RATIO_MEASURES and not 0 < value <= _LARGEST_RATIO:
            continue
        doc.take(start, match.end())
        previous_end = match.end()
        fell_in_sentence = sentence if fall else fell_in_sentence
        level = float(level_text) if level_text else (95.0 if has_label else None)
        sides_text = (match.group("level_sides") or match.group("level_sides2")) if has_label else None
        sides = 1 if sides_text in ("one", "1") else 2
        drafts.append(Draft(measure, start, match.end(), value, low, high, level, sides=sides))
    _groups_joined_by_versus(doc, drafts)
    for match in pt.measure_then_value().finditer(doc.plain):
        value_text = match.group("value")
        measure = _measure(next(n for n, v in match.groupdict().items() if v is not None and n != "value"))
        if not doc.free(match.start(), match.end()):
            continue
        if _lookalike_name(doc, measure, match.group(measure)) or (measure == "MD" and "ifference" in match.group(0)):
            continue  # a bare "difference of 3" is too loose without an interval
        value = _number(value_text)
        if measure in RATIO_MEASURES and not 0 < value <= _LARGEST_RATIO:
            continue
        doc.take(match.start(), match.end())
        drafts.append(Draft(measure, match.start(), match.end(), value))
    return _grouped(doc, drafts)


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
                and draft.start - last.end <= _GROUP_GAP
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
    if value < 0 or _number(match.group("lo") or match.group("lo2")) < 0 or changed:
        return "MD", match.start()
    return "group_values", match.start()


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


def _percent_changes(doc: StatText) -> list[Draft]:
    drafts = []
    for match in pt.percent_change().finditer(doc.plain):
        key = "v" if match.group("v") else "v2"
        if doc.free(match.start(key), match.end(key)):
            doc.take(match.start(), match.end())
            # A fall is a negative change: "fell by 7.3%" is -7.3, "21% fewer (95% CI 0 to 38%)" -21 [-38, 0]; the
            # word or verb of change says which ("increased by less than 5%" is a rise).
            sign = -1.0 if _FALL.search(match.group("word") or match.group("verb") or "") else 1.0
            draft = Draft("percent_change", match.start(), match.end(), sign * _number(match.group(key)))
            if match.group("lo") is not None:
                low, high = sign * _number(match.group("lo")), sign * _number(match.group("hi"))
                draft.low, draft.high = min(low, high), max(low, high)
                draft.level = float(match.group("level") or match.group("level2") or 95)
                draft.sides = 1 if (match.group("level_sides") or match.group("level_sides2")) in ("one", "1") else 2
            drafts.append(draft)
    return drafts


# "by a mean of 2.3 weeks in one arm and 1.9 weeks in the other": each arm's change, within that arm.
_CHANGED_BY = re.compile(r"\bby\s+(?:an?\s+(?:mean|average|median)\s+of\s+)?$", re.IGNORECASE)
# "(baseline 12.9 ± 2.9 vs. 14.7 ± 2.6 vs. 15.8 ± 2.1)": one group's values over time, the first at baseline.
_FROM_BASELINE = re.compile(r"\b(?:baseline|before|pre-?(?:treatment|operative|intervention))\s*[:=,]?\s*$", re.I)


def _group_values(doc: StatText, p_starts: list[int]) -> list[Draft]:
    """Each group's value: two or more values of one kind, close together, with no p-value between."""
    drafts = []
    for match in (*pt.versus_pair().finditer(doc.plain), *pt.paired_values().finditer(doc.plain)):
        names = ("a", "b") if match.group("a") else ("a2", "b2")
        spans = [(match.start(g), match.end(g)) for g in names]
        if (
            match.re is pt.versus_pair()
            and match.group("name")
            and _percent(match.group("a")) != _percent(match.group("b"))
        ):
            continue  # "DSG 1% vs. placebo 1.9 cm": a named group's value is of the other's kind
        # Each value free (a p-value may stand between them: "2.3 weeks (p = 0.004) in one arm and 1.9 weeks ...").
        if all(doc.free(start, end) for start, end in spans):
            if names[0] == "a" and match.re is pt.versus_pair():
                spans += _more_versus(doc, spans)
            for start, end in spans:
                doc.take(start, end)
            groups = [doc.original[start:end].strip() for start, end in spans]
            draft = Draft("group_values", spans[0][0], spans[-1][1], groups=groups)
            before = doc.plain[max(0, draft.start - 30) : draft.start]
            draft.within = _CHANGED_BY.search(before) is not None or _FROM_BASELINE.search(before) is not None
            drafts.append(draft)
    for kind in (pt.count_value(), pt.range_value(), pt.mean_sd_value(), pt.percent_value()):
        spans = [(m.start(), m.end()) for m in kind.finditer(doc.plain) if doc.free(m.start(), m.end())]
        for cluster in _clusters(doc.plain, spans, p_starts):
            if len(cluster) < 2:
                continue
            for start, end in cluster:
                doc.take(start, end)
            groups = [doc.original[start:end].strip() for start, end in cluster]
            drafts.append(Draft("group_values", cluster[0][0], cluster[-1][1], groups=groups))
    return drafts


def _percent(value: str | None) -> bool:
    return value is not None and "%" in value


def _more_versus(doc: StatText, pair: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The groups after a pair: "12.9 vs. 14.7 vs. 15.8 vs. 16.9"; after "and" or a comma only percentages
    after percentages ("100% versus 62.5% and 75%")."""
    more: list[tuple[int, int]] = []
    percents = all("%" in doc.plain[start:end] for start, end in pair)
    end = pair[-1][1]
    while (found := pt.versus_next().match(doc.plain, end)) is not None and doc.free(found.start("c"), found.end("c")):
        value = found.group("c")
        if not re.search(r"vs|versus|compared", doc.plain[end : found.start("c")]) and not (percents and "%" in value):
            break
        more.append((found.start("c"), found.end("c")))
        end = found.end("c")
    return more


def _new_table_row(gap: str) -> bool:
    """A table's rows: values on consecutive lines are one row; a line between them (the row's p-value,
    the next row's name) starts another."""
    return any(line.strip() for line in gap.split("\n")[1:-1])


# A sentence's end in prose ("... in 46%. The average reduction was 53% ..."): one comparison's values stand in one
# sentence. A line break is not one here: a table's row has its values on consecutive lines.
_FULL_STOP = re.compile(r"(?<![vV]s)(?<!\b[a-z])\.[ \t]+(?=[A-Z(\[])")


def _clusters(text: str, spans: list[tuple[int, int]], p_starts: list[int]) -> list[list[tuple[int, int]]]:
    """Values close together in one sentence with no p-value between; a pair's values are closer to each other
    than to the next pair ("134/394 [34.0%] versus 118/382 [30.9%]), as was ... (39/394 [9.9%] versus ...")."""
    clusters: list[list[tuple[int, int]]] = []
    widest = 0  # the widest gap inside the last cluster
    for start, end in spans:
        cluster = clusters[-1] if clusters else []
        gap = start - cluster[-1][1] if cluster else _GROUP_GAP + 1
        if (
            cluster
            and gap <= _GROUP_GAP
            and (len(cluster) < 2 or gap <= max(60, 2 * widest))
            and not between(p_starts, cluster[-1][1], start)
            and not _new_table_row(text[cluster[-1][1] : start])
            and not _FULL_STOP.search(text, cluster[-1][1], start)
        ):
            cluster.append((start, end))
            widest = max(widest, gap)
        else:
            clusters.append([(start, end)])
            widest = 0
    return clusters


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
        return " ".join(per.group(0).split()) if per else None
    if measure not in ("MD", "RD") or value is None:
        return None
    quote = pt.normalised(text[start:end])
    for number in re.finditer(pt.NUM, quote):
        if abs(_number(number.group(0))) == abs(value):
            match = _UNIT_AFTER.match(quote, number.end())
            return match.group(1) if match and match.group(1) not in _NOT_UNITS else None
    return None
