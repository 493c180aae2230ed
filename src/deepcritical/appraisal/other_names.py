"""An intervention named otherwise: by its name in another country ("paracetamol", "acetaminophen"), by a member
of the class a question names ("SSRIs": a trial of sertraline), or misspelt in the question ("grehlin" for
ghrelin, "Ppost-mastectomy"). A review's question names the class and the country's name; its trials name the
drug. The lists are pharmacology's classes and international non-proprietary names against US adopted names,
not words read off any evaluation's items."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

# One drug, two names (the INN and the US adopted name, or the old British name).
_SAME_DRUG = (
    ("paracetamol", "acetaminophen"),
    ("adrenaline", "epinephrine"),
    ("noradrenaline", "norepinephrine"),
    ("salbutamol", "albuterol"),
    ("frusemide", "furosemide"),
    ("lignocaine", "lidocaine"),
    ("pethidine", "meperidine"),
    ("ciclosporin", "cyclosporine"),
    ("glibenclamide", "glyburide"),
    ("rifampicin", "rifampin"),
    ("aciclovir", "acyclovir"),
    ("glyceryl trinitrate", "nitroglycerin"),
    ("oestrogen", "estrogen"),
)
# A class of drugs (as questions abbreviate it, plural s folded) and its members.
_CLASSES: dict[str, tuple[str, ...]] = {
    "ssri": ("fluoxetine", "sertraline", "paroxetine", "citalopram", "escitalopram", "fluvoxamine"),
    "snri": ("venlafaxine", "desvenlafaxine", "duloxetine", "milnacipran", "levomilnacipran"),
    "tca": ("amitriptyline", "nortriptyline", "imipramine", "clomipramine", "desipramine", "doxepin"),
    "nsaid": (
        "ibuprofen", "naproxen", "diclofenac", "ketoprofen", "indomethacin", "indometacin", "celecoxib",
        "etoricoxib", "meloxicam", "piroxicam", "ketorolac", "aspirin",
    ),
    "ppi": ("omeprazole", "esomeprazole", "lansoprazole", "pantoprazole", "rabeprazole"),
    "benzodiazepine": ("diazepam", "lorazepam", "midazolam", "alprazolam", "clonazepam", "temazepam"),
    "bisphosphonate": ("alendronate", "risedronate", "ibandronate", "zoledronic", "pamidronate"),
    "arb": ("losartan", "valsartan", "candesartan", "irbesartan", "telmisartan"),
}  # fmt: skip
# A misspelt word is long: "grehlin" (7 letters, its letters in another order) for ghrelin; one letter more or
# other only from 8 ("insulin" is not "inulin"); shorter words are too alike to tell apart.
_MISSPELT_LETTERS = 7
_ONE_EDIT_LETTERS = 8
_WORD = re.compile(r"[a-z][a-z0-9-]*")


@cache
def _other_names() -> dict[str, tuple[str, ...]]:
    """Each name (lower case) with the names that name it too."""
    names: dict[str, tuple[str, ...]] = dict(_CLASSES)
    for one, other in _SAME_DRUG:
        names[one] = (other,)
        names[other] = (one,)
    return names


def _key(word: str) -> str:
    low = word.lower().strip("'’-")
    return low[:-1] if low.endswith("s") and low[:-1] in _other_names() else low


def named_otherwise(words: Iterable[str], text: str) -> set[str]:
    """The ``words`` (an intervention's, as written) that ``text`` names under another name of the same drug, by a
    member of the class the word names, or in another spelling of a long word (the same letters in another
    order, or one letter more, less or other, hyphens aside)."""
    low = text.lower()
    found = set(_WORD.findall(low))
    joined = {word.replace("-", "") for word in found}
    named = set()
    for word in words:
        key = _key(word)
        by_name = any(re.search(rf"\b{re.escape(name)}s?\b", low) for name in _other_names().get(key, ()))
        if by_name or (len(key) >= _MISSPELT_LETTERS and any(_misspelt(key.replace("-", ""), o) for o in joined)):
            named.add(word)
    return named


def _misspelt(word: str, other: str) -> bool:
    """``word`` is ``other`` misspelt: the same first and last letters and either the same letters in another
    order ("grehlin", "ghrelin") or one edit apart ("ppostmastectomy", "postmastectomy")."""
    if word == other or abs(len(word) - len(other)) > 1 or not word.isalpha() or word[0] != other[0]:
        return False
    if len(word) == len(other) and word[-1] == other[-1] and sorted(word) == sorted(other):
        return True
    return min(len(word), len(other)) >= _ONE_EDIT_LETTERS and _one_edit(word, other)


def _one_edit(word: str, other: str) -> bool:
    """One letter added, removed or changed turns ``word`` into ``other``."""
    if len(word) == len(other):
        return sum(a != b for a, b in zip(word, other, strict=True)) == 1
    short, long = sorted((word, other), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))
