"""What a result is read for, and the words it is read in: a ``Comparison`` (intervention, comparator and
outcome, as stems, with the labels the article gives its arms), the stemmed tokens of a text, the text with
the arms and the outcome masked as placeholders (``masked_tokens``), and the arm a unit states its result of
(``subject_arm``), shared by the linear features (``result_features``), the transformer classifier
(``transformer_classifier``) and the reader (``results``)."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
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
    # The labels a trial's text gives its arms ("group S", "AF"), lower-cased, each with its arm
    # (``INTERVENTION`` or ``COMPARATOR``): read from the article by ``labelled``; None until read.
    labels: tuple[tuple[str, str], ...] | None = None
    # Whether the arms' placeholders are exchanged (``turned``).
    swapped: bool = False

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

    def turned(self) -> Comparison:
        """This comparison with the arms' placeholders exchanged: a unit whose subject is the comparator
        ("higher in group S than in group B") reads, turned, as a unit about the intervention."""
        return replace(self, swapped=not self.swapped)

    def labelled(self, text: str) -> Comparison:
        """This comparison with the labels ``text`` (the article, and the arms as written) gives its arms."""
        return replace(self, labels=arm_labels("\n".join((*self.written[:2], text)), self))


# A trial names its arms by letters, numbers or abbreviations it defines once: "sevoflurane (group S)",
# "group B (bupivacaine)", "group 1 received ...", "accelerated fractionation (AF)". Doctors' evidence
# sentences then say "significantly higher in group S than group B": unmasked, the classifier cannot tell
# which arm a direction word speaks of (phases/16_result_reader.md, round 5).
_LABEL = r"(?:[A-Z][A-Za-z0-9]{0,5}|\d{1,2})"
_ABBREVIATION = r"(?:[A-Z][A-Z0-9/-]{1,6})"
# Definitions whose label follows its phrase: "sevoflurane (group S)", "bupivacaine (group B, n = 30)",
# "the sevoflurane group (S)", "accelerated fractionation (AF)"; the phrase is what precedes the match.
_GROUP_LABEL_AFTER = (
    re.compile(r"\(\s*(?:[Gg]roup|[Aa]rm)\s+(" + _LABEL + r")\s*[,;)]"),
    re.compile(r"\s(?:group|arm)\s*\(\s*(" + _LABEL + r")\s*\)"),
)
_ABBREVIATED = re.compile(r"\(\s*(" + _ABBREVIATION + r")\s*[,;)]")
# Definitions whose phrase follows its label: "group B (bupivacaine)", "group 1 received ...", "group S: saline".
_LABEL_BEFORE = (
    re.compile(r"\b(?:[Gg]roup|[Aa]rm)\s+(" + _LABEL + r")\s*\(([^()\n]{3,90})\)"),
    re.compile(
        r"\b(?:[Gg]roup|[Aa]rm)\s+(" + _LABEL + r")\s*(?:[:=,–-]\s*|\s+(?:patients\s+|participants\s+)?"
        r"(?:received|receiving|was given|were given|was treated with|were treated with|got|underwent)\s+)"
        r"((?:[^.;()\n]|\([^()\n]*\)|(?<=\d)\.(?=\d)){3,90})"
    ),
)
_PHRASE_START = re.compile(r"[.;:()\[\]\n]")
# Abbreviations of statistics, and short English words: an abbreviation is masked wherever its letters
# stand, and "antithrombin (AT)" must not make every "at" the intervention.
# fmt: off
_NOT_LABELS = frozenset([
    "or", "hr", "rr", "ci", "sd", "se", "sem", "md", "vs", "iqr", "ns", "nnt", "auc", "no", "it", "as", "is", "in",
    "to", "at", "on", "an", "be", "of", "up", "we", "he", "us", "so", "do", "by", "if", "am", "me", "my", "all",
    "and", "any", "are", "can", "for", "had", "has", "her", "his", "its", "may", "not", "one", "our", "out", "per",
    "see", "she", "the", "two", "was", "who", "use", "day", "age", "set"
])
# fmt: on
_GROUP_WORDS = frozenset(["group", "groups", "arm", "arms"])
_STATISTIC_SIGNS = frozenset(["=", "<", ">", "≤", "≥"])
_LIST_WORDS = frozenset(["and", "or", "vs", "versus"])


def _definitions(text: str) -> Iterator[tuple[str, str, bool]]:
    """(label, phrase, whether a group's) for each place ``text`` defines a label. An abbreviation's
    phrase is the few words before it ("... with accelerated fractionation (AF)")."""
    for pattern in (*_GROUP_LABEL_AFTER, _ABBREVIATED):
        for match in pattern.finditer(text):
            phrase = _PHRASE_START.split(text[max(0, match.start() - 90) : match.start()])[-1]
            if pattern is _ABBREVIATED:
                phrase = " ".join(phrase.split()[-(len(match[1]) + 2) :])
            yield match[1], phrase, pattern is not _ABBREVIATED
    for pattern in _LABEL_BEFORE:
        for match in pattern.finditer(text):
            yield match[1], match[2], True


def arm_labels(text: str, comparison: Comparison) -> tuple[tuple[str, str], ...]:
    """The labels ``text`` defines for the comparison's arms: each label's defining phrase is compared with
    the intervention's and the comparator's words, and the label goes to the arm it names more of (a label
    whose phrases name both alike, or neither, is no arm's). A group's phrase may name its arm as trials
    do ("the control group (group C)"); an abbreviation's must name the comparison's own words."""
    votes: dict[str, dict[str, int]] = {}
    for label, phrase, of_group in _definitions(text):
        key = label.lower()
        if key in _NOT_LABELS or key in comparison.intervention or key in comparison.comparator:
            continue
        words = set(stems(phrase))
        if of_group:
            # "usual care (group U)": the words trials call their arms by are generic words, which ``stems`` drops.
            words |= set(tokens(phrase)[1]) & (_INTERVENTION_ARM | _COMPARATOR_ARM)
        tally = votes.setdefault(key, {INTERVENTION: 0, COMPARATOR: 0})
        tally[INTERVENTION] += len(words & (comparison.intervention | (_INTERVENTION_ARM if of_group else set())))
        tally[COMPARATOR] += len(words & (comparison.comparator | (_COMPARATOR_ARM if of_group else set())))
    found = []
    for key, tally in sorted(votes.items()):
        intervention, comparator = tally[INTERVENTION], tally[COMPARATOR]
        if intervention != comparator:
            found.append((key, INTERVENTION if intervention > comparator else COMPARATOR))
    return tuple(found)


def mapped_arms(raw: Sequence[str], stemmed: Sequence[str], comparison: Comparison) -> list[str]:
    """``stemmed`` with each word that names an arm as its placeholder: the comparison's words, a hyphenated
    word one of whose parts is one ("co-artemether" for artemether), the labels the article gave the arms
    (a letter or number only after "group" or in a list of groups: "groups RM and RD"), the words trials
    call their arms by ("the control group"), and the treated arm a unit names only by its group."""
    labels = dict(comparison.labels or ())
    mapped: list[str] = []
    # Where a letter or number may be a label: after "group(s)", or in a list after a label ("C, B and D").
    expecting = ""
    for index, (token, stem) in enumerate(zip(raw, stemmed, strict=True)):
        arm = arm_of(stem, comparison)
        label = labels.get(token)
        if label is not None and not (expecting or (len(token) > 1 and not token.isdigit())):
            label = None
        if label is not None and index + 1 < len(raw) and raw[index + 1] in _STATISTIC_SIGNS:
            label = None  # "group P (p = 0.002)": a letter before "=" or "<" is a statistic's
        if arm is None:
            arm = label or (_arm_of_parts(token, comparison) if "-" in stem else None)
        if token in _GROUP_WORDS:
            expecting = "label"
        elif label is not None or (expecting == "list" and token in _LIST_WORDS):
            expecting = "list"
        else:
            expecting = ""
        mapped.append(arm or stem)
    name_unnamed_arm(stemmed, mapped)
    if comparison.swapped:
        exchange = {INTERVENTION: COMPARATOR, COMPARATOR: INTERVENTION}
        return [exchange.get(token, token) for token in mapped]
    return mapped


def _arm_of_parts(word: str, comparison: Comparison) -> str | None:
    parts = set(_stemmer().stemWords([part for part in word.split("-") if part[:1].isalpha()]))
    intervention, comparator = bool(parts & comparison.intervention), bool(parts & comparison.comparator)
    if intervention != comparator:
        return INTERVENTION if intervention else COMPARATOR
    return None


def tokens(text: str) -> tuple[list[str], list[str]]:
    raw = TOKEN.findall(text.lower().replace("·", "."))
    words = [token for token in raw if token[0].isalpha()]
    stemmed = iter(_stemmer().stemWords(words))
    return raw, [next(stemmed) if token[0].isalpha() else token for token in raw]


def masked_tokens(text: str, comparison: Comparison) -> list[str]:
    """The unit's tokens, the arms and the outcome as placeholders, numbers as ``num`` (repeats folded)."""
    raw, stemmed = tokens(text)
    mapped = mapped_arms(raw, stemmed, comparison)
    out: list[str] = []
    for token in mapped:
        if token in comparison.outcome:
            token = OUTCOME
        elif token[0].isdigit():
            token = "num"
        if not out or out[-1] != token or token not in (INTERVENTION, COMPARATOR, OUTCOME, "num"):
            out.append(token)
    return out


# Words before the arm a result is measured against: "than", "compared with", "versus", "relative to".
_REFERENCE_WORDS = frozenset(["than", "compar", "versus", "vs", "relat", "over"])
# Of those, the ones that may stand further from their arm ("compared with women in the control arm, ...");
# "than" and "over" may not ("more than 3000 patients", "over 12 months").
_FAR_REFERENCE_WORDS = frozenset(["compar", "versus", "vs", "relat"])
# How many words before an arm a far reference word may stand.
REFERENCE_REACH = 5


def reference_arm(masked: Sequence[str], gaps: int = 2) -> str | None:
    """The arm named just after a reference word, at most ``gaps`` words on ("than with the control group"):
    the arm the other is measured against; None when no arm follows one."""
    for gap in range(1, gaps + 1):
        for index, token in enumerate(masked[:-gap]):
            if token in _REFERENCE_WORDS and masked[index + gap] in (INTERVENTION, COMPARATOR):
                return masked[index + gap]
    return None


def subject_arm(text: str, comparison: Comparison) -> str | None:
    """The arm a unit's result is stated of: the other one than the arm a reference word names ("lower with
    drug X than with placebo"); else the first arm it names, unless a far reference word stands before that
    one ("Compared with women in the placebo arm, women in the drug arm ..."). None unless it names both arms
    (a unit naming the comparator alone may name the intervention in words the comparison does not know:
    "27.9% with hydrocortisone and 28.8% with placebo", asked which drugs)."""
    masked = masked_tokens(text, comparison)
    if INTERVENTION not in masked or COMPARATOR not in masked:
        return None
    other = {INTERVENTION: COMPARATOR, COMPARATOR: INTERVENTION}
    if reference := reference_arm(masked, gaps=3):
        return other[reference]
    for index, token in enumerate(masked):
        if token in other:
            far = _FAR_REFERENCE_WORDS.intersection(masked[max(0, index - REFERENCE_REACH) : index])
            return other[token] if far else token
    return None


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
