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
from functools import cache

from deepcritical.reading.comparison import stems

MAX_OUTCOME_CHARS = 120
_SENTENCE_END = re.compile(r"[.!?]\s+(?=[A-Z(])")
# The end of a clause that cannot hold this estimate's outcome: a semicolon or colon, the end of the
# bracket of the estimate before it, or a comma.
_BOUNDARY = re.compile(r"[;:,]\s*|\)\s*(?:,|and\b|or\b)?\s*")
# A verb that joins a subject to what is said about it: its subject is the outcome ("X was reduced").
_LINKING = re.compile(
    r"\b(?:was|were|is|are|occurred|occurs|did|does|do|had|has|have|remained|fell|rose|declined|increased by|"
    r"decreased by|differed|did not differ)\b",
    re.IGNORECASE,
)
# An active effect verb (or "associated with"): its object is the outcome ("drug reduced X").
_ACTIVE = re.compile(
    r"\b(?:(?:was|were|is|are)\s+)?(?:associated with|reduced|reduces|reduce|lowered|lowers|lower|increased|increases|"
    r"improved|improves|prevented|prevents|cut|cuts|decreased|decreases|raised|raises)\b\s*",
    re.IGNORECASE,
)
_PRIMARY = re.compile(r"\bprimary\s+(?:composite\s+|efficacy\s+)?(?:outcome|end\s?point)\b", re.IGNORECASE)
_PRIMARY_DEFINED = re.compile(
    r"\bprimary\s+(?:composite\s+|efficacy\s+)?(?:outcome|end\s?point)\s+(?:was|were|is|:)\s*"
    r"(?P<definition>[^.;]{3,200})",
    re.IGNORECASE,
)
# Leading words that say how much, not what: "the", "fewer", "the risk of" ("a composite of" stays: it says what).
_LEADING = re.compile(
    r"^(?:(?:and|or|the|a|an|fewer|less|lower|more|higher|greater|its|their|overall|risk|rate|rates|incidence|"
    r"hazard|odds|ratio|of|for|in)\b\s*)+",
    re.IGNORECASE,
)
_QUALIFIERS = frozenset(
    {"first", "fewer", "composit", "combin", "risk", "incid", "less", "lower", "more", "higher", "total"}
    | {"primari", "outcom", "endpoint", "end", "point", "hazard", "odd", "ratio", "hr", "or", "rr"}
)
_SYNONYMS = {"mortal": "death", "die": "death", "hospit": "hospitalis", "hospitalisation": "hospitalis", "ani": "all"}


def _clause_before(text: str, start: int) -> str:
    """The words from the last clause boundary (or the sentence's start) to ``start``."""
    window_start = max(0, start - 400)
    window = text[window_start:start]
    sentence = 0
    for match in _SENTENCE_END.finditer(window):
        sentence = match.end()
    window = window[sentence:]
    # The estimate's own bracket: "(HR 0.77" -> cut at the "(".
    opening = window.rfind("(")
    if opening >= 0 and ")" not in window[opening:]:
        window = window[:opening]
    last = 0
    for match in _BOUNDARY.finditer(window):
        if match.end() < len(window.rstrip()):
            last = match.end()
    return window[last:].strip()


def _outcome_words(clause: str) -> str:
    """The outcome the clause names: the object of an active effect verb, else the subject of a linking verb."""
    active = _ACTIVE.search(clause)
    linking = _LINKING.search(clause)
    if active is not None and (linking is None or active.start() <= linking.start()):
        phrase = clause[active.end() :]
    elif linking is not None:
        phrase = clause[: linking.start()]
    else:
        phrase = clause
    phrase = re.sub(r"\s+(?:with|in|among|versus|vs\.?|compared)\b.*$", "", phrase, flags=re.IGNORECASE)
    return _LEADING.sub("", phrase.strip(" ,;:-")).strip(" ,;:-")


def outcome_of(text: str, start: int) -> str | None:
    """The outcome of the estimate that starts at ``start`` in ``text``, in the text's words (the primary
    outcome as the text defines it); None when the words before it name none."""
    phrase = _outcome_words(_clause_before(text, start))
    if _PRIMARY.search(phrase) or phrase.lower() in ("", "primary"):
        defined = _PRIMARY_DEFINED.search(text)
        if defined is None:
            return phrase or None
        phrase = _LEADING.sub("", defined.group("definition").strip())
    phrase = " ".join(phrase.split())
    if not outcome_key(phrase):
        return None
    return phrase if len(phrase) <= MAX_OUTCOME_CHARS else phrase[: MAX_OUTCOME_CHARS - 1].rstrip() + "…"


@cache
def outcome_key(phrase: str) -> frozenset[str]:
    """What makes two outcomes the same: their content words, stemmed, synonyms joined, qualifiers out."""
    words = stems(re.sub(r"[-/]", " ", phrase))
    return frozenset(_SYNONYMS.get(word, word) for word in words if word not in _QUALIFIERS)
