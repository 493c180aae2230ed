"""A question that asks two things: "Does vitamin D prevent or treat depression?" asks whether it prevents
depression in people without it and whether it treats it in people who have it. The verdict weighs the
counted studies of both together; the report says that the question asks two things and which counted
studies address which, read from the people each study enrolled (issue 23, round 4)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Aim = Literal["prevention", "treatment"]

_TWO_AIMS = re.compile(
    r"\b(?:prevent\w*|prevention)\s+(?:and/or|and|or)\s+(?:treat\w*)\b"
    r"|\btreat\w*\s+(?:and/or|and|or)\s+(?:prevent\w*|prevention)\b",
    re.IGNORECASE,
)


def asks_two_aims(question: str) -> bool:
    """Whether the question asks about preventing and treating one condition ("prevent or treat")."""
    return bool(_TWO_AIMS.search(question))


def _name(condition: str) -> str:
    """The condition's words, each by its stem: "depression" also matches "depressive"."""
    return r"\s+".join(re.escape(w[:-2] if len(w) > 5 else w) + r"\w*" for w in condition.lower().split())


@dataclass(frozen=True)
class _Patterns:
    prevention: re.Pattern[str]
    treatment: re.Pattern[str]

    @classmethod
    def of(cls, condition: str) -> _Patterns:
        name = _name(condition)
        # People without the condition, followed for new cases: prevention.
        prevention = (
            rf"\bwithout\s+(?:\w+\s+){{0,2}}{name}|\b(?:incident|new-onset|risk\s+of|prevent\w*(?:\s+of)?)\s+"
            rf"(?:\w+\s+)?{name}|\bgeneral[- ]population\b|\bdeveloped\s+{name}"
        )
        # People who have it (not "associated with depression", a background sentence's link): treatment.
        treatment = (
            rf"(?<!associated\s)(?<!linked\s)\b(?:with|having|diagnosed\s+with)\s+(?:\w+\s+){{0,3}}?{name}"
            rf"|\btreat\w*\s+(?:of\s+)?(?:\w+\s+)?{name}"
        )
        return cls(re.compile(prevention, re.I), re.compile(treatment, re.I))


def aims_of(text: str, condition: str) -> set[Aim]:
    """Which aims a study's title and abstract address, by the people it enrolled: none when it says neither.
    An aim named far less often than the other is a subgroup's ("consistent among participants with previous
    depression" in a prevention trial), not the study's: each aim needs half the mentions of the other."""
    patterns = _Patterns.of(condition)
    counts: dict[Aim, int] = {
        "prevention": len(patterns.prevention.findall(text)),
        "treatment": len(patterns.treatment.findall(text)),
    }
    most = max(counts.values())
    return {aim for aim, count in counts.items() if count and 2 * count >= most}
