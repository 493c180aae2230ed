"""A learned second opinion on which numbers are groups' values (issue 39, round 4): a logistic regression over each
number's shape and neighbours (its suffix, the brackets and words around it, "vs", "respectively", the p-values and
intervals near it, and whether the rules took it as a group's value) decides which numbers of a text are a group's
leading value. The rules' group values whose numbers it rejects are dropped; runs of numbers it accepts that no
rule read become one comparison each (a run ends at a p-value, a semicolon, "respectively" or a sentence's end).

The weights (``number_tagger.json``) are fitted by ``training/number_tagger.py`` on the hand-labelled sets
(bench/stats_labels*.json, effects_labels*.json), the variant chosen by cross-validation grouped by article; the
sidecar ``number_tagger.provenance.json`` says on what, with which seed and commit, and the figures. Reading is
plain Python (a sum of weights per number), so ``extract`` stays fast."""

from __future__ import annotations

import bisect
import json
import math
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from deepcritical.reading import patterns as pt
from deepcritical.reading.stat_text import GROUP_GAP, StatText

WEIGHTS = Path(__file__).with_name("number_tagger.json")

_WORD_NUMBERS = {
    "none": 0,
    "no": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
_WORD_NUMBER = "|".join(sorted((w for w in _WORD_NUMBERS if w != "no"), key=len, reverse=True))
_TOKEN = re.compile(rf"(?<![\w.])(?:{pt.NUM}|(?i:{_WORD_NUMBER})\b)")
_WORD = re.compile(r"[A-Za-z]+")
_CUES = ("vs", "versus", "respectively", "compared", "group", "groups", "arm", "ci", "ratio", "p", "and", "than")
_CUE_REACH = 40
_SENTENCE_END = re.compile(r"\.\s+(?=[A-Z(\[])|\n|;")


def _named_patterns(*pairs: tuple[str, str]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((name, re.compile(pattern)) for name, pattern in pairs)


# What the 14 characters after a number begin with, and what those before it end with: a feature each.
_AFTER = _named_patterns(
    ("percent", r"\s?%"),
    ("plus_minus_after", r"\s*(?:±|\+/-)"),
    ("count_with_percent", r"\s*[(\[]\s*\d+(?:\.\d+)?\s?%"),
    ("over_total", r"\s*/\s*\d"),
    ("range_start", r"\s*(?:-|–|to)\s*\d"),
)
_BEFORE = _named_patterns(
    ("is_total", r"(?:/|\bof)\s*$"),
    ("is_sd", r"(?:±|\+/-)\s*$"),
    ("range_end", r"\d\s*(?:-|–|to)\s*$"),
)


@dataclass(frozen=True)
class NumberToken:
    """A number of the text (digits or a small number in words) and where it stands."""

    start: int
    end: int
    value: float


@dataclass(frozen=True)
class GroupTagger:
    """The fitted weights of each feature, the bias and the probability above which a number is a group's value;
    ``mode`` is how the tagger joins the rules: ``filter`` (drop the rules' groups it rejects) or ``hybrid`` (and
    add its own runs that no rule read)."""

    weights: dict[str, float]
    bias: float
    threshold: float
    mode: str

    def probability(self, features: list[str]) -> float:
        score = self.bias + sum(self.weights.get(feature, 0.0) for feature in features)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, score))))


@cache
def default_tagger() -> GroupTagger | None:
    """The shipped weights, or None when none are shipped (the rules alone then read groups' values)."""
    if not WEIGHTS.is_file():
        return None
    data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    return GroupTagger(data["weights"], data["bias"], data["threshold"], data["mode"])


def number_tokens(plain: str) -> list[NumberToken]:
    tokens = []
    for match in _TOKEN.finditer(plain):
        written = match.group(0)
        word = _WORD_NUMBERS.get(written.lower())
        value = float(word) if word is not None else float(written.replace(",", "").replace("+", ""))
        tokens.append(NumberToken(match.start(), match.end(), value))
    return tokens


def _shape(written: str) -> str:
    if not written[-1].isdigit():
        return "word"
    return re.sub(r"d+", "d", re.sub(r"\d", "d", written.lstrip("+-")))


def _words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def _bin(value: float) -> str:
    if value == 0:
        return "0"
    return str(max(-3, min(5, math.floor(math.log10(abs(value))))))


