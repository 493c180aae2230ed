"""Text that came from outside (a question, a query, a web snippet, an error body) made safe to show.

Control characters do not belong in a question or a title, and in a terminal they are instructions:
ESC starts an escape sequence that can rewrite the screen, BEL rings, BS overwrites what was shown.
``without_controls`` removes them once, where outside text enters; ``one_line`` also folds line breaks,
for a heading or a terminal line.
"""

from __future__ import annotations

import re

# The longest question a run accepts: a research question is a sentence or two. A longer text is
# pasted by mistake (or an attack on the prompt budget), and would also make every search URL too long.
MAX_QUESTION_CHARS = 2000
NOT_UTF8 = "is not valid UTF-8 text"

# C0 controls except tab and line breaks, DEL, C1 controls (U+009B is a one-byte CSI in some terminals),
# and the bidirectional overrides that make text display in an order other than its own.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Whole escape sequences go, not only their ESC: CSI (ESC [ ... final byte; a lone U+009B is just removed),
# OSC (ESC ] ... BEL or ST), and two-character ESC sequences; else "ESC[31m" would leave "[31m" behind.
_ESCAPE_SEQUENCES = re.compile(
    "\x1b\\[[0-?]*[ -/]*[@-~]"  # CSI
    "|(?:\x1b\\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\\\|\x9c)?"  # OSC, to BEL or ST
    "|\x1b[0-~]"  # other escapes: ESC and one character (ESC c resets the terminal)
)


def without_controls(text: str) -> str:
    """``text`` with escape sequences and control characters removed; tabs and line breaks are kept."""
    return _CONTROLS.sub("", _ESCAPE_SEQUENCES.sub("", text))


def not_utf8(text: str) -> str | None:
    """Why ``text`` cannot be kept as UTF-8, or None. A lone surrogate (``"\\ud800"`` in a JSON body, or a byte
    of a command-line argument that is not UTF-8, which Python keeps as one) is not a character: every file,
    response and store it would reach refuses to encode it. Checked where a client's text comes in."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"{NOT_UTF8} (a lone surrogate or an undecodable byte at character {error.start + 1})"
    return None


def utf8_text(text: str) -> str:
    """``text`` when it is valid UTF-8 text; ValueError otherwise (a pydantic validator: the error names the field)."""
    if problem := not_utf8(text):
        raise ValueError(problem)
    return text


# Characters XML 1.0 does not allow in a document, escaped or not: C0 controls but tab and line breaks,
# surrogates, U+FFFE and U+FFFF.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 forbids (an ESC in a paper's title, a U+FFFE in a question):
    ElementTree escapes markup but writes these as they are, and a parser then refuses the whole document."""
    return _NOT_XML.sub("", text)


def collapse_whitespace(text: str) -> str:
    """``text`` on one trimmed line: every run of whitespace (line breaks and tabs too) becomes one space."""
    return " ".join(text.split())


def one_line(text: str) -> str:
    """``text`` without control characters, on one trimmed line with runs of whitespace collapsed: how a
    question or a query is used, and how outside text is shown on a terminal line."""
    return collapse_whitespace(without_controls(text))


# A sentence ends at ".", "!" or "?" and white space before a capital, a digit or an opening bracket; not after
# an abbreviation that goes on with the sentence ("Smith et al. 2019", "A vs. B", "e.g. X", "Fig. 2").
# Measured against the splitters it replaced and pysbd: bench/sentence_split.py.
_SENTENCE_BREAK = re.compile(
    r"(?<!\bet al\.)(?<!\bvs\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<![Ff]ig\.)(?<![Ff]igs\.)(?<!\bapprox\.)"
    r"(?<=[.!?])\s+(?=[A-Z0-9(\[])"
)


def sentence_starts(text: str) -> list[int]:
    """Where each sentence of ``text`` after the first starts (the end of the white space before it)."""
    return [match.end() for match in _SENTENCE_BREAK.finditer(text)]


def split_sentences(text: str) -> list[str]:
    """``text`` cut into sentences, each as written (without the white space between them); none empty."""
    return [part for part in _SENTENCE_BREAK.split(text) if part.strip()]


def shorten(text: str, limit: int, *, on_word: bool = False) -> str:
    """``text`` on one line (runs of whitespace folded) and at most ``limit`` characters. A longer text is
    cut and ends in "…"; with ``on_word`` it is cut between words and ends in " …" (words left out).
    The one way a title, a snippet or a message is shortened for display."""
    flat = collapse_whitespace(text)
    if len(flat) <= limit:
        return flat
    if on_word:
        window = flat[: limit - 1]  # the head, a space and the ellipsis fit in ``limit``
        head = window.rsplit(" ", 1)[0] if " " in window else window[:-1]
        return head.rstrip() + " …"
    return flat[: max(limit - 1, 0)].rstrip() + "…"


def quantity(count: int, singular: str, plural: str | None = None) -> str:
    """A count with its noun in the right number: "1 study", "2 studies", "0 items" (``plural`` defaults to
    ``singular`` + "s"); never "stud(ies)"."""
    return f"{count:,} {singular if count == 1 else plural or singular + 's'}"


def _decimals(value: float) -> int:
    text = f"{value:g}"
    return len(text.split(".")[1]) if "." in text and "e" not in text else 0


def same_precision(*values: float | None) -> list[str]:
    """The values with one number of decimals, the most any of them has: an estimate and its interval are
    written to one precision ("0.77 [0.60, 0.98]", "0.005 [0.001, 0.020]"), which a float's shortest form drops
    ("0.6") and a fixed two decimals rounds away ("0.01 [0.00, 0.02]"). The study-results table, the forest plot
    and its text alternative all write a study's estimate so."""
    places = max((_decimals(v) for v in values if v is not None), default=0)
    return ["" if v is None else f"{v:.{places}f}" for v in values]
