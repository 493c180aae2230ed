"""How many people a study had, when its abstract states it (in digits or in words)."""

from __future__ import annotations

import re
from collections.abc import Iterable

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
_NUMBER = rf"(\d{{1,3}}(?:,\d{{3}})+|\d+|\b(?:{_NUMBER_WORD})\b)"
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
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


def sample_size(text: str) -> int | None:
    """Participants, when the abstract states them: the number randomised or enrolled if given; else the
    largest "N participants/patients/adults…" or "n = N". Several "n = N" in one sentence are the arms of
    one study ("drug (n = 30) or placebo (n = 23)") and are added up."""

    def value(raw: str) -> int:
        if raw[0].isdigit():
            return int(raw.replace(",", ""))
        hundreds, _, rest = raw.lower().rpartition("hundred")
        below = sum(_WORD_VALUES[part] for part in rest.replace(" and ", " ").replace("-", " ").split())
        return 100 * _WORD_VALUES[hundreds.strip()] + below if hundreds else below

    def plausible(numbers: Iterable[int]) -> list[int]:
        # A bare four-digit year ("in 2019 patients were ...") is not a count.
        return [n for n in numbers if n > 0 and not (1900 <= n <= 2100)]

    enrolled = plausible(value(g) for m in _N_ENROLLED.finditer(text) for g in m.groups() if g)
    if enrolled:
        return max(enrolled)
    counts = plausible(value(m.group(1)) for m in _N_PEOPLE.finditer(text))
    for sentence in _SENTENCE.split(text):
        arms = plausible(value(m.group(1)) for m in _N_EQUALS.finditer(sentence))
        if arms:
            counts.append(sum(arms))
    return max(counts) if counts else None
