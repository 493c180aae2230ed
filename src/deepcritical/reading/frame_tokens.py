"""The words of a question as the frame reads them (``reading.frame``): tokens with their places, which of them
can be part of an entity, where the question's predicate begins, and the phrases read before the words (a time
point, a relative clause, an outcome's instrument)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from deepcritical.reading.frame_words import AUX, BE, DETERMINERS, FUNCTION, PREDICATES, VERBS

# An abbreviation defined in brackets ("(IRS)", "(PEI)"): it names what precedes it.
_NAMED_IN_BRACKETS = re.compile(r"\s*\((?:[A-Z][A-Za-z0-9-]{0,8}[A-Z0-9]s?|[A-Z])\)")
_TOKEN = re.compile(r"\w+(?:['’.\-+/]\w+)*|[,;:?!()\[\]]")

# When an outcome is measured ("at 12 months", "after six weeks of follow-up", "at 48 hours", "at 6 to 12 months") is
# neither an outcome nor people.
_NUMBER = (
    r"(?:\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:thir|four|fif|six|seven"
    r"|eigh|nine)teen|(?:twen|thir|for|fif|six)ty)"
)
_NUMBERS = rf"{_NUMBER}(?:\s*(?:to|-|–|or|and)\s*{_NUMBER})?"
TIME_POINT = re.compile(
    rf"\s+(?:at|after|over|within|by|up\s+to)\s+(?:the\s+)?(?:first\s+|last\s+)?{_NUMBERS}"
    r"[\s-]+(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)"
    r"(?:\s+(?:of\s+)?(?:follow[- ]?up|age|treatment))?\b",
    re.IGNORECASE,
)
# "the proportion of wounds which are infection-free": the clause describes the outcome it follows, one entity.
WHICH_IS = re.compile(r"\s+(?:which|that)\s+(?:is|are|was|were|remain|remained)\s+", re.IGNORECASE)
# "neuropathy symptoms measured by Total Symptom Score": the instrument names the same outcome another way, a second
# name of it, not a longer outcome ("symptoms measured").
MEASURED_BY = re.compile(
    r"\s*,?\s+(?:as\s+)?(?:measured|assessed|evaluated|rated|scored)\s+(?:by|with|using|on)\s+(?:the\s+)?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int

    @property
    def low(self) -> str:
        return self.text.lower()


def tokenize(text: str) -> list[Token]:
    """The text's tokens, without an abbreviation defined in brackets ("(IRS)" after "indoor residual spraying"):
    it names what precedes it, so an entity runs on across it, as written ("spraying (IRS) plus ... nets")."""
    named = [(m.start(), m.end()) for m in _NAMED_IN_BRACKETS.finditer(text)]
    return [
        Token(m.group(0), m.start(), m.end())
        for m in _TOKEN.finditer(text)
        if not any(start <= m.start() and m.end() <= end for start, end in named)
    ]


def is_word(token: Token) -> bool:
    return token.text[0].isalnum() or token.text[0] == "_"


def is_content(tokens: Sequence[Token], index: int) -> bool:
    """Whether the token at ``index`` can be part of an entity. A capital letter or a Roman numeral after a
    word is ("vitamin A", "type I diabetes", "hepatitis B"), although "a" and "I" are function words."""
    token = tokens[index]
    if not is_word(token):
        return False
    after_word = index > 0 and is_content(tokens, index - 1)  # "hepatitis A", and "A" after it again
    if after_word and re.fullmatch(r"[A-Z]|[IVX]{1,4}", token.text):
        return True
    return token.low not in FUNCTION


def not_a_verb(tokens: Sequence[Token], index: int) -> bool:
    """A verb's form right after a determiner is a noun ("the changes", "an increase"), and an -ed or -ing
    form right after a function word modifies one ("with reduced ejection fraction")."""
    if index == 0 or is_content(tokens, index - 1):  # "vitamin A reduces": A names, it is no article
        return False
    before = tokens[index - 1].low
    return before in DETERMINERS or (tokens[index].low.endswith(("ed", "ing")) and before in FUNCTION)


def predicate_at(tokens: Sequence[Token], start: int, *, linking: bool) -> tuple[int, int] | None:
    """Where the question's predicate begins (its first verb, auxiliary or predicate word after a subject)
    and where what follows it begins. With no known verb, a determiner after the subject marks it: in a
    question led by "is" it opens the complement ("Is the advanced age a contraindication to ..."), else
    the word before it is the verb ("Do patients know their goal?")."""
    for index in range(start + 1, len(tokens)):
        low = tokens[index].low
        if low in AUX or low in BE or low in PREDICATES:
            return index, index + 1
        if low in VERBS and not not_a_verb(tokens, index):
            return index, index + 1
    for index in range(start + (1 if linking else 2), len(tokens)):
        if tokens[index].low in DETERMINERS and not is_content(tokens, index):
            before = tokens[index - 1]
            if linking:
                return index, index
            if is_word(before) and before.low not in FUNCTION:
                return index - 1, index
    return None
