"""A PRISMA 2020-style flow diagram as SVG, from a run's counts: records identified per source, duplicates
removed, records screened, excluded with reasons, studies included. The counts must add up (checked
when they are made), so the diagram can only show numbers that agree with each other and with the
report that made them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from deepcritical.report import svg

_WIDTH, _BOX_W, _SIDE_X, _LINE = 760, 330, 410, 16


@dataclass(frozen=True)
class FlowCounts:
    """The flow's numbers. ``excluded`` maps a reason (off-topic, trial registration, retracted, no result
    stated...) to how many records it removed."""

    identified: Mapping[str, int]
    duplicates: int
    excluded: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        counts = [*self.identified.values(), self.duplicates, *self.excluded.values()]
        if any(count < 0 for count in counts):
            raise ValueError("a PRISMA count is negative")
        if self.duplicates > self.total_identified:
            raise ValueError(f"{self.duplicates} duplicates removed of {self.total_identified} records identified")
        if self.total_excluded > self.screened:
            raise ValueError(f"{self.total_excluded} records excluded of {self.screened} screened")

    @property
    def total_identified(self) -> int:
        return sum(self.identified.values())

    @property
    def screened(self) -> int:
        return self.total_identified - self.duplicates

    @property
    def total_excluded(self) -> int:
        return sum(self.excluded.values())

    @property
    def included(self) -> int:
        return self.screened - self.total_excluded


def _box(x: float, y: float, ident: str, lines: list[str], *, bold_first: bool = True) -> tuple[list[str], float]:
    height = 12 + _LINE * len(lines)
    parts = [svg.rect(x, y, _BOX_W, height, fill="#f7f9fc", ident=ident)]
    for index, body in enumerate(lines):
        weight = "bold" if bold_first and index == 0 else "normal"
        parts.append(svg.text(x + 10, y + 20 + _LINE * index, body, weight=weight, width=_BOX_W - 20))
    return parts, height


def _arrow(x1: float, y1: float, x2: float, y2: float) -> list[str]:
    head = (
        f'<polygon points="{svg.number(x2)},{svg.number(y2)} {svg.number(x2 - 5)},{svg.number(y2 - 8)} '
        f'{svg.number(x2 + 5)},{svg.number(y2 - 8)}"/>'
        if x1 == x2
        else f'<polygon points="{svg.number(x2)},{svg.number(y2)} {svg.number(x2 - 8)},{svg.number(y2 - 5)} '
        f'{svg.number(x2 - 8)},{svg.number(y2 + 5)}"/>'
    )
    return [svg.line(x1, y1, x2, y2), head]


def prisma_svg(counts: FlowCounts) -> str:
    """The flow diagram: identification, screening and inclusion boxes on the left, what left the flow at
    each step on the right. Each box has an id (identified, removed, screened, excluded, included)."""
    left = 20
    body: list[str] = []
    y = 20.0
    identified = [f"Records identified (n = {counts.total_identified})"] + [
        f"{source}: n = {n}" for source, n in sorted(counts.identified.items())
    ]
    removed = ["Records removed before screening", f"Duplicate records: n = {counts.duplicates}"]
    parts, h1 = _box(left, y, "identified", identified)
    side, h2 = _box(_SIDE_X, y, "removed", removed)
    body += parts + side
    mid = y + min(h1, h2) / 2
    body += _arrow(left + _BOX_W, mid, _SIDE_X, mid)
    top = y + h1
    y += max(h1, h2) + 36
    body += _arrow(left + _BOX_W / 2, top, left + _BOX_W / 2, y)
    reasons = [f"{reason}: n = {n}" for reason, n in sorted(counts.excluded.items(), key=lambda item: -item[1])]
    parts, h1 = _box(left, y, "screened", [f"Records screened (n = {counts.screened})"])
    side, h2 = _box(_SIDE_X, y, "excluded", [f"Records excluded (n = {counts.total_excluded})", *reasons])
    body += parts + side
    body += _arrow(left + _BOX_W, y + h1 / 2, _SIDE_X, y + h1 / 2)
    top = y + h1
    y += max(h1, h2) + 36
    body += _arrow(left + _BOX_W / 2, top, left + _BOX_W / 2, y)
    parts, h1 = _box(left, y, "included", [f"Studies included (n = {counts.included})"])
    body += parts
    height = y + h1 + 20
    title = (
        f"PRISMA 2020-style flow: {counts.total_identified} records identified, {counts.duplicates} duplicates "
        f"removed, {counts.screened} screened, {counts.total_excluded} excluded, {counts.included} included"
    )
    return svg.document(_WIDTH, height, title, body)
