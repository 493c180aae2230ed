"""How many people a study had, when its abstract states it (in digits or in words)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal, NamedTuple

from deepcritical.models import StudyDesign
from deepcritical.text import split_sentences

_I = re.IGNORECASE
_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
# Abstracts spell out a number that opens a sentence ("Eighty adults were randomised").
_WORD_VALUES = {
    **{word: n for n, word in enumerate(_UNITS, 1)},
    **{word: n for n, word in enumerate(_TEENS, 10)},
    **{word: 10 * n for n, word in enumerate(_TENS, 2)},
}
_BELOW_HUNDRED = rf"(?:{'|'.join(_TENS)})(?:-(?:{'|'.join(_UNITS)}))?|{'|'.join(_TEENS)}|{'|'.join(_UNITS)}"
_NUMBER_WORD = rf"(?:{'|'.join(_UNITS)}) hundred(?:(?: and)? (?:{_BELOW_HUNDRED}))?|{_BELOW_HUNDRED}"
# Thousands grouped by a comma or, as many journals print them, a (thin) space: "76 119 women" are 76,119.
_NUMBER = rf"(\d{{1,3}}(?:,\d{{3}})+|\d{{1,3}}(?:[ \u2009\u202f]\d{{3}})+(?!\d)|\d+|\b(?:{_NUMBER_WORD})\b)"
_PEOPLE = (
    r"(?:participants|patients|adults|subjects|people|individuals|women|men|children|volunteers|persons|veterans"
    r"|residents|users|infants|adolescents|cases|pregnancies|older adults|outpatients|inpatients)"
)
_N_EQUALS = re.compile(rf"\b[nN]\s*=\s*{_NUMBER}(?!\d|,\d)(?!\s*(?:per|in each|each|/))")
# "745 of a planned 1,000 patients": a target is not a count.
_N_PEOPLE = re.compile(rf"(?<![\d.,])(?<!planned )(?<!target of ){_NUMBER}\s+(?:[\w-]+\s+){{0,3}}?{_PEOPLE}\b", _I)
_N_ENROLLED = re.compile(
    rf"(?<![\d.,]){_NUMBER}\s+(?:[\w-]+\s+){{0,3}}?{_PEOPLE}\s+(?:[\w-]+\s+){{0,3}}?(?:were|was)\s+"
    r"(?:randomi[sz]ed|enrolled|included|recruited|assigned)"
    rf"|\bwe (?:randomi[sz]ed|enrolled|included|recruited) {_NUMBER}\s+(?:[\w-]+\s+){{0,3}}?{_PEOPLE}\b",
    _I,
)
# What a count is of, read from the words nearest it within its clause: a review that pools randomised trials
# and contrasts them with observational data ("Nine RCTs (2,275 patients) ... Twenty-seven observational
# studies (over 400,000 patients)") has, as its own n, the trials' patients, not the cohorts' records.
_TRIAL_WORDS = re.compile(r"\b(?:randomi[sz]ed|randomi[sz]ation|RCTs?|trials?)\b", _I)
_OBSERVATIONAL_WORDS = re.compile(
    r"\b(?:observational|cohorts?|records?|person-years?|claims|registry|registries|population-based)\b", _I
)
# A clause ends at a comma, semicolon, colon or bracket ("Nine RCTs (2,275 patients; atorvastatin ...)"):
# the qualifier opening a parenthesis is the count's own, so "(" does not end the clause before a count.
_CLAUSE_BEFORE = re.compile(r"(?<!\d),|,(?!\d)|[;:)]")
_CLAUSE_AFTER = re.compile(r"(?<!\d),|,(?!\d)|[;:()]")
_OBSERVATIONAL: frozenset[StudyDesign | None] = frozenset(
    {"cohort", "case_control", "cross_sectional", "observational", "case_report"}
)
# A review of randomised trials only: an observational count in it is not its participants.
_POOLS_TRIALS = re.compile(
    r"\b(?:meta-analys[ie]s|systematic review|pooled analysis)\s+of\s+(?:[\w-]+\s+){0,4}?"
    r"(?:randomi[sz]ed|RCTs?\b|(?:placebo-)?controlled trials)",
    _I,
)


class _Count(NamedTuple):
    n: int
    of: Literal["trial", "observational"] | None  # what the count is of, when its clause says


def sample_size(text: str, design: StudyDesign | None = None) -> int | None:
    """Participants, when the abstract states them: the number randomised or enrolled if given; else the
    largest "N participants/patients/adults…" or "n = N". Several "n = N" in one sentence are the arms of
    one study ("drug (n = 30) or placebo (n = 23)") and are added up. Unless the study is itself
    observational (``design``), a count of observational cohorts, records or registries is not its n when
    it pools randomised trials or states the trials' patients as well."""

    def value(raw: str) -> int:
        if raw[0].isdigit():
            return int(re.sub(r"[,\s\u2009\u202f]", "", raw))
        hundreds, _, rest = raw.lower().rpartition("hundred")
        below = sum(_WORD_VALUES[part] for part in rest.replace(" and ", " ").replace("-", " ").split())
        return 100 * _WORD_VALUES[hundreds.strip()] + below if hundreds else below

    def plausible(counts: Iterable[_Count]) -> list[_Count]:
        # A bare four-digit year ("in 2019 patients were ...") is not a count.
        return [count for count in counts if count.n > 0 and not (1900 <= count.n <= 2100)]

    def participants(counts: list[_Count]) -> int | None:
        if design not in _OBSERVATIONAL and (
            _POOLS_TRIALS.search(text) or any(count.of == "trial" for count in counts)
        ):
            counts = [count for count in counts if count.of != "observational"]
        return max((count.n for count in counts), default=None)

    sentences = split_sentences(text)
    enrolled = plausible(
        _Count(value(raw), _qualifier(sentence, m.start(), m.end()))
        for sentence in sentences
        for m in _N_ENROLLED.finditer(sentence)
        for raw in m.groups()
        if raw
    )
    if (n := participants(enrolled)) is not None:
        return n
    stated = plausible(
        _Count(value(m.group(1)), _qualifier(sentence, m.start(), m.end()))
        for sentence in sentences
        for m in _N_PEOPLE.finditer(sentence)
    )
    for sentence in sentences:
        if arms := plausible(
            _Count(value(m.group(1)), _qualifier(sentence, m.start(), m.end())) for m in _N_EQUALS.finditer(sentence)
        ):
            stated.append(_Count(sum(arm.n for arm in arms), next((arm.of for arm in arms if arm.of), None)))
    return participants(stated)


def _qualifier(sentence: str, start: int, end: int) -> Literal["trial", "observational"] | None:
    """What the count at ``sentence[start:end]`` is of: the trial or observational word nearest it in its clause
    ("Nine RCTs (2,275 patients" -> trial; "(over 400,000 patients in observational cohorts)" -> observational)."""
    before_cut = max((m.end() for m in _CLAUSE_BEFORE.finditer(sentence, 0, start)), default=0)
    after_cut = next((m.start() for m in _CLAUSE_AFTER.finditer(sentence, end)), len(sentence))
    nearest: tuple[int, Literal["trial", "observational"]] | None = None
    kinds: tuple[tuple[re.Pattern[str], Literal["trial", "observational"]], ...] = (
        (_TRIAL_WORDS, "trial"),
        (_OBSERVATIONAL_WORDS, "observational"),
    )
    for pattern, kind in kinds:
        for m in pattern.finditer(sentence, before_cut, after_cut):
            distance = start - m.end() if m.end() <= start else m.start() - end
            if distance >= 0 and (nearest is None or distance < nearest[0]):
                nearest = (distance, kind)
    return nearest[1] if nearest else None
