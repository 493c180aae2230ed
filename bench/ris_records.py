"""A realistic reference-manager export for the RIS benchmark: records as Zotero and EndNote write them
(type, title, 2-8 authors, journal, year, volume, pages, DOI, PMID in the accession number or a note,
keywords, a URL) with a structured abstract of 150 to 320 words for most, none for about one in eight.
Generated, never committed: the text is drawn from a fixed vocabulary with a seeded generator."""

from __future__ import annotations

import random
from collections.abc import Iterator

DESIGNS = [
    "randomised controlled trial",
    "prospective cohort study",
    "case-control study",
    "cross-sectional survey",
    "systematic review and meta-analysis",
    "retrospective cohort study",
    "pilot trial",
]
DRUGS = [
    "metformin",
    "atorvastatin",
    "aspirin",
    "vitamin D",
    "semaglutide",
    "dapagliflozin",
    "remdesivir",
    "dexamethasone",
    "lithium",
    "ketamine",
    "apixaban",
    "empagliflozin",
    "colchicine",
    "melatonin",
]
CONDITIONS = [
    "type 2 diabetes",
    "dementia",
    "sepsis",
    "heart failure",
    "atrial fibrillation",
    "depression",
    "chronic kidney disease",
    "COVID-19",
    "osteoporosis",
    "stroke",
    "asthma",
    "obesity",
]
OUTCOMES = [
    "all-cause mortality",
    "hospital admission",
    "cognitive decline",
    "major adverse cardiac events",
    "HbA1c",
    "fracture",
    "quality of life",
    "length of stay",
    "relapse",
    "serious adverse events",
]
FILLER = [
    "patients",
    "were",
    "followed",
    "for",
    "a",
    "median",
    "of",
    "years",
    "and",
    "the",
    "analysis",
    "adjusted",
    "for",
    "age",
    "sex",
    "baseline",
    "risk",
    "comorbidity",
    "and",
    "socioeconomic",
    "status",
    "using",
    "multivariable",
    "regression",
    "with",
    "robust",
    "standard",
    "errors",
    "sensitivity",
    "analyses",
    "excluding",
    "early",
    "events",
    "gave",
    "similar",
    "estimates",
    "and",
    "no",
    "heterogeneity",
    "was",
    "found",
    "across",
    "prespecified",
    "subgroups",
    "defined",
    "by",
    "age",
    "renal",
    "function",
    "or",
    "prior",
    "treatment",
]
SURNAMES = ["Smith", "Garcia", "Chen", "Müller", "Okafor", "Nakamura", "Rossi", "Kowalski", "Silva", "Patel"]


def _sentence(rng: random.Random, words: int) -> str:
    start = rng.randrange(len(FILLER))
    picked = [FILLER[(start + k) % len(FILLER)] for k in range(words)]
    return " ".join(picked).capitalize() + "."


def abstract(rng: random.Random, number: int, drug: str, condition: str, outcome: str, design: str) -> str:
    n = rng.randint(40, 40_000)
    ratio = rng.uniform(0.5, 1.4)
    parts = [
        f"BACKGROUND: Whether {drug} changes {outcome} in adults with {condition} is uncertain.",
        f"METHODS: In this {design} we enrolled {n:,} participants (record {number}).",
        " ".join(_sentence(rng, rng.randint(12, 30)) for _ in range(rng.randint(2, 6))),
        f"RESULTS: {outcome.capitalize()} occurred in {rng.randint(1, 40)}% with {drug} and "
        f"{rng.randint(1, 40)}% with control (hazard ratio {ratio:.2f}, 95% CI {ratio * 0.8:.2f} to "
        f"{ratio * 1.2:.2f}; p<0.{rng.randint(1, 9):d}).",
        " ".join(_sentence(rng, rng.randint(12, 30)) for _ in range(rng.randint(1, 5))),
        f"CONCLUSIONS: {drug.capitalize()} {'reduced' if ratio < 1 else 'did not reduce'} {outcome}.",
    ]
    return " ".join(parts)


def records(count: int, seed: int = 27) -> Iterator[str]:
    """``count`` RIS records, each ending with its ``ER  -`` line and a blank line."""
    rng = random.Random(seed)
    for number in range(count):
        drug, condition = rng.choice(DRUGS), rng.choice(CONDITIONS)
        outcome, design = rng.choice(OUTCOMES), rng.choice(DESIGNS)
        year = rng.randint(1995, 2025)
        lines = ["TY  - JOUR", f"TI  - {drug.capitalize()} and {outcome} in {condition}: a {design} ({number})"]
        lines += [f"AU  - {rng.choice(SURNAMES)}, {chr(65 + rng.randrange(26))}." for _ in range(rng.randint(2, 8))]
        lines += [
            f"T2  - Journal of {condition.title()} Research",
            f"PY  - {year}",
            f"DA  - {year}/{rng.randint(1, 12):02d}/",
            f"VL  - {rng.randint(1, 90)}",
            f"SP  - {rng.randint(1, 900)}",
            f"DO  - 10.{rng.randint(1000, 9999)}/x.{number}",
        ]
        if number % 3 == 0:
            lines += [f"AN  - {30_000_000 + number}", "DB  - PubMed"]
        elif number % 3 == 1:
            lines.append(f"N1  - PMID: {30_000_000 + number}")
        lines += [f"KW  - {word}" for word in (drug, condition, outcome)]
        lines.append(f"UR  - https://doi.org/10.1000/x.{number}")
        if rng.random() > 0.125:
            lines.append(f"AB  - {abstract(rng, number, drug, condition, outcome, design)}")
        lines += ["ER  - ", ""]
        yield "\n".join(lines) + "\n"
