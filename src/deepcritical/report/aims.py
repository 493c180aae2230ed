"""The report's note for a question that asks two things (prevent or treat): which counted studies address
which aim (``appraisal.aims`` reads each study's aim)."""

from __future__ import annotations

from collections.abc import Mapping

from deepcritical.appraisal.aims import aims_of, asks_two_aims
from deepcritical.appraisal.strength import Strength
from deepcritical.reading.frame import frame_question
from deepcritical.report.document import Block, Inline, Part, cites, paragraph, strong


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
