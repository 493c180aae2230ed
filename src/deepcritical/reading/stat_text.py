"""What the statistics reader works on: the text, its normalised copy of the same length and what is
already taken, and a result being drafted before it becomes an ``Effect``."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from deepcritical.reading.effects import Measure

# How much of a sentence before a result is read for its context (and quoted for a p-value alone).
_CONTEXT = 300
# How far apart two values of the same kind may stand and still be groups of one comparison.
GROUP_GAP = 160


@dataclass
class Draft:
    measure: Measure
    start: int
    end: int
    value: float | None = None
    low: float | None = None
    high: float | None = None
    level: float | None = None
    p: str | None = None
    groups: list[str] = field(default_factory=list)
    sides: int | None = None
    # Each group's change within its own arm ("shortened recovery by 2.3 weeks in one arm and 1.9 in the other").
    within: bool = False


@dataclass
class StatText:
    original: str
    plain: str
    taken: bytearray
    sentence_starts: list[int]
    heart_rate: bool
    respiratory_rate: bool
    infusion: bool
    saline: bool

    def free(self, start: int, end: int) -> bool:
        return not any(self.taken[start:end])

    def take(self, start: int, end: int) -> None:
        self.taken[start:end] = b"\x01" * (end - start)

    def sentence_start(self, at: int) -> int:
        return self.sentence_starts[max(bisect.bisect_right(self.sentence_starts, at) - 1, 0)]

    def context_start(self, at: int) -> int:
        """Where the words around ``at`` begin: its sentence, at most ``_CONTEXT`` characters back (a
        table or a text without full stops has no sentence to speak of, and reading it whole for every
        result would cost time in the square of its length)."""
        start = max(self.sentence_start(at), at - _CONTEXT)
        if start > self.sentence_start(at):
            space = self.plain.find(" ", start, at)
            start = space + 1 if space >= 0 else start
        return start


def between(positions: list[int], low: int, high: int) -> bool:
    """Whether a position of the sorted ``positions`` lies in [low, high)."""
    index = bisect.bisect_left(positions, low)
    return index < len(positions) and positions[index] < high


def number(text: str) -> float:
    """A number as written ("+1,234.5")."""
    return float(text.replace("+", "").replace(",", ""))
