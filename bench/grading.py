"""Agreement of the text-only grader with PubMed's publication types, over the real records in
../shared/data/ncbi.

    python bench/grading.py [path/to/shared/data]

Every efetch record the PubMed parser turns into evidence (it has a title and an abstract) is graded
twice: the label is the design its ``PublicationType`` list names (``unknown`` when the list names none,
e.g. only "Journal Article"); the prediction is the grader with publication types and MeSH hidden, from
the title and abstract alone (what a record not yet indexed gets). Prints what set each design in the full
grader (publication types, MeSH, text, or nothing), the confusion matrix (rows:
label, columns: prediction), recall and precision per design, agreement over the labelled records, and,
in the same way, the population read from the text against the one MeSH check tags give.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from deepcritical.errors import SearchError
from deepcritical.models import Evidence
from deepcritical.sources.grading import design_from_publication_types, grade_record, population_from_mesh
from deepcritical.sources.ncbi_parse import parse_efetch

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
UNKNOWN = "unknown"
SUBTYPES = frozenset({"cohort", "case_control", "cross_sectional"})


def records(ncbi: Path) -> list[Evidence]:
    found: dict[str, Evidence] = {}
    for path in sorted(ncbi.glob("efetch_*/*.xml")):
        try:
            batch = parse_efetch(path.read_text(encoding="utf-8"))
        except SearchError as error:
            print(f"  {path.relative_to(ncbi)}: {error}", file=sys.stderr)
            continue
        for item in batch.evidence:
            found.setdefault(item.id, item)  # the same PMID can sit in two files
    return list(found.values())


def matrix(pairs: Sequence[tuple[str, str]], title: str, what: str) -> None:
    labels = sorted({label for label, _ in pairs} | {guess for _, guess in pairs}, key=lambda x: (x == UNKNOWN, x))
    counts = Counter(pairs)
    width = max(len(label) for label in labels) + 2
    short = {label: label[:8] for label in labels}
    print(f"\n{title}\n(rows: label, columns: text-only prediction)")
    print(" " * width + " ".join(f"{short[label]:>8}" for label in labels) + "     n")
    for label in labels:
        row = [counts[(label, guess)] for guess in labels]
        print(f"{label:<{width}}" + " ".join(f"{n:>8}" for n in row) + f"{sum(row):>6}")
    print(f"\n{what:<{width}}{'recall':>10}{'precision':>11}")
    for label in labels:
        true = counts[(label, label)]
        as_label = sum(n for (_, guess), n in counts.items() if guess == label)
        actual = sum(n for (truth, _), n in counts.items() if truth == label)
        recall = f"{true}/{actual}" if actual else "-"
        precision = f"{true}/{as_label}" if as_label else "-"
        print(f"{label:<{width}}{recall:>10}{precision:>11}")
    labelled = [(label, guess) for label, guess in pairs if label != UNKNOWN]
    agree = sum(label == guess for label, guess in labelled)
    if labelled:
        print(f"agreement over labelled records: {agree}/{len(labelled)} = {agree / len(labelled):.1%}")
        # PubMed's "Observational Study" names the family; a cohort, case-control or cross-sectional reading
        # of the text is the same answer, more precisely.
        family = sum(label == guess or (label == "observational" and guess in SUBTYPES) for label, guess in labelled)
        if family != agree:
            share = f"{family}/{len(labelled)} = {family / len(labelled):.1%}"
            print(f"  counting observational subtypes as observational: {share}")
    unlabelled = [guess for label, guess in pairs if label == UNKNOWN]
    named = sum(guess != UNKNOWN for guess in unlabelled)
    print(f"records without a label: {len(unlabelled)}, of which the text names a {what} for {named}")


def main(data: Path) -> int:
    ncbi = data / "ncbi"
    items = records(ncbi)
    if not items:
        print(f"no NCBI data under {ncbi}", file=sys.stderr)
        return 1
    designs: list[tuple[str, str]] = []
    populations: list[tuple[str, str]] = []
    for item in items:
        citation = item.citation
        label = design_from_publication_types(citation.publication_types) or UNKNOWN
        text_only = grade_record(title=citation.title, text=item.content)
        designs.append((label, text_only.design))
        if citation.mesh_headings:
            populations.append((population_from_mesh(citation.mesh_headings), text_only.population))
    print(f"records graded: {len(items)} (with MeSH headings: {len(populations)})")
    bases = Counter(item.grade.basis or "ungraded" for item in items)
    print("full grader, what set the design: " + ", ".join(f"{basis} {n}" for basis, n in bases.most_common()))
    print(
        f"retracted: {sum(item.retracted for item in items)}, expression of concern: "
        f"{sum(item.expression_of_concern for item in items)}"
    )
    matrix(designs, "Design: PublicationType label vs title and abstract only", "design")
    matrix(populations, "Population: MeSH check tags vs title and abstract only", "population")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DATA))