def token_features(
    doc: StatText,
    tokens: list[NumberToken],
    taken_before: bytearray,
    rule_leads: set[int],
    rule_covered: bytearray,
    p_starts: list[int],
) -> list[list[str]]:
    """Each token's features: its shape, the characters and words beside it, cue words near it, whether an
    estimate or a p-value took it before the groups were read, whether the rules read it as a group's (leading)
    value, and how the numbers beside it look."""
    plain = doc.plain
    rows = []
    for index, token in enumerate(tokens):
        written = plain[token.start : token.end]
        after, before = plain[token.end : token.end + 14], plain[max(0, token.start - 14) : token.start]
        shape = _shape(written)
        row = [f"shape:{shape}", f"mag:{_bin(token.value)}"]
        if written.startswith("-"):
            row.append("negative")
        if shape == "d" and 1900 <= token.value <= 2030:
            row.append("year")
        stripped_after, stripped_before = after.lstrip(), before.rstrip()
        row.append(f"next_char:{stripped_after[:1] or 'END'}")
        row.append(f"prev_char:{stripped_before[-1:] or 'START'}")
        row += [name for name, pattern in _AFTER if pattern.match(after)]
        row += [name for name, pattern in _BEFORE if pattern.search(before)]
        words_before = _words(plain[max(0, token.start - 40) : token.start])[-3:]
        words_after = _words(plain[token.end : token.end + 40])[:3]
        row += [f"w-{len(words_before) - i}:{w}" for i, w in enumerate(words_before)]
        row += [f"w+{i + 1}:{w}" for i, w in enumerate(words_after)]
        near = set(_words(plain[max(0, token.start - _CUE_REACH) : token.end + _CUE_REACH]))
        row += [f"near:{cue}" for cue in _CUES if cue in near]
        if any(taken_before[token.start : token.end]):
            row.append("taken")
        if token.start in rule_leads:
            row.append("rule_lead")
        elif any(rule_covered[token.start : token.end]):
            row.append("rule_inside")
        sentence = doc.sentence_start(token.start)
        p_index = bisect.bisect_left(p_starts, token.end)
        if p_index < len(p_starts) and p_starts[p_index] - token.end < 60:
            row.append("p_soon_after")
        if p_index and token.start - p_starts[p_index - 1] < 30 and p_starts[p_index - 1] >= sentence:
            row.append("p_just_before")
        # Counted from the context's start (at most 300 characters back): a text without full stops costs linear time.
        context = doc.context_start(token.start)
        depth = plain.count("(", context, token.start) - plain.count(")", context, token.start)
        row.append("in_brackets" if depth > 0 else "outside_brackets")
        for side, other in (("prev", tokens[index - 1] if index else None), ("next", _at(tokens, index + 1))):
            if other is None or abs(other.start - token.start) > GROUP_GAP:
                row.append(f"{side}:none")
                continue
            other_shape = _shape(plain[other.start : other.end])
            other_percent = re.match(r"\s?%", plain[other.end : other.end + 2]) is not None
            row.append(f"{side}_same_shape:{other_shape == shape}")
            row.append(f"{side}_percent:{other_percent}")
            row.append(f"{side}_rule_lead:{other.start in rule_leads}")
            gap = plain[min(other.end, token.end) : max(other.start, token.start)]
            row.append(f"{side}_gap:{min(len(gap) // 15, 6)}")
            row += [f"{side}_gap_word:{w}" for w in set(_words(gap)) & {"vs", "versus", "and", "compared", "or"}]
        rows.append(row)
    return rows


def _at(tokens: list[NumberToken], index: int) -> NumberToken | None:
    return tokens[index] if index < len(tokens) else None


def runs(
    doc: StatText, tokens: list[NumberToken], accepted: list[bool], p_starts: list[int]
) -> list[list[NumberToken]]:
    """The accepted tokens in runs, each one comparison: a run ends at a p-value, a semicolon, "respectively", a
    sentence's end or a gap wider than ``GROUP_GAP``; runs of one number are dropped."""
    found: list[list[NumberToken]] = []
    current: list[NumberToken] = []
    for token, keep in zip(tokens, accepted, strict=True):
        if not keep:
            continue
        if current:
            gap = doc.plain[current[-1].end : token.start]
            previous_p = bisect.bisect_left(p_starts, current[-1].end)
            if (
                token.start - current[-1].end > GROUP_GAP
                or _SENTENCE_END.search(gap)
                or "respectively" in gap
                or (previous_p < len(p_starts) and p_starts[previous_p] < token.start)
            ):
                found.append(current)
                current = []
        current.append(token)
    found.append(current)
    return [run for run in found if len(run) >= 2]
