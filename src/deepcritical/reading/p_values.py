"""p-values: each one read as written ("<0.001", "=0.03", "NS"), and given to the result it follows, or
made a result of its own (``p_only``)."""

from __future__ import annotations

import bisect
import re

from deepcritical.reading import patterns as pt
from deepcritical.reading.stat_text import Draft, StatText, between

# How far after a result a p-value may stand and still be that result's ("...; P = 0.03").
_P_REACH = 140


# The p-values listed after one, for as many results: "p = 0.23 and 0.58, respectively", "(P<.001, 0.013, and .037,
# respectively)". Only before "respectively": a bare number after a p-value is otherwise anything.
_LISTED_P = re.compile(r"(?:\s*,\s*(?:and\s+)?|\s+and\s+)(?P<cmp>[<>=≤≥])?\s*(?P<num>\d*\.\d+)(?![\d.%])")
_RESPECTIVELY = re.compile(r"[\s,;]*respectively\b", re.IGNORECASE)


def find_p_values(doc: StatText) -> list[tuple[int, int, str]]:
    """Every p-value of the text (start, end, as written), each span taken so no other reading claims it."""
    found: list[tuple[int, int, str]] = []
    for match in pt.p_value().finditer(doc.plain):
        written = written_p(match)
        if written is not None:
            found.append((match.start(), match.end(), written))
            doc.take(match.start(), match.end())
            found += _listed_after(doc, match.end())
    if not doc.saline:
        for match in pt.not_significant_mark().finditer(doc.plain):
            if doc.free(match.start(), match.end()):
                found.append((match.start(), match.end(), "NS"))
                doc.take(match.start(), match.end())
    for match in pt.ci_label_alone().finditer(doc.plain):
        doc.take(match.start(), match.end())  # "95%" of a label is never a group's percentage
    return sorted(found)


def _listed_after(doc: StatText, end: int) -> list[tuple[int, int, str]]:
    listed: list[tuple[int, int, str]] = []
    while (item := _LISTED_P.match(doc.plain, end)) is not None and doc.free(item.start("num"), item.end()):
        number = item.group("num")
        number = "0" + number if number.startswith(".") else number
        if not 0 <= float(number) <= 1:
            break
        listed.append(
            (
                item.start("num") if item.group("cmp") is None else item.start("cmp"),
                item.end(),
                (item.group("cmp") or "=") + number,
            )
        )
        end = item.end()
    if not listed or not _RESPECTIVELY.match(doc.plain, end):
        return []
    for start, stop, _ in listed:
        doc.take(start, stop)
    return listed


RELATIONS = ("<", ">", "=", "≤", "≥")


def p_parts(p: str) -> tuple[str, str]:
    """A p-value as read split into its relation and its number, for a spreadsheet to read the number:
    "=0.21" is ("=", "0.21"), "<0.001" is ("<", "0.001"), "NS" is ("", "NS")."""
    return (p[0], p[1:]) if p.startswith(RELATIONS) else ("", p)


def p_cells(p: str | None) -> tuple[str, str]:
    """A p-value as two CSV cells, (bound, number): the number alone ("0.21", "0.001", "NS"), so a spreadsheet
    reads it as one, and "<" or ">" ("≤", "≥") when the text gives a bound, else empty. "=0.21" in one cell
    was text that a formula guard must write as "'=0.21"; a lone "=" would be guarded the same way."""
    if p is None:
        return "", ""
    relation, number = p_parts(p)
    return ("" if relation == "=" else relation), number


def written_p(match: re.Match[str]) -> str | None:
    """ "<0.001", "=0.03", "NS" from a matched p-value; None when the number is no probability."""
    if match.group("ns"):
        return "NS"
    comparator = (match.group("cmp") or "=").strip()
    comparator = {"<=": "≤", "=<": "≤", ">=": "≥", "=>": "≥", "is": "=", "was": "=", "of": "="}.get(
        comparator, comparator
    )
    prefix = "" if match.group("num") else "b_"
    number = match.group(prefix + "num").replace(" ", "")
    exponent = next((match.group(prefix + g) for g in ("exp", "exp2", "exp3") if match.group(prefix + g)), None)
    if exponent is not None:
        exponent = exponent.replace(" ", "")
        mantissa = "1" if match.group(prefix + "exp3") else re.split(r"[x×*eE]", number)[0]
        written = f"{mantissa}e{exponent}"
    else:
        written = "0" + number if number.startswith(".") else number
    try:
        if not 0 <= float(written) <= 1:
            return None
    except ValueError:
        return None
    return comparator + written


def attach_p_values(doc: StatText, drafts: list[Draft], p_values: list[tuple[int, int, str]]) -> list[Draft]:
    """A p-value belongs to the nearest result it follows, when no other number stands between them;
    otherwise it is a result of its own, quoted from the start of its sentence."""
    by_end = sorted(drafts, key=lambda d: d.end)
    ends = [d.end for d in by_end]  # as found: a draft that takes a p-value is no candidate any more
    starts = sorted(d.start for d in drafts)
    previous_end = 0
    for start, end, written in p_values:
        owner = None
        for index in range(bisect.bisect_right(ends, start) - 1, -1, -1):
            if start - ends[index] > _P_REACH:
                break
            if by_end[index].p is None:
                owner = by_end[index]
                break
        if owner is not None and not _blocked(doc, owner.end, start, starts):
            owner.p, owner.end = written, end
        else:
            clause = max(doc.context_start(start), previous_end)
            head = doc.plain[clause:start]
            draft = Draft("p_only", clause + len(head) - len(head.lstrip(" ;,)")), end, p=written)
            drafts.append(draft)
            bisect.insort(starts, draft.start)
        previous_end = end
    return drafts


# Tests of something else than the estimate: across subgroups, or of a meta-analysis's small-study bias.
_ANOTHER_TEST = re.compile(
    r"\b(?:interaction|heterogeneity|trend|egger\W?s?|begg\W?s?|funnel|asymmetry|small-study)\b", re.IGNORECASE
)


def _blocked(doc: StatText, end: int, start: int, starts: list[int]) -> bool:
    """Whether another result or a sentence with numbers of its own stands between a result and a p."""
    if between(starts, end, start):
        return True
    if _ANOTHER_TEST.search(doc.plain, max(end, start - 40), start):
        return True  # "(interaction p=0.64)", "(Egger p=0.03)": another test's p, not the estimate's own
    gap = doc.plain[end:start]
    return doc.sentence_start(start) > end and re.search(r"\d", gap) is not None
