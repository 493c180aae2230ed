"""What a result is read for, and the words it is read in: a ``Comparison`` (intervention, comparator and
outcome, as stems), the stemmed tokens of a text, and the text with the arms and the outcome masked as
placeholders (``masked``), shared by the linear features (``result_features``) and the transformer
classifier (``transformer_classifier``)."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import Stemmer  # type: ignore[import-not-found]  # a compiled module without stubs

INTERVENTION, COMPARATOR, OUTCOME = "xint", "xcomp", "xout"
TOKEN = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*|\d+(?:[.·]\d+)?|[<>=≤≥±%]")

# Words that name no one thing: they never make an intervention, comparator or outcome match.
_GENERIC = frozenset(
    [
        "a",
        "an",
        "and",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "with",
        "without",
        "by",
        "or",
        "from",
        "vs",
        "versus",
        "group",
        "groups",
        "arm",
        "arms",
        "patients",
        "patient",
        "subjects",
        "participants",
        "treatment",
        "treated",
        "therapy",
        "plus",
        "alone",
        "only",
        "standard",
        "usual",
        "care",
        "placebo-controlled",
        "baseline",
        "level",
        "levels",
        "score",
        "scores",
        "total",
        "mean",
        "rate",
        "rates",
        "number",
        "change",
        "changes",
        "day",
        "days",
        "week",
        "weeks",
        "month",
        "months",
        "year",
        "years",
        "time",
        "after",
        "before",
        "during",
        "dose",
        "doses",
        "mg",
        "kg",
        "ml",
        "daily",
        "oral",
        "use",
        "using",
        "used",
        "between",
        "compared",
        "compar",
        "who",
        "which",
        "that",
        "this",
        "these",
        "those",
        "at",
        "as",
        "is",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "their",
        "his",
        "her",
        "no",
        "not",
        "non",
        "other",
    ]
)
# How a sentence names the arms when it does not name what they received: "the control group".
_COMPARATOR_ARM = frozenset(["control", "placebo", "sham", "usual", "convent"])
_INTERVENTION_ARM = frozenset(["intervent", "experiment", "activ"])


_local = threading.local()


def _stemmer() -> Any:
    # A stemmer keeps a cache of its own, not made to be shared between threads: one per thread.
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer


def stems(phrase: str) -> list[str]:
    """The content words of ``phrase``, stemmed, generic words left out."""
    words = [word for word in TOKEN.findall(phrase.lower()) if word[0].isalpha()]
    generic = _generic_stems()
    return [stem for stem in _stemmer().stemWords(words) if stem not in generic and len(stem) > 1]


@cache
def _generic_stems() -> frozenset[str]:
    # The list is written as words; stems are what it is compared with ("alone" is "alon").
    return _GENERIC | frozenset(Stemmer.Stemmer("english").stemWords(sorted(_GENERIC)))


@dataclass(frozen=True)
class Comparison:
    """What one reading is about: the intervention, its comparator and the outcome, as stems."""

    intervention: frozenset[str]
    comparator: frozenset[str]
    outcome: frozenset[str]
    # As written, for a reader that reads words rather than stems.
    written: tuple[str, str, str] = ("", "", "")

    @classmethod
    def of(cls, intervention: str, comparator: str, outcome: str) -> Comparison:
        arms = set(stems(intervention)), set(stems(comparator))
        shared = arms[0] & arms[1]  # "metformin plus insulin" against "insulin": insulin names neither
        return cls(
            frozenset(arms[0] - shared),
            frozenset(arms[1] - shared),
            frozenset(stems(outcome)),
            (intervention, comparator, outcome),
        )


def tokens(text: str) -> tuple[list[str], list[str]]:
    raw = TOKEN.findall(text.lower().replace("·", "."))
    words = [token for token in raw if token[0].isalpha()]
    stemmed = iter(_stemmer().stemWords(words))
    return raw, [next(stemmed) if token[0].isalpha() else token for token in raw]


def masked_tokens(text: str, comparison: Comparison) -> list[str]:
    """The unit's tokens, the arms and the outcome as placeholders, numbers as ``num`` (repeats folded)."""
    _, stemmed = tokens(text)
    mapped = [arm_of(token, comparison) or token for token in stemmed]
    name_unnamed_arm(stemmed, mapped)
    out: list[str] = []
    for token in mapped:
        if token in comparison.outcome:
            token = OUTCOME
        elif token[0].isdigit():
            token = "num"
        if not out or out[-1] != token or token not in (INTERVENTION, COMPARATOR, OUTCOME, "num"):
            out.append(token)
    return out


_ARM_NOUNS = frozenset({"group", "arm", "recipi", "user", "cohort"})


def name_unnamed_arm(stemmed: Sequence[str], mapped: list[str]) -> None:
    """A unit that names the comparator but not the intervention by the question's words ("16% of the
    dapagliflozin group and 21% of the placebo group", asked about SGLT2 inhibitors) names the intervention
    by the word before "group" or "arm" that is not the comparator's."""
    if INTERVENTION in mapped or COMPARATOR not in mapped:
        return
    for index in range(len(stemmed) - 1):
        word = stemmed[index]
        arm_word = word[0].isalpha() and word not in _generic_stems()
        if stemmed[index + 1] in _ARM_NOUNS and mapped[index] == word and arm_word:
            mapped[index] = INTERVENTION


def names_intervention_arm(text: str, comparison: Comparison) -> bool:
    """Whether ``text`` speaks of the intervention's arm: by the comparison's words, or as the treated group
    beside the comparator's ("the dapagliflozin group and the placebo group")."""
    return INTERVENTION in masked_tokens(text, comparison)


def arm_of(stem: str, comparison: Comparison) -> str | None:
    if stem in comparison.intervention:
        return INTERVENTION
    if stem in comparison.comparator:
        return COMPARATOR
    if stem in _COMPARATOR_ARM:
        return COMPARATOR
    if stem in _INTERVENTION_ARM:
        return INTERVENTION
    return None
