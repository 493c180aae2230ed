"""Which drug class a drug name belongs to, by its INN stem: "rosuvastatin" and "atorvastatin" are statins
(-vastatin), "dapagliflozin" an SGLT2 inhibitor (-gliflozin). An open question's candidates list a class and
its members once, under the class (``appraisal.candidates``).

The mapping is small and named on purpose: a few common classes whose members share a stem the WHO's INN
programme reserves for them (its "The use of stems in the selection of International Nonproprietary
Names"). A stem is matched at a word's end and only with a prefix before it, so the stem alone ("statin" as a
word) is never a member; a stem that other drugs end in too is written long enough to
exclude them: the statins' INN stem is "-vastatin", since "nystatin" (an antifungal) and "somatostatin" (a
hormone) also end in "-statin". Drugs outside the mapping are grouped only when a study's text says so
(``stated_members``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

_WORD = re.compile(r"[A-Za-z][\w-]*")


@dataclass(frozen=True)
class DrugClass:
    """A class as a candidate is named (``name``), the INN stems of its members and how texts name the class."""

    name: str
    stems: tuple[str, ...]
    names: tuple[str, ...]


DRUG_CLASSES: tuple[DrugClass, ...] = (
    DrugClass(
        "statins", ("vastatin",), ("statin", "statins", "HMG-CoA reductase inhibitor", "HMG-CoA reductase inhibitors")
    ),
    DrugClass(
        "SGLT2 inhibitors",
        ("gliflozin",),
        (
            "SGLT2 inhibitor",
            "SGLT2 inhibitors",
            "SGLT-2 inhibitors",
            "gliflozins",
            "sodium-glucose cotransporter 2 inhibitors",
        ),
    ),
    DrugClass("DPP-4 inhibitors", ("gliptin",), ("DPP-4 inhibitors", "DPP4 inhibitors", "gliptins")),
    DrugClass("GLP-1 receptor agonists", ("glutide",), ("GLP-1 receptor agonists", "GLP-1 agonists", "GLP-1 RAs")),
    DrugClass("ACE inhibitors", ("pril",), ("ACE inhibitors", "angiotensin-converting enzyme inhibitors")),
    DrugClass("angiotensin receptor blockers", ("sartan",), ("angiotensin receptor blockers", "ARBs", "sartans")),
    DrugClass("beta blockers", ("olol", "dilol"), ("beta blockers", "beta-blockers", "β-blockers")),
    DrugClass("proton pump inhibitors", ("prazole",), ("proton pump inhibitors", "PPIs")),
    DrugClass("fluoroquinolones", ("floxacin",), ("fluoroquinolones", "quinolones")),
)


def _phrase(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.IGNORECASE)


_NAMES = tuple((drug_class, _phrase(name)) for drug_class in DRUG_CLASSES for name in drug_class.names)


def member_of(name: str) -> tuple[DrugClass, str] | None:
    """The class a drug name belongs to by its INN stem, and the member as written ("Rosuvastatin for
    sepsis" -> statins, "Rosuvastatin"); None when no word of ``name`` ends in a mapped stem."""
    for word in _WORD.findall(name):
        low = word.lower()
        for drug_class in DRUG_CLASSES:
            if any(low.endswith(stem) and len(low) > len(stem) + 1 for stem in drug_class.stems):
                return drug_class, word
    return None


# Further INN stems (the WHO stem book, as above) that name a drug whatever its class, so that a title's
# "nirmatrelvir-ritonavir" or "hydrocortisone" is read as a drug: antivirals, antibodies, kinase inhibitors,
# antibiotics, corticosteroids, anticoagulants and a few common others. Written long enough that an English word
# ends in none of them ("-vir", not "-ir"; "-olone", not "-one").
_DRUG_STEMS: tuple[str, ...] = (
    *(stem for drug_class in DRUG_CLASSES for stem in drug_class.stems),
    "vir", "mab", "ercept", "tinib", "cillin", "mycin", "cycline", "penem", "azole", "sone", "olone",
    "parin", "xaban", "gatran", "dronate", "oxetine", "triptyline", "azepam", "profen", "formin", "setron",
    "tidine", "triptan", "glinide", "glitazone", "tecan", "platin", "rubicin", "semide", "thiazide", "dipine",
)  # fmt: skip


def names_a_drug(name: str) -> bool:
    """Whether a word of ``name`` ends in a drug's INN stem (with a prefix before it), or ``name`` names a
    mapped class: "Nirmatrelvir-ritonavir", "Hydrocortisone", "SGLT2 inhibitors"; not "Mitochondrial dysfunction"."""
    if class_named(name) is not None:
        return True
    words = (part.lower() for word in _WORD.findall(name) for part in word.split("-"))
    return any(word.endswith(stem) and len(word) > len(stem) + 2 for word in words for stem in _DRUG_STEMS)


def class_named(name: str) -> DrugClass | None:
    """The class ``name`` names as a class ("Statins", "pre-admission statin use", "SGLT2 inhibitors")."""
    return next((drug_class for drug_class, pattern in _NAMES if pattern.search(name)), None)


# "statins (atorvastatin, simvastatin and rosuvastatin)", "corticosteroids such as hydrocortisone": the list
# that follows a class's name, up to the bracket or the clause's end.
_LIST = r"\s*(?:\(|,?\s+(?:such as|including|e\.g\.,?|like|namely)\s+)([^().;:]{1,200})"


def stated_members(texts: Iterable[str], classes: Iterable[str], drugs: Iterable[str]) -> Mapping[str, str]:
    """Which of ``drugs`` a text lists as members of which of ``classes`` ("corticosteroids such as
    hydrocortisone" puts hydrocortisone under corticosteroids): drug (lower case) -> class, as given."""
    wanted = {drug.lower(): drug for drug in drugs}
    found: dict[str, str] = {}
    patterns = [(name, re.compile(re.escape(name) + _LIST, re.IGNORECASE)) for name in classes]
    for text in texts:
        for name, pattern in patterns:
            for match in pattern.finditer(text):
                for word in _WORD.findall(match.group(1)):
                    if word.lower() in wanted and word.lower() != name.lower():
                        found.setdefault(word.lower(), name)
    return found
