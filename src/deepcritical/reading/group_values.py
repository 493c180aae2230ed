"""The statistics reader's group values: each group's value where two or more groups' values stand side
by side ("12.9 vs 14.7", "7 (22.6%) and 12 (38.7%)", "4.1 ± 1.2 and 5.0 ± 1.4"), each group's count, range,
mean ± SD or percentage, in the order written."""

from __future__ import annotations

import re

from deepcritical.reading import patterns as pt
from deepcritical.reading.stat_text import GROUP_GAP, Draft, StatText, between

# "by a mean of 2.3 weeks in one arm and 1.9 weeks in the other": each arm's change, within that arm.
_CHANGED_BY = re.compile(r"\bby\s+(?:an?\s+(?:mean|average|median)\s+of\s+)?$", re.IGNORECASE)
# "(baseline 12.9 ± 2.9 vs. 14.7 ± 2.6 vs. 15.8 ± 2.1)": one group's values over time, the first at baseline.
# "mean change ± SD of -8.3 ± 5.8 for placebo vs -8.0 ± 7.8": each arm's change, within that arm; not when the
# words between say the arms are compared ("change did not differ (-0.9 vs -0.2 points; p=0.41)").
_CHANGE_NAMED_BEFORE = re.compile(
    r"\bchanges?\b(?:\s+from\s+baseline)?(?:(?!differ|between|compar|\bvs\b|versus)[^\d.;]){0,25}$", re.IGNORECASE
)
_FROM_BASELINE = re.compile(r"\b(?:baseline|before|pre-?(?:treatment|operative|intervention))\s*[:=,]?\s*$", re.I)


# Numbers that name (time points, groups, grades), not values: "in years 1 and 4", "at weeks 4 and 12".
_NAMES_NUMBERED = re.compile(
    r"\b(?:years?|months?|weeks?|days?|visits?|grades?|types?|stages?|phases?|groups?|arms?|cycles?|sessions?"
    r"|doses?|levels?|questions?|items?)\s+$",
    re.IGNORECASE,
)


def find_group_values(doc: StatText, p_starts: list[int]) -> list[Draft]:
    """Each group's value: two or more values of one kind, close together, with no p-value between."""
    drafts = []
    for match in (*pt.versus_pair().finditer(doc.plain), *pt.paired_values().finditer(doc.plain)):
        names = ("a", "b") if match.group("a") else ("a2", "b2")
        spans = [(match.start(g), match.end(g)) for g in names]
        if names[0] == "a2" and _NAMES_NUMBERED.search(doc.plain, max(0, match.start() - 20), match.start()):
            continue  # "in years 1 and 4, respectively": the numbers name time points or groups
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
            draft.within = any(rule.search(before) for rule in (_CHANGED_BY, _FROM_BASELINE, _CHANGE_NAMED_BEFORE))
            drafts.append(draft)
    for kind in (pt.count_value(), pt.range_value(), pt.mean_sd_value(), pt.percent_value()):
        spans = [(m.start(), m.end()) for m in kind.finditer(doc.plain) if doc.free(m.start(), m.end())]
        for cluster in _clusters(doc.plain, spans, p_starts, same_unit=kind is pt.mean_sd_value()):
            if len(cluster) < 2:
                continue
            for start, end in cluster:
                doc.take(start, end)
            if _participant_flow(doc, cluster[-1][1]) or _not_groups(doc, cluster, kind is pt.percent_value()):
                continue
            for one_comparison in _categories_per_group(doc.plain, cluster) or [cluster]:
                drafts.append(cluster_draft(doc, one_comparison))
    return drafts


def cluster_draft(doc: StatText, cluster: list[tuple[int, int]]) -> Draft:
    groups = [doc.original[start:end].strip() for start, end in cluster]
    draft = Draft("group_values", cluster[0][0], cluster[-1][1], groups=groups)
    before = doc.plain[max(0, draft.start - 30) : draft.start]
    draft.within = (
        any(rule.search(before) for rule in (_CHANGED_BY, _FROM_BASELINE, _CHANGE_NAMED_BEFORE))
        or _from_one_time_to_another(doc, cluster)
        or _AT_TIME_POINTS.match(doc.plain, cluster[-1][1]) is not None
    )
    return draft


# One group's values at time points named after them: "(86% and 84% in years 1 and 4, respectively)".
_AT_TIME_POINTS = re.compile(
    r"\s+(?:in|at|on)\s+(?:the\s+)?(?:years?|months?|weeks?|days?|visits?)\s+\d+(?:\s*,\s*\d+)*,?\s+and\s+\d+\b",
    re.IGNORECASE,
)


