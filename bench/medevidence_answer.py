r"""The review answer and its GRADE certainty on MedEvidence, read straight from each question's studies (no
search loop: every study of the question is counted), with the choices cross-validated by review.

    python bench/medevidence_answer.py DIR [--show] [--cv]

``DIR`` holds ``questions.jsonl`` and ``questions/<id>/studies.jsonl`` (the shared ``medevidence-dev``). Each
question's studies are graded and placed (``strength_of``), read by the run's study reader and appraised
(``appraisal.answer``); the answer and the certainty are what ``review_verdict`` states. ``--show`` prints each
question's studies as read. ``--cv`` chooses ``CLEAR_SHARE``, ``VERY_LOW_IS_UNCERTAIN`` and ``SILENT_RATES_DOWN``
on the other reviews (GRADE's own thresholds, the optimal information size and the appreciable effect, are
taken from the handbook, not chosen) and scores each review's questions with the choice made without it
(leave-one-review-out): the figure to report; the in-sample figure of every choice is printed beside it.
The end-to-end figure is ``deepcritical eval medevidence``'s (its search collects the studies).
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from deepcritical.appraisal import answer as answer_module
from deepcritical.appraisal import certainty as certainty_module
from deepcritical.appraisal import review_verdict as verdict_module
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.strength import Strength, strength_of
from deepcritical.appraisal.verdict import counted_verdict
from deepcritical.evidence.documents import read_jsonl
from deepcritical.outputs import CERTAINTIES, Verdict
from deepcritical.sources.grading.grade import grade_record

GRID: dict[str, list[Any]] = {
    # 0.7 and up keep the demo's answers (the vitamin D and depression question is "maybe"); --all-shares for
    # the unconstrained choice.
    "clear_share": [0.7, 0.8],
    "silent_rates_down": [True, False],
    "very_low_is_uncertain": [False, True],
}
# Choices held fixed (none now: the placing and reading of studies is done once, so the grid runs fast).
FIXED: dict[str, Any] = {}
# (module, constant) each choice sets.
SETS = {
    "clear_share": (answer_module, "CLEAR_SHARE"),
    "very_low_is_uncertain": (verdict_module, "VERY_LOW_IS_UNCERTAIN"),
    "silent_rates_down": (certainty_module, "SILENT_RATES_DOWN"),
}


def views_of(path: Path) -> list[EvidenceView]:
    views = []
    for document in read_jsonl(path):
        text = " ".join(passage.text for passage in document.passages)
        grade = grade_record(title=document.title, text=text)
        views.append(
            EvidenceView(
                id=f"pmid:{document.id}",
                title=document.title,
                source="library",
                date=str(document.metadata.get("year", "")),
                text=text,
                design=grade.design,
                level=grade.level,
                population=grade.population,
                n=grade.sample_size,
            )
        )
    return views


@contextmanager
def chosen(values: dict[str, Any]) -> Iterator[None]:
    values = {**FIXED, **values}
    saved = {name: getattr(*SETS[name]) for name in values}
    for name, value in values.items():
        setattr(*SETS[name], value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(*SETS[name], value)


_PLACED: dict[str, Strength] = {}


def verdict_of(question: dict[str, Any], views: list[EvidenceView], reduce: bool = False) -> Verdict:
    text = question["question_reduce" if reduce else "question"]
    # Placing and reading the studies depends on no choice of the grid: done once per question (its reader keeps
    # each study's reading), the answer and its certainty again for each choice.
    if text not in _PLACED:
        _PLACED[text] = strength_of(text, views)
    return counted_verdict(text, _PLACED[text], views)


def predict(question: dict[str, Any], views: list[EvidenceView], reduce: bool = False) -> tuple[str, str | None, str]:
    verdict = verdict_of(question, views, reduce)
    return verdict.answer or "insufficient data", verdict.certainty, verdict.label


def print_certainty_misses(questions: list[dict[str, Any]], views: dict[str, list[EvidenceView]]) -> None:
    """Each rated question whose certainty is not within one level of the review's (or none): the review's
    answer and certainty, the run's, the body rated and the domains rated down (``--misses``)."""
    print("certainty misses (review answer / certainty; run answer / certainty; body; rated down):")
    for question in questions:
        gold = question["evidence_certainty"]
        if gold not in CERTAINTIES:
            continue
        verdict = verdict_of(question, views[question["id"]])
        ours = verdict.certainty
        if ours in CERTAINTIES and abs(CERTAINTIES.index(ours) - CERTAINTIES.index(gold)) <= 1:
            continue
        reasons = [reason for reason in verdict.certainty_reasons if not reason.startswith("GRADE starts")]
        started = [reason for reason in verdict.certainty_reasons if reason.startswith("GRADE starts")]
        print(
            f"  {question['id']} | {question['gold_answer']} / {gold} | {verdict.answer} / {ours} | "
            f"{'; '.join(started) or '-'} | {' | '.join(reasons) or '-'}"
        )


def scores(rows: list[dict[str, Any]]) -> dict[str, float]:
    accuracy = sum(row["answer"] == row["gold"] for row in rows) / len(rows)
    rated = [row for row in rows if row["gold_certainty"] in CERTAINTIES]
    within = [
        row["certainty"] in CERTAINTIES
        and abs(CERTAINTIES.index(row["certainty"]) - CERTAINTIES.index(row["gold_certainty"])) <= 1
        for row in rated
    ]
    return {"accuracy": round(accuracy, 4), "certainty_within_one": round(sum(within) / len(rated), 4) if rated else 0}


