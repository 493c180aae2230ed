"""What the stance model's coverage gate (``appraisal.stance.MIN_COVERAGE``: an item is read only when it names more
than a third of the question's key terms) keeps and turns away, at it and at the values around it.

Data: PubMedQA PQA-L (MIT licence), the 500 labelled items outside its test split
(``../shared/data/pubmedqa/pqal_dev.json``). Each question's own abstract answers it: a gate that turns it away
turns away the study a run most needs. Every other item's abstract is about another question: a gate that lets
it in has the stance model read a study of something else. Both are counted per threshold, the coverage being
``stance.coverage`` (the share of the question's key terms the text names, in any form of the word).

    PYTHONPATH=src python bench/stance_coverage_gate.py [--data FILE] [--others 20]

Prints, per threshold, the questions whose own abstract is turned away and the share of other abstracts let in."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from deepcritical.appraisal.passages import key_terms
from deepcritical.appraisal.stance import MIN_COVERAGE, coverage

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT / ".." / "shared" / "data" / "pubmedqa" / "pqal_dev.json"
THRESHOLDS = (0.2, 0.25, MIN_COVERAGE, 0.4, 0.5, 0.6, 0.67)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--others", type=int, default=20, help="other items' abstracts tried against each question")
    args = parser.parse_args()
    if not args.data.is_file():
        sys.exit(f"{args.data}: no such file (the PubMedQA data is in ../shared/data; see its README)")
    items = list(json.loads(args.data.read_text(encoding="utf-8")).values())
    questions = [" ".join(str(item["QUESTION"]).split()) for item in items]
    abstracts = [" ".join(item["CONTEXTS"]) for item in items]
    started = time.perf_counter()
    own = [coverage(question, abstract) for question, abstract in zip(questions, abstracts, strict=True)]
    others = [
        coverage(question, abstracts[(index + step) % len(items)])
        for index, question in enumerate(questions)
        for step in range(1, args.others + 1)
    ]
    seconds = time.perf_counter() - started
    terms = sorted(len(key_terms(question)) for question in questions)
    print(f"{len(items)} questions, key terms per question: median {terms[len(terms) // 2]}, {terms[0]} to {terms[-1]}")
    print(f"{len(others)} (question, other abstract) pairs; {seconds:.1f} s in all")
    print(f"{'read when the share is at least':>32} | own abstract turned away | other abstracts let in")
    for threshold in THRESHOLDS:
        turned_away = sum(share < threshold for share in own)
        let_in = sum(share >= threshold for share in others) / len(others)
        shown = f"{threshold:g}" + (" (MIN_COVERAGE)" if threshold == MIN_COVERAGE else "")
        print(f"{shown:>32} | {turned_away:>4} of {len(own)} ({turned_away / len(own):5.1%}) | {let_in:6.2%}")


if __name__ == "__main__":
    main()
