"""Abbreviations a text defines ("atrial fibrillation (AF)"), so that a sentence naming "AF" is read as naming
atrial fibrillation."""

from __future__ import annotations

import re

# An abbreviation a study defines: "atrial fibrillation (AF)", "peripheral venous thrombophlebitis (PVT)".
_DEFINED = re.compile(r"((?:[^\W\d][\w'-]*\s+){0,7}[^\W\d][\w'-]*)\s*\(([A-Z][A-Za-z0-9-]{0,8}[A-Z0-9]s?)\)")


def defined_abbreviations(text: str) -> dict[str, str]:
    """The abbreviations ``text`` defines, each with its long form, found as Schwartz and Hearst (2003) do:
    the abbreviation's letters, read from its end, found in order in the words before it, its first letter
    starting a word ("coronary artery bypass grafting (CABG)")."""
    found: dict[str, str] = {}
    for match in _DEFINED.finditer(text):
        short = match.group(2)
        words = match.group(1).split()[-min(len(short) + 5, 2 * len(short)) :]
        if long := _long_form(short.removesuffix("s") if short[-2:-1].isupper() else short, " ".join(words)):
            found.setdefault(short, long)
    return found


def expands(short: str, phrase: str) -> bool:
    """Whether ``phrase`` spells out the abbreviation ``short`` as ``defined_abbreviations`` reads one
    ("Sodium-Glucose Transporter 2 Inhibitors" spells out "SGLT2")."""
    return _long_form(short, phrase) is not None


def _long_form(short: str, candidate: str) -> str | None:
    s, i = len(short) - 1, len(candidate) - 1
    while s >= 0:
        char = short[s].lower()
        if not char.isalnum():
            s -= 1
            continue
        while i >= 0 and (candidate[i].lower() != char or (s == 0 and i > 0 and candidate[i - 1].isalnum())):
            i -= 1
        if i < 0:
            return None
        i, s = i - 1, s - 1
    return candidate[i + 1 :]