# A group named after its values: "0% and 4.5% in the EDWS group, and 0% and 8.7% in the MED group".
_GROUP_NAMED_AFTER = re.compile(
    r"\s+(?:in|for|with|among)\s+(?:the\s+)?[A-Za-z][^\d;,.()]{0,40}?\b(?:group|arm|cohort)s?\b", re.IGNORECASE
)


def _categories_per_group(text: str, cluster: list[tuple[int, int]]) -> list[list[tuple[int, int]]] | None:
    """Several categories' values per group, each group named after its own ("the 1- and 3-year rates were 0% and
    4.5% in the A group, and 0% and 8.7% in the B group"): one comparison per category, the groups' values in the
    groups' order. None when the cluster is not so written (the groups must hold as many values each, two or more)."""
    chunks: list[list[tuple[int, int]]] = [[]]
    for span in cluster:
        chunks[-1].append(span)
        if _GROUP_NAMED_AFTER.match(text, span[1]):
            chunks.append([])
    chunks = [chunk for chunk in chunks if chunk]
    sizes = {len(chunk) for chunk in chunks}
    if len(chunks) < 2 or len(sizes) != 1 or sizes == {1} or not _GROUP_NAMED_AFTER.match(text, cluster[-1][1]):
        return None
    return [list(category) for category in zip(*chunks, strict=True)]


# "from 4.01 ± 3.99 to 9.14 ± 9.9 pg/ml in the low dose group": one group's values before and after. Without one
# group named after it, "from ... to ..." compares the arms ("reduced progression from 24% to 4% (p=0.007)").
_FROM_JUST_BEFORE = re.compile(r"\bfrom\s*$", re.IGNORECASE)
_TO = re.compile(r"\bto\b")
_ONE_GROUP_AFTER = re.compile(r"[^.;]{0,80}?\bin\s+the\s+[\w\s-]{0,40}?\b(?:group|arm)\b(?!s)", re.IGNORECASE)


def _from_one_time_to_another(doc: StatText, cluster: list[tuple[int, int]]) -> bool:
    first_start, first_end = cluster[0]
    last_end = cluster[-1][1]
    after = doc.plain[last_end : last_end + 120]
    sentence = doc.plain[doc.sentence_start(first_start) : last_end] + after.split(". ")[0]
    return (
        _FROM_JUST_BEFORE.search(doc.plain, max(0, first_start - 10), first_start) is not None
        and _TO.search(doc.plain, first_end, cluster[1][0]) is not None
        and _ONE_GROUP_AFTER.match(doc.plain, last_end) is not None
        and pt.between_group_words().search(sentence) is None
    )


# Participant flow is not a result: "81 (83.5%) GSLiM participants and 80 (82.5%) of dietary counseling
# participants completed the study", "... were randomised", "... were lost to follow-up".
_FLOW = re.compile(
    r"\b(?:completed\s+(?:the\s+)?(?:study|trial|follow-up|treatment|intervention)|withdrew|dropped\s+out"
    r"|(?:were|was)\s+(?:lost\s+to\s+follow|randomi[sz]ed|randomly\s+(?:assigned|allocated)|enrolled|allocated"
    r"|assigned|included|excluded)|discontinued)",
    re.IGNORECASE,
)
_FLOW_REACH = 60


# "between 39% and 75%": a range, not two groups.
_BETWEEN_JUST_BEFORE = re.compile(r"\bbetween\s*$", re.IGNORECASE)
# Measures of one test's accuracy set side by side ("sensitivity 92%, specificity 60%, PPV 65.7%") are not groups.
_ACCURACY_NAMES = re.compile(r"\b(?:sensitivity|specificity|predictive|accuracy|PPV|NPV|Sn|Sp)\b", re.IGNORECASE)


def _not_groups(doc: StatText, cluster: list[tuple[int, int]], percentages: bool) -> bool:
    """Values side by side that are not groups' values: a range ("between 39% and 75%"), a test's accuracy
    measures, or one group's distribution (three or more percentages adding up to 100)."""
    first, last = cluster[0], cluster[-1]
    if len(cluster) == 2 and _BETWEEN_JUST_BEFORE.search(doc.plain, max(0, first[0] - 10), first[0]):
        return True
    if _ACCURACY_NAMES.search(doc.plain, max(0, first[0] - 25), last[0]):
        return True
    if percentages and len(cluster) >= 3:
        total = sum(float(m.group("v")) for start, end in cluster if (m := pt.percent_value().match(doc.plain, start)))
        return abs(total - 100) <= 1.5
    return False


def _participant_flow(doc: StatText, end: int) -> bool:
    """Whether the words right after a cluster's last value (in its sentence) say the counts are participants
    moving through the trial, which the conventions do not count as results."""
    after = doc.plain[end : end + _FLOW_REACH]
    stop = re.search(r"\.\s|;|\n", after)
    return _FLOW.search(after[: stop.start() if stop else None]) is not None