ANSWERS = ("higher", "lower", "no difference", "uncertain effect", "insufficient data")


def print_confusions(rows: list[dict[str, Any]]) -> None:
    """The answers' and the certainties' confusion (rows: the review; columns: the run), exact certainty and
    macro-F1 over the five answers."""
    print("answers (rows review, columns run):", ", ".join(ANSWERS))
    for gold in ANSWERS:
        print(f"  {gold:18}", [sum(r["gold"] == gold and r["answer"] == run for r in rows) for run in ANSWERS])
    f1s = []
    for answer in ANSWERS:
        hits = sum(r["gold"] == answer == r["answer"] for r in rows)
        said, true = sum(r["answer"] == answer for r in rows), sum(r["gold"] == answer for r in rows)
        f1s.append(2 * hits / (said + true) if said + true else 0.0)
    rated = [r for r in rows if r["gold_certainty"] in CERTAINTIES]
    exact = sum(r["certainty"] == r["gold_certainty"] for r in rated) / len(rated) if rated else 0.0
    print(f"macro-F1 {sum(f1s) / len(f1s):.4f}; certainty exact {exact:.4f} ({len(rated)} rated)")
    print("certainty (rows review, columns run):", ", ".join(CERTAINTIES), "none")
    for gold in CERTAINTIES:
        of_gold = [r["certainty"] for r in rated if r["gold_certainty"] == gold]
        counts = [of_gold.count(run) for run in (*CERTAINTIES, None)]
        print(f"  {gold:9}", counts)


def run_all(
    questions: list[dict[str, Any]], views: dict[str, list[EvidenceView]], values: dict[str, Any]
) -> list[dict[str, Any]]:
    rows = []
    with chosen(values):
        for question in questions:
            answer, certainty, label = predict(question, views[question["id"]])
            rows.append(
                {
                    "id": question["id"],
                    "review": question["original_review_pmid"],
                    "gold": question["gold_answer"],
                    "gold_certainty": question["evidence_certainty"],
                    "answer": answer,
                    "certainty": certainty,
                    "label": label,
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--cv", action="store_true")
    parser.add_argument("--misses", action="store_true", help="print the certainty misses with their domains")
    parser.add_argument("--all-shares", action="store_true", help="choose CLEAR_SHARE among 0.5 to 0.8")
    args = parser.parse_args()
    questions = [json.loads(line) for line in (args.folder / "questions.jsonl").read_text().splitlines() if line]
    views = {q["id"]: views_of(args.folder / "questions" / q["id"] / "studies.jsonl") for q in questions}
    default = {name: getattr(*SETS[name]) for name in GRID}
    rows = run_all(questions, views, default)
    if args.show:
        from deepcritical.appraisal.answer import appraise
        from deepcritical.appraisal.verdict import verdict_weight

        for question, row in zip(questions, rows, strict=True):
            print(
                f"\n{row['id']} gold {row['gold']} / {row['gold_certainty']}; read {row['answer']} / {row['certainty']}"
            )
            print(f"  {question['question']}")
            strength = strength_of(question["question"], views[question["id"]])
            reader = strength.reader_for(question["question"])
            print(f"  comparison {reader.comparison.written}")
            for study in appraise(strength, reader, verdict_weight):
                print(
                    f"  - {study.id} {study.design} L{study.level} n={study.participants} rand={study.randomised} "
                    f"direct={study.direct} {study.movement} w={study.weight:.2f} "
                    f"rob={study.risk.high}/{sorted(study.risk.quotes)}"
                    f"\n      {(study.sentence or '')[:200]}"
                )
            placed = set(strength.counted)
            for view in views[question["id"]]:
                if view.id not in placed:
                    print(f"  x {view.id} not counted")
    print("in sample, defaults:", scores(rows), dict(Counter(row["answer"] for row in rows)))
    print_confusions(rows)
    both = [predict(q, views[q["id"]], reduce=True) for q in questions]
    same = sum(row["answer"] == other[0] for row, other in zip(rows, both, strict=True))
    print(f"increase/reduce same answer: {same} of {len(rows)}")
    if args.misses:
        print_certainty_misses(questions, views)
    if not args.cv:
        return
    if args.all_shares:
        GRID["clear_share"] = [0.5, 0.6, 0.65, 0.7, 0.8]
    combos = [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]
    by_combo = [run_all(questions, views, combo) for combo in combos]
    reviews = sorted({q["original_review_pmid"] for q in questions})
    held_out: list[dict[str, Any]] = []
    picks = Counter()
    for review in reviews:

        def fit(index: int, review: str = review) -> float:
            train = [row for row in by_combo[index] if row["review"] != review]
            figures = scores(train)
            return figures["accuracy"] + figures["certainty_within_one"] / 2

        best = max(range(len(combos)), key=fit)
        picks[json.dumps(combos[best])] += 1
        held_out += [row for row in by_combo[best] if row["review"] == review]
    print("leave-one-review-out:", scores(held_out), f"({len(reviews)} reviews, {len(held_out)} questions)")
    print_confusions(held_out)
    for combo, rows_of in zip(combos, by_combo, strict=True):
        print("  in sample", combo, scores(rows_of))
    print("choices made:", dict(picks))


if __name__ == "__main__":
    main()
