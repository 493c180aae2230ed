"""A question that asks two things: "Does vitamin D prevent or treat depression?" asks whether it prevents
depression in people without it and whether it treats it in people who have it. The verdict weighs the
counted studies of both together; the report says that the question asks two things and which counted
studies address which, read from the people each study enrolled (issue 23, round 4)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from deepcritical.reading.frame import frame_question
from deepcritical.stages.document import Block, Inline, Part, cites, paragraph, strong
from deepcritical.stages.strength import Strength

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


def aims_block(question: str, counted: Strength, numbers: Mapping[str, int]) -> list[Block]:
    """The report's note under the verdict, for a question that asks two things: which counted studies
    address prevention, which treatment, which both; nothing for any other question."""
    frame = frame_question(question)
    condition = frame.outcomes[0] if frame.outcomes else frame.population
    if not asks_two_aims(question) or not condition:
        return []
    by_aim: dict[str, list[int]] = {"prevention": [], "treatment": [], "both": [], "neither": []}
    for item_id in counted.counted:
        view = counted.views[item_id]
        number = numbers.get(counted.record_of(item_id)) or numbers.get(item_id)
        if number is None:
            continue
        aims = aims_of(f"{view.title}. {view.text}", condition)
        key = "both" if len(aims) == 2 else next(iter(aims)) if aims else "neither"
        if number not in by_aim[key]:
            by_aim[key].append(number)
    parts: list[Part | list[Inline]] = [
        strong("The question asks two things:"),
        f" whether it prevents {condition} in people without it, and whether it treats {condition} in people "
        "who have it. The verdict above weighs the counted studies of both together.",
    ]
    said = {
        "prevention": "prevention (people without it at the start)",
        "treatment": "treatment (people who have it)",
        "both": "both",
        "neither": "neither said",
    }
    shown = [(key, sorted(ids)) for key, ids in by_aim.items() if ids]
    for index, (aim, numbers_of_aim) in enumerate(shown):
        parts += [" Counted studies of " if index == 0 else "; ", f"{said[aim]}: ", cites(numbers_of_aim)]
    if shown:
        parts.append(".")
    return [paragraph(*parts)]