def _percent(value: str | None) -> bool:
    return value is not None and "%" in value


def _more_versus(doc: StatText, pair: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The groups after a pair: "12.9 vs. 14.7 vs. 15.8 vs. 16.9"; after "and" or a comma only a percentage after
    a percentage ("100% versus 62.5% and 75%", "33 vs. 41% in the M group and 45% in ...")."""
    more: list[tuple[int, int]] = []
    percents = "%" in doc.plain[slice(*pair[-1])]
    end = pair[-1][1]
    while (found := pt.versus_next().match(doc.plain, end)) is not None and doc.free(found.start("c"), found.end("c")):
        value = found.group("c")
        joined = doc.plain[found.end("named") if found.group("named") else end : found.start("c")]
        if not re.search(r"vs|versus|compared", joined) and not (percents and "%" in value):
            break
        more.append((found.start("c"), found.end("c")))
        end = found.end("c")
    return more


def _new_table_row(gap: str) -> bool:
    """A table's rows: values on consecutive lines are one row; a line between them (the row's p-value,
    the next row's name) starts another."""
    return any(line.strip() for line in gap.split("\n")[1:-1])


# A sentence's end in prose ("... in 46%. The average reduction was 53% ...", "... (235 [72%]). 34 serious adverse
# events ..."): one comparison's values stand in one sentence. A line break is not one here: a table's row has its
# values on consecutive lines.
_FULL_STOP = re.compile(r"(?<![vV]s)(?<!\b[a-z])\.[ \t]+(?=[A-Z(\[]|\d+\s+[a-z])")


_VERSUS_WORD = re.compile(r"\b(?:vs\.?|versus|compared\s+(?:with|to))(?!\w)", re.IGNORECASE)


def _compared_before_semicolon(text: str, cluster: list[tuple[int, int]], start: int) -> bool:
    """Whether a semicolon closes a comparison the cluster already holds: two values set "vs" each other."""
    return (
        len(cluster) >= 2
        and ";" in text[cluster[-1][1] : start]
        and _VERSUS_WORD.search(text, cluster[0][1], cluster[-1][0]) is not None
    )


_AND = re.compile(r"\band\b")
_NAMED_JUST_AFTER = re.compile(r"\s+(?:in|for|with|on)\s+[A-Za-z][^;,.()]{0,29}?(?=\s+and\b|\s*;)")


def _list_closed(text: str, cluster: list[tuple[int, int]], start: int) -> bool:
    """Whether the words after a cluster's values close their comparison: "respectively" ("76% and 74% in years 1
    and 4, respectively) and in cars (75% ..."), or a semicolon after a list of groups named after their values and
    ended by "and" ("54.1% in AB2 and 56.0% in REF; responses in the full set: 53.6% ...")."""
    if len(cluster) < 2:
        return False
    gap = text[cluster[-1][1] : start]
    if "respectively" in gap:
        return True
    named = [_NAMED_JUST_AFTER.match(text, end) for _start, end in cluster[-2:]]
    return ";" in gap and _AND.search(text, cluster[-2][1], cluster[-1][0]) is not None and all(named)


def _clusters(
    text: str, spans: list[tuple[int, int]], p_starts: list[int], *, same_unit: bool = False
) -> list[list[tuple[int, int]]]:
    """Values close together in one sentence with no p-value between; a pair's values are closer to each other
    than to the next pair ("134/394 [34.0%] versus 118/382 [30.9%]), as was ... (39/394 [9.9%] versus ...");
    a semicolon after two values ends their comparison ("270.1 ± 159.0 g in control vs. 336.8 ± 116.9 g in active
    before; 264.9 ± 151.0 g ..."); ``same_unit``: a value in percent and one not are one group's value in two
    units ("-57 ± 93 mg/L, -9.9 ± 19.0%"), not two groups'."""
    clusters: list[list[tuple[int, int]]] = []
    widest = 0  # the widest gap inside the last cluster
    for start, end in spans:
        cluster = clusters[-1] if clusters else []
        gap = start - cluster[-1][1] if cluster else GROUP_GAP + 1
        if (
            cluster
            and gap <= GROUP_GAP
            and (len(cluster) < 2 or gap <= max(60, 2 * widest))
            and not between(p_starts, cluster[-1][1], start)
            and not _new_table_row(text[cluster[-1][1] : start])
            and not _FULL_STOP.search(text, cluster[-1][1], start)
            and not (_compared_before_semicolon(text, cluster, start))
            and not _list_closed(text, cluster, start)
            and not (same_unit and ("%" in text[start:end]) != ("%" in text[slice(*cluster[-1])]))
        ):
            cluster.append((start, end))
            widest = max(widest, gap)
        else:
            clusters.append([(start, end)])
            widest = 0
    return clusters
