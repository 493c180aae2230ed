"""How the question's frame (``deepcritical.reading.frame``) reads real questions, and how fast.

    PYTHONPATH=src python bench/frame.py [--data ../shared/data]

Reads PubMedQA's 500 dev questions (article titles as questions) and SciFact's 809 train claims (statements),
and prints, for each set: the share of questions with an intervention (or an open one), a population, a
comparator and outcomes; the share whose every entity is a piece of the question as written; whether every
word of the intervention and population survives into the code-built queries (fallback and PubMed forms);
and questions framed per second. Nothing here is tuned to: it is the same reading the tests check."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from deepcritical.reading.frame import QuestionFrame, frame_question, terms_of
from deepcritical.sources.query import to_pubmed_query
from deepcritical.stages.search import fallback_queries
from deepcritical.stages.state import RunState

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _words(text: str) -> set[str]:
    """Words as a search engine splits them: letters and digits, case folded (apostrophes and dashes split)."""
    return {word.lower() for word in re.findall(r"[^\W_]+", text)}


def _kept(frame: QuestionFrame, question: str) -> bool:
    """Every content word of the intervention and population stands in every code-built query, in both forms."""
    queries = fallback_queries(RunState(question=question))
    searched = [form for query in queries for form in (query, to_pubmed_query(query))]
    needed = _words(" ".join(terms_of(frame.required)))
    return all(needed <= _words(query) for query in searched)


def report(name: str, questions: list[str]) -> None:
    started = time.perf_counter()
    frames = [frame_question(question) for question in questions]
    seconds = time.perf_counter() - started
    total = len(frames)

    def share(count: int) -> str:
        return f"{count / total:.1%}"

    print(f"{name}: {total} questions, {total / seconds:,.0f} framed/s")
    print(f"  intervention named    {share(sum(f.intervention is not None for f in frames))}")
    print(f"  open intervention     {share(sum(f.open_intervention for f in frames))}")
    print(f"  population            {share(sum(f.population is not None for f in frames))}")
    print(f"  comparator            {share(sum(f.comparator is not None for f in frames))}")
    print(f"  outcomes              {share(sum(bool(f.outcomes) for f in frames))}")
    whole = sum(all(e in q for e in f.entities) for q, f in zip(questions, frames, strict=True))
    print(f"  entities as written   {share(whole)}")
    kept = sum(_kept(f, q) for q, f in zip(questions, frames, strict=True))
    print(f"  entities kept in every code-built query (and its PubMed form) {share(kept)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    pubmedqa = args.data / "pubmedqa" / "pqal_dev.json"
    scifact = args.data / "scifact-claims" / "claims_train.jsonl"
    if not pubmedqa.is_file() or not scifact.is_file():
        print(
            f"error: the shared data is not at {args.data} (pubmedqa/pqal_dev.json, scifact-claims/)", file=sys.stderr
        )
        return 2
    items = json.loads(pubmedqa.read_text(encoding="utf-8"))
    report("PubMedQA dev questions", [item["QUESTION"] for item in items.values()])
    lines = scifact.read_text(encoding="utf-8").splitlines()
    report("SciFact train claims", [json.loads(line)["claim"] for line in lines if line.strip()])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
