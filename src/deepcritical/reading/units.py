"""A study's text cut into the units a result is stated in: sentences of prose, and rows of a table whose
cells stand one per line (as text extracted from an article's tables does). Each unit keeps its character
offsets and the section it stands in, which the result reader weighs: a Results sentence may state the
study's result, an Introduction sentence does not."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from deepcritical.text import split_sentences

# "ABSTRACT.RESULTS:" / "BODY.STATISTICAL ANALYSIS:" (Evidence Inference's extracted text), "RESULTS:" and
# "Results:" (a structured abstract's labels), alone on a line or opening one.
_HEADING = r"((?:(?:ABSTRACT|BODY)\.)?[A-Z][A-Za-z /&-]{2,40}):"
MAX_UNIT_CHARS = 1200
# A line this short, not ending a sentence, is a table cell (or a heading) rather than prose.
_CELL_CHARS = 60
_ROW_LINES = 8


@dataclass(frozen=True)
class TextUnit:
    text: str
    start: int
    end: int
    section: str = ""  # upper case ("RESULTS", "ABSTRACT.RESULTS"), "" when the text names none

    @property
    def in_abstract(self) -> bool:
        return self.section.startswith("ABSTRACT")


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    heading_line = re.compile(rf"^\s*{_HEADING}\s*$")
    heading_inline = re.compile(
        r"(?:^|(?<=[.!?]\s))((?:(?:ABSTRACT|BODY)\.)?[A-Z][A-Z /&-]{2,40}|Background|Objectives?"
        r"|Aims?|Methods?|Results?|Findings|Conclusions?|Interpretation|Discussion):\s+"
    )
    return heading_line, heading_inline


def split_units(text: str, section: str = "") -> list[TextUnit]:
    """``text`` cut into sentences and table rows, with offsets into ``text`` and their sections.
    ``section`` is the section of the text's start when the text itself names none (a passage's)."""
    heading_line, _ = _patterns()
    units: list[TextUnit] = []
    row: list[tuple[str, int, int]] = []
    current = section.upper()

    def close_row() -> None:
        if row:
            units.append(TextUnit(" | ".join(cell for cell, _, _ in row), row[0][1], row[-1][2], current))
            row.clear()

    offset = 0
    for line in text.split("\n"):
        start, stripped = offset, line.strip()
        offset += len(line) + 1
        if not stripped:
            close_row()
            continue
        heading = heading_line.match(line)
        if heading:
            close_row()
            current = heading.group(1).upper()
            continue
        lead = start + len(line) - len(line.lstrip())
        if len(stripped) < _CELL_CHARS and not stripped.endswith((".", "?", "!")):
            # A row starts at a cell with words once the row already holds a number (a new row's label).
            if (row and _has_words(stripped) and any(_is_numeric(cell) for cell, _, _ in row)) or len(
                row
            ) >= _ROW_LINES:
                close_row()
            row.append((stripped, lead, lead + len(stripped)))
            continue
        close_row()
        current = _prose_units(line, start, current, units)
    close_row()
    return units


def _prose_units(line: str, start: int, section: str, units: list[TextUnit]) -> str:
    _, heading_inline = _patterns()
    position = 0
    for piece in split_sentences(line):
        where = line.find(piece, position)
        position = where + len(piece)
        label = heading_inline.match(piece)
        if label:
            section = label.group(1).upper()
            where += label.end()
            piece = piece[label.end() :]
        text = piece.strip()
        if not text:
            continue
        lead = start + where + (len(piece) - len(piece.lstrip()))
        for cut in range(0, len(text), MAX_UNIT_CHARS):
            chunk = text[cut : cut + MAX_UNIT_CHARS]
            units.append(TextUnit(chunk, lead + cut, lead + cut + len(chunk), section))
    return section


def _has_words(cell: str) -> bool:
    return sum(character.isalpha() for character in cell) >= 3


def _is_numeric(cell: str) -> bool:
    return sum(character.isdigit() for character in cell) >= max(1, len(cell) // 4)
