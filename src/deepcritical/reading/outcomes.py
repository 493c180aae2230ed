"""Which outcome a stated estimate is about, read from the words before it, so that a forest plot puts
side by side only estimates of one outcome (a composite of death or hospitalisation is not death).

Deterministic and plain: the clause before the estimate (from the sentence's start, a semicolon or the
end of the estimate before it) names the outcome as its subject ("cardiovascular death was not
significantly reduced (HR 0.91 ...)") or, after an active effect verb, as its object ("SGLT2 inhibitors
reduced the composite of cardiovascular death or hospitalisation for heart failure (HR 0.77 ...)", "use
was associated with fewer heart failure hospitalisations (hazard ratio 0.79 ...)"). "The primary
outcome" is the text's own definition of it ("The primary outcome was a composite of ..."). Two
outcomes are the same when their content words are, stemmed, with a few synonyms joined (mortality and
death, hospitalization and hospitalisation, any cause and all-cause) and words that qualify a count
rather than name an outcome left out (first, fewer, risk, rate...)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from deepcritical.reading.comparison import stems
from deepcritical.text import collapse_whitespace, sentence_starts

MAX_OUTCOME_CHARS = 120
# The end of a clause that cannot hold this estimate's outcome: a semicolon or colon, the end of the
# bracket of the estimate before it, or a comma.
_BOUNDARY = re.compile(r"[;:,]\s*|\)\s*(?:,|and\b|or\b)?\s*")
# A verb that joins a subject to what is said about it: its subject is the outcome ("X was reduced").
_LINKING = re.compile(
    r"\b(?:was|were|is|are|occurred|occurs|did|does|do|had|has|have|remained|fell|rose|declined|"
    r"(?:increased|decreased|improved|reduced|changed|worsened) by|differed|did not differ)\b",
    re.IGNORECASE,
)
# An active effect verb (or "associated with", "had lower", "showed no effect on"): its object is the outcome
# ("drug reduced X"). Not when "by" follows: "recall improved by 9.7 words" says how much its subject changed.
_ACTIVE = re.compile(
    r"\b(?:(?:(?:was|were|is|are)\s+(?:not\s+)?)?(?:associated with|reduced|reduces|reduce|lowered|lowers|lower"
    r"|increased|increases|improved|improves|prevented|prevents|cut|cuts|decreased|decreases|raised|raises)\b"
    r"(?!\s+by\b)"
    r"|(?:did|does|do) not (?:reduce|lower|improve|increase|decrease|change|prevent|affect)\b"
    r"|(?:showed|shows|had|has|have) (?:(?:a|an|no)\s+)?(?:\d+(?:\.\d+)?\s?%\s+|\d+(?:\.\d+)?-fold\s+)?"
    r"(?:(?:significant|clear|meaningful)\s+)?(?:effect on\b"
    r"|(?:slower|faster|greater|smaller|lower|higher|more|less|fewer|reduced|increased)\b))\s*",
    re.IGNORECASE,
)
# After a word of change, "in" says what changed ("a slower decline in FDG uptake"); after anything else it
# says where or in whom ("mortality in patients with sepsis"), which is not the outcome.
_WHERE = re.compile(
    r"(?<!\brise)(?<!\bfall)(?<!\bdecline)(?<!\bchange)(?<!\bincrease)(?<!\bdecrease)(?<!\breduction)"
    r"(?<!\bimprovement)\s+(?:with|in|among|versus|vs\.?|compared|than)\b(?!-).*$",
    re.IGNORECASE,
)
# Trailing words that say how much or join the next words, not what: "symptoms slightly", "mRNA by", "sepsis from".
_TRAILING = re.compile(r"(?:\s+(?:\w+ly|by|from|to|of|and|or|the|a|an)\b)+$", re.IGNORECASE)
# Words that name an exposure, an analysis or a connective, never an outcome: a clause of only these and the
# qualifiers names none ("gave a pooled adjusted", "whereas short-term use", "attenuated the estimate to").
_NOT_OUTCOME = frozenset(
    {"also", "wherea", "while", "but", "gave", "give", "pool", "adjust", "weight", "crude", "estim", "attenu"}
    | {"use", "user", "short", "long", "term", "analysi", "model", "overal", "summari", "relat", "effect", "show"}
    | {"restrict", "sensit", "specif", "differ", "mean", "standardis", "standard", "exposur"}
)
# An estimate whose quote starts at its measure's abbreviation, "(RR) of all-cause dementia was 0.80": the outcome
# follows the measure's name.
_MEASURE_OF = re.compile(r"^\(?[A-Za-z]{1,5}\)?\s+(?:of|for)\s+(?P<outcome>[^()0-9;=]{3,120}?)\s+(?:was|were|is|are)\b")
# An estimate whose words start with its verb: "reduced AT8-positive tau by 38%".
_VERB_FIRST = re.compile(
    r"^(?:reduced|increased|decreased|lowered|raised|improved)\s+(?P<outcome>[^();]{3,120}?)\s+by\s+[-+]?\d",
    re.IGNORECASE,
)
# A change whose words start with its size: "15% more falls (rate ratio ...", "20% fewer admissions than".
_SIZE_FIRST = re.compile(
    r"^[-+]?\d+(?:\.\d+)?\s?%\s+(?:more|fewer|less|lower|higher|greater)\s+(?P<outcome>[^();,]{3,120}?)"
    r"\s*(?:[();,]|\b(?:than|with|in|among|versus|vs)\b)"
)
# A time point is part of an outcome: 28-day and 90-day mortality are two outcomes, never pooled as one.
_TIME_POINT = re.compile(
    r"\b(?P<count>\d+|(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)-?)?(?:one|two|three|four|five"
    r"|six|seven|eight|nine)|ten|eleven|twelve|fourteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
    r"|hundred)[- ](?P<unit>hours?|days?|weeks?|months?|years?)\b",
    re.IGNORECASE,
)
_UNITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
_TENS = {
    "thirteen": 13,
    "fourteen": 14,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_NUMBER_WORDS = {word: value for value, word in enumerate(_UNITS)} | _TENS | {"hundred": 100}
_PRIMARY = re.compile(r"\bprimary\s+(?:composite\s+|efficacy\s+)?(?:outcome|end\s?point)\b", re.IGNORECASE)
_PRIMARY_DEFINED = re.compile(
    r"\bprimary\s+(?:composite\s+|efficacy\s+)?(?:outcome|end\s?point)\s+(?:was|were|is|:)\s*"
    r"(?P<definition>[^.;]{3,200})",
    re.IGNORECASE,
)
# Leading words that say how much, not what: "the", "fewer", "the risk of" ("a composite of" stays: it says what).
_LEADING = re.compile(
    r"^(?:(?:(?:and|or|the|a|an|fewer|less|lower|more|higher|greater|its|their|overall|risk|rate|rates|incidence|"
    r"hazard|odds|ratio|of|for|in)\b|\d+(?:\.\d+)?\s?%|\d+(?:\.\d+)?-fold)\s*)+",
    re.IGNORECASE,
)
_CONNECTIVE = re.compile(r"^(?:(?:also|whereas|while|but|and|overall|however)\b[\s,]*)+", re.IGNORECASE)
_QUALIFIERS = frozenset(
    {"first", "fewer", "composit", "combin", "risk", "incid", "less", "lower", "more", "higher", "total"}
    | {"primari", "outcom", "endpoint", "end", "point", "hazard", "odd", "ratio", "hr", "or", "rr"}
)
_SYNONYMS = {"mortal": "death", "die": "death", "hospit": "hospitalis", "hospitalisation": "hospitalis", "ani": "all"}


_DEFINING_BRACKET = re.compile(r"\s*\([^()]*\)(?=\s*(?:was|were|is|are)\b)")


def _sentence_before(text: str, start: int) -> tuple[int, str]:
    """Where the sentence holding ``start`` begins (at most 400 characters back) and its words up to ``start``."""
    window_start = max(0, start - 400)
    window = text[window_start:start]
    sentence = (sentence_starts(window) or [0])[-1]
    return window_start + sentence, window[sentence:]


def _clause_before(text: str, start: int) -> str:
    """The words from the last clause boundary (or the sentence's start) to ``start``."""
    _, window = _sentence_before(text, start)
    # The estimate's own bracket: "(HR 0.77" -> cut at the "(".
    opening = window.rfind("(")
    if opening >= 0 and ")" not in window[opening:]:
        window = window[:opening]
    # A bracket its subject's verb follows defines the subject, it ends no clause: "B12 deficiency (B12 below
    # 150 pmol/L, or ...) was present in 22.1% of users".
    window = _DEFINING_BRACKET.sub("", window)
    last = 0
    for match in _BOUNDARY.finditer(window):
        if match.end() < len(window.rstrip()):
            last = match.end()
    return window[last:].strip()


def _outcome_words(clause: str) -> str:
    """The outcome the clause names: the object of an active effect verb, else the subject of a linking verb.
    The studies a pooled estimate is for are not its outcome ("Eight RCTs showed", "in general-population
    trials")."""
    clause = _SUBGROUP_SUBJECT.sub("", _SUBGROUP_IN.sub("", clause))
    active = _ACTIVE.search(clause)
    linking = _LINKING.search(clause)
    if active is not None and (linking is None or active.start() <= linking.start()):
        phrase = clause[active.end() :]
    elif linking is not None:
        phrase = clause[: linking.start()]
    else:
        phrase = clause
    phrase = _WHERE.sub("", phrase)
    phrase = _LEADING.sub("", _CONNECTIVE.sub("", phrase.strip(" ,;:-"))).strip(" ,;:-")
    return _TRAILING.sub("", phrase).strip(" ,;:-")


def outcome_of(text: str, start: int, previous: str | None = None) -> str | None:
    """The outcome of the estimate that starts at ``start`` in ``text``, in the text's words (the primary
    outcome as the text defines it). When the words before it name none ("the estimate was", "whereas
    short-term use was not", "gave a pooled adjusted OR of"): the topic its sentence opens with ("For
    Alzheimer's disease specifically, the pooled RR was"), else the outcome the text says it measured
    ("Mortality estimates were pooled", "Incident depression was defined as"); ``previous``, the outcome of the
    estimate before it in the text, only when its words point back to it ("the estimate was"); else None:
    unread is better than another estimate's outcome."""
    after = text[start : start + 200]
    clause = _clause_before(text, start)
    if named := _MEASURE_OF.match(after) or _VERB_FIRST.match(after) or _SIZE_FIRST.match(after):
        phrase = _outcome_words(named.group("outcome"))
    else:
        phrase = _outcome_words(clause)
    if _PRIMARY.search(phrase) or phrase.lower() in ("", "primary"):
        defined = _PRIMARY_DEFINED.search(text)
        phrase = _LEADING.sub("", defined.group("definition").strip()) if defined else ""
    if own := _named(phrase) or _topic(text, start):
        return own
    if previous and _ANAPHORA.search(clause):  # "the estimate was", "and was negligible in": the one before
        return previous
    return _measured(text)


def outcomes_of(text: str, starts: Sequence[int]) -> list[str | None]:
    """The outcome of each estimate starting at ``starts`` (in the text's order): one whose words name none
    is about the outcome of the estimate before it, as a reader takes "the estimate was 0.95" or "whereas
    short-term use was not (OR 1.03 ...)"."""
    outcomes: list[str | None] = []
    previous: str | None = None
    for start in starts:
        outcome = outcome_of(text, start, previous)
        outcomes.append(outcome)
        previous = outcome or previous
    return outcomes


def _named(phrase: str) -> str | None:
    """The phrase as an outcome, whole (a table or a figure shortens it to ``MAX_OUTCOME_CHARS`` where it
    shows it; the record and the CSV export keep it as written); None when it names none ("the pooled RR",
    "short-term use")."""
    phrase = collapse_whitespace(phrase)
    if not outcome_key(phrase) - _NOT_OUTCOME:
        return None
    return phrase


# A sentence that opens with its topic: "For Alzheimer's disease specifically, the pooled RR was 0.92".
_TOPIC = re.compile(
    r"^(?:[A-Z]{3,}:\s*)?(?:For|As for|Regarding|With (?:regard|respect) to)\s+(?P<topic>[^,;:()]{3,80}?)"
    r"(?:\s+(?:specifically|alone|only|separately|in particular))?\s*,",
)
# Words that point back to the estimate before: "the estimate was", "this effect", or a clause whose subject is
# left out ("and was negligible in ...", "attenuated to").
_ANAPHORA = re.compile(
    r"\b(?:the|this|that|its)\s+(?:[\w-]+\s+){0,2}?(?:estimates?|effects?|associations?|ratios?|RR|OR|HR)\b"
    r"|^(?:was|were|is|are|did|does|remained|attenuated|fell|rose)\b",
    re.IGNORECASE,
)
# What the text says it measured: "Mortality estimates were pooled", "Incident depression was defined as".
_MEASURED = re.compile(
    r"(?:^|[.;:]\s+)(?P<outcome>[A-Z][^.;:()]{2,60}?)\s+(?:(?:estimates|data)\s+were\s+(?:pooled|combined)"
    r"|(?:was|were)\s+defined\s+as)\b"
)


def _topic(text: str, start: int) -> str | None:
    _, sentence = _sentence_before(text, start)
    topic = _TOPIC.match(sentence.lstrip())
    return _named(_LEADING.sub("", topic.group("topic"))) if topic else None


def _measured(text: str) -> str | None:
    for match in _MEASURED.finditer(text):
        if outcome := _named(_LEADING.sub("", match.group("outcome"))):
            return outcome
    return None


@cache
def outcome_key(phrase: str) -> frozenset[str]:
    """What makes two outcomes the same: their content words, stemmed, synonyms joined, qualifiers out."""
    times = {
        f"@{_count(match.group('count'))} {match.group('unit').lower().rstrip('s')}"
        for match in _TIME_POINT.finditer(phrase)
    }
    words = stems(re.sub(r"[-/]", " ", _TIME_POINT.sub(" ", phrase)))
    return frozenset(_SYNONYMS.get(word, word) for word in words if word not in _QUALIFIERS) | times


def _count(words: str) -> int:
    """'28' -> 28, 'thirty' -> 30, 'twenty-eight' -> 28."""
    if words.isdigit():
        return int(words)
    return sum(_NUMBER_WORDS[part] for part in re.split(r"[- ]", words.lower()) if part)


# Which studies a pooled estimate is for, as its sentence names them: "In the nine studies free of immortal-time
# bias the estimate was", "was negligible in general-population trials (SMD", or the sentence's subject, a
# count of studies ("Twenty-seven observational studies (...) gave a pooled adjusted OR").
_STUDY_NOUN = r"(?:studies|trials|RCTs|cohorts|meta-analyses)"
_SUBGROUP_IN = re.compile(
    rf"\b(?i:in|among|across)\s+(?:the\s+)?(?P<group>(?:[\w'’-]+\s+){{0,3}}?{_STUDY_NOUN}\b"
    r"(?:\s+(?:free of|without|with|of|at|in|that|using|including|excluding|restricted to)(?:\s+[\w'’-]+){1,5}?)?)"
    r"(?=\s*[,;(]|\s*$|\s+(?:the|this|its|it|a|an|was|were|is|are|showed|gave|had|did)\b)",
)
_SUBGROUP_SUBJECT = re.compile(
    rf"^(?:[A-Z]{{3,}}:\s*)?(?P<group>(?:[A-Z][a-z]+(?:-[a-z]+)?|\d[\d,]*)\s+(?:[\w-]+\s+){{0,2}}?{_STUDY_NOUN})\b"
)


def subgroup_of(text: str, start: int, floor: int = 0) -> str | None:
    """The studies the estimate at ``start`` pools, as its sentence names them (after ``floor``, the end of the
    estimate before it: a set named for that one is not this one's, unless it is the sentence's subject)."""
    sentence_start, sentence = _sentence_before(text, start)
    segment = sentence[max(0, floor - sentence_start) :]
    found = list(_SUBGROUP_IN.finditer(segment))
    if found:
        return collapse_whitespace(found[-1].group("group"))
    subject = _SUBGROUP_SUBJECT.match(sentence.lstrip())
    return collapse_whitespace(subject.group("group")) if subject else None
