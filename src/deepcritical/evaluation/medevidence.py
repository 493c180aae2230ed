"""``deepcritical eval medevidence``: the research loop scored against Cochrane reviews' conclusions
(MedEvidence: Polzak et al. 2025).

Each question asks how an intervention compares with a comparator on one outcome ("Does A increase X compared
with B?"). It is researched over its own studies only, the ones the review pooled: ``STUDIES/<id>/studies.jsonl``
goes into a collection of its own (``medev-<id>``) in the evaluation's store (``OUT/store``), and the question
is run as every run is, over ``--sources library`` (``evaluation.loop.eval_request``), its folder under ``OUT/runs/``.
The run's ``verdict.answer`` (``higher``, ``lower``, ``no difference``, ``uncertain effect``, ``insufficient
data``) and ``verdict.certainty`` (GRADE) are compared with the review's.

Only ``MEDEVIDENCE_INPUTS`` are read before scoring; the review's answer, its certainty and the authors' notes
(``gold_*``, ``evidence_certainty``, ``source_concordance``, ...) are read by ``score`` alone, after every
prediction is made. ``predictions.jsonl`` is appended question by question, so an interrupted evaluation
resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepcritical.config import Settings
from deepcritical.errors import ConfigError
from deepcritical.evaluation.loop import (
    document_ids,
    ensure_collection,
    eval_settings,
    run_folder_name,
    run_question,
    run_summary,
    verdict_of,
)
from deepcritical.evaluation.predictions import (
    accuracy,
    add_session_time,
    confusion_rows,
    label_f1,
    macro_average,
    read_predictions,
    resume,
)
from deepcritical.evidence import documents
from deepcritical.evidence.resources import Resources
from deepcritical.jsonl import jsonl_file
from deepcritical.outputs import CERTAINTIES, REVIEW_ANSWERS, ReviewAnswer, Verdict
from deepcritical.sources.library import LibraryTool

# Fields a system under test may read; the rest of a line waits for ``score``.
MEDEVIDENCE_INPUTS = ("id", "question", "question_reduce", "intervention", "comparator", "outcome")
PUBLISHED = (
    "MedEvidence (Polzak et al. 2025), the paper's 250 questions, full texts where open: DeepSeek V3 0.624, "
    "GPT-4.1 0.604, OpenBioLLM-70B about 0.28; the majority answer 0.33"
)
# The five answers as a yes/no verdict on the "increase" question (the data's ``gold_verdict``).
VERDICT_OF_ANSWER = {
    "higher": "yes",
    "lower": "no",
    "no difference": "no",
    "uncertain effect": "maybe",
    "insufficient data": "insufficient",
}


def answer_of(verdict: Verdict) -> ReviewAnswer:
    """The run's answer: ``verdict.answer``; for a verdict without one (a model's), what its label says on the
    "increase" question the evaluation asks (yes: higher; no: no difference, the review's commoner no)."""
    if verdict.answer is not None:
        return verdict.answer
    by_label: dict[str, ReviewAnswer] = {"yes": "higher", "supported": "higher", "no": "no difference"}
    by_label |= {"refuted": "no difference", "maybe": "uncertain effect", "mixed": "uncertain effect"}
    return by_label.get(verdict.label, "insufficient data")


@dataclass(frozen=True)
class ReviewQuestion:
    id: str
    question: str
    reduce: str | None  # the same question asked the other way ("Does A reduce X ...?"), when the file has it
    studies: tuple[documents.Document, ...]

    @property
    def collection(self) -> str:
        return f"medev-{run_folder_name(self.id)}"


def read_medevidence_inputs(questions: Path, studies: Path) -> list[ReviewQuestion]:
    """The questions (``MEDEVIDENCE_INPUTS`` only) with their studies, ``studies/<id>/studies.jsonl``; a
    question without its studies file, or with an empty one, is a ConfigError naming it."""
    if not studies.is_dir():
        raise ConfigError(f"--studies {studies}: not a folder")
    read = []
    for number, record in jsonl_file(questions):
        item = {field: record[field] for field in MEDEVIDENCE_INPUTS if field in record}
        if "id" not in item or not isinstance(item.get("question"), str) or not item["question"].strip():
            raise ConfigError(f"{questions}, line {number}: expected a MedEvidence question with id and question")
        key = str(item["id"])
        path = studies / run_folder_name(key) / "studies.jsonl"
        if not path.is_file():
            raise ConfigError(f"{questions}, line {number}: question {key} has no studies file ({path})")
        found = tuple(documents.read_jsonl(path))
        if not found:
            raise ConfigError(f"{path}: no study for question {key}")
        reduce = item.get("question_reduce")
        read.append(ReviewQuestion(key, item["question"], reduce if isinstance(reduce, str) else None, found))
    return read


async def _run_question(
    text: str, collection: str, run_settings: Settings, resources: Resources, folder: Path
) -> tuple[Verdict, list[str], list[str], bool, str | None]:
    """One question run over its own collection (``run_settings``: ``eval_settings`` for it): its verdict, the
    documents (studies) it rests on, those the report cites, and whether it was degraded or failed."""
    library = LibraryTool(run_settings, embeddings=resources.embeddings, connect=resources.connection)
    await library.index()
    outcome = await run_question(text, collection, run_settings, resources, library, folder)
    _, cited = document_ids(outcome)
    verdict = verdict_of(outcome)
    by_id = {item.id: item.passage.document_id for item in outcome.evidence if item.passage is not None}
    resting = list(dict.fromkeys(by_id[i] for i in verdict.evidence_ids if i in by_id))
    return verdict, resting, cited, outcome.degraded, outcome.error


async def predict(
    questions: Sequence[ReviewQuestion],
    settings: Settings,
    out: Path,
    *,
    limit: int | None = None,
    both_ways: bool = False,
    on_progress: Callable[[int, int], None] = lambda _done, _total: None,
) -> dict[str, float]:
    """Research every question not predicted yet over its own studies (and, with ``both_ways``, its
    "reduce" phrasing too); one line per question appended to ``out/predictions.jsonl``."""
    await asyncio.to_thread(out.mkdir, parents=True, exist_ok=True)
    predictions = out / "predictions.jsonl"
    chosen = list(questions)[:limit] if limit else list(questions)
    done = resume(predictions)
    todo = [question for question in chosen if question.id not in done]
    on_progress(len(chosen) - len(todo), len(chosen))
    # One store connection and embedding service for every question: each question's collection is in the
    # evaluation's one store (``eval_settings``: its home under ``out``).
    with Resources(eval_settings(settings, out, "medevidence")) as resources:
        setup_seconds = 0.0
        started = time.perf_counter()
        with predictions.open("a", encoding="utf-8") as sink:
            for number, question in enumerate(todo, start=len(chosen) - len(todo) + 1):
                began = time.perf_counter()
                run_settings = eval_settings(settings, out, question.collection)
                setup_seconds += await ensure_collection(resources, question.collection, question.studies)
                folder = out / "runs" / run_folder_name(question.id)
                verdict, resting, cited, degraded, error = await _run_question(
                    question.question, question.collection, run_settings, resources, folder
                )
                line: dict[str, Any] = {
                    "id": question.id,
                    "answer": answer_of(verdict),
                    "label": verdict.label,
                    "certainty": verdict.certainty,
                    "confidence": verdict.confidence,
                    "verdict_by": verdict.by,
                    "evidence": resting,
                    "cited": cited,
                    "degraded": degraded,
                    "error": error,
                }
                if both_ways and question.reduce:
                    reduced, *_ = await _run_question(
                        question.reduce,
                        question.collection,
                        run_settings,
                        resources,
                        folder.with_name(folder.name + "-reduce"),
                    )
                    line |= {"answer_reduce": answer_of(reduced), "label_reduce": reduced.label}
                line["seconds"] = round(time.perf_counter() - began, 3)
                sink.write(json.dumps(line) + "\n")
                sink.flush()
                on_progress(number, len(chosen))
    return add_session_time(out / "timing.json", setup_seconds, time.perf_counter() - started - setup_seconds)


# --- Scoring: the only place that reads the reviews' answers, after every prediction is made ---


def gold_medevidence(path: Path) -> dict[str, dict[str, Any]]:
    """The review's answer (``gold_answer``) and certainty (``evidence_certainty``) by question id."""
    gold: dict[str, dict[str, Any]] = {}
    for _, record in jsonl_file(path):
        if record.get("gold_answer") in REVIEW_ANSWERS:
            gold[str(record["id"])] = {
                "answer": record["gold_answer"],
                "certainty": record.get("evidence_certainty"),
                "review": record.get("original_review_pmid"),
            }
    return gold


def score_lines(lines: Sequence[dict[str, Any]], gold: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Accuracy and macro-F1 over the five answers, the confusion matrix, the yes/no verdict's accuracy on the
    "increase" question, GRADE certainty exact and within one level (over questions the review rated), and the
    increase/reduce agreement where both were asked."""
    scored = [line for line in lines if line["id"] in gold]
    if not scored:
        return {"note": "the file has no review answers: predictions only"}
    truth = [gold[line["id"]]["answer"] for line in scored]
    predicted = [line["answer"] for line in scored]
    matrix = confusion_rows(truth, predicted, REVIEW_ANSWERS)
    f1 = {name: label_f1(truth, predicted, name) for name in REVIEW_ANSWERS}
    majority, majority_count = Counter(truth).most_common(1)[0]
    rated = [line for line in scored if gold[line["id"]]["certainty"] in CERTAINTIES]
    distance = [
        abs(CERTAINTIES.index(gold[line["id"]]["certainty"]) - CERTAINTIES.index(line["certainty"]))
        if line.get("certainty") in CERTAINTIES
        else None
        for line in rated
    ]
    verdicts = [VERDICT_OF_ANSWER[gold[line["id"]]["answer"]] == _yes_no(line["label"]) for line in scored]
    both = [line for line in scored if "answer_reduce" in line]
    summary: dict[str, Any] = {
        "scored": len(scored),
        "reviews": len({gold[line["id"]]["review"] for line in scored}),
        "accuracy": accuracy(truth, predicted),
        # How far a figure on these few questions may be from the rate on many (the published ones are on 250).
        "accuracy_95ci": _wilson(sum(t == p for t, p in zip(truth, predicted, strict=True)), len(scored)),
        "macro_f1": macro_average(f1.values()),
        "f1": {name: None if value is None else round(value, 4) for name, value in f1.items()},
        "confusion": {"labels": list(REVIEW_ANSWERS), "rows_gold_columns_predicted": matrix},
        "majority_baseline": {"answer": majority, "accuracy": round(majority_count / len(scored), 4)},
        "verdict_accuracy": round(sum(verdicts) / len(scored), 4),
        "certainty_rated": len(rated),
        "certainty_given": sum(d is not None for d in distance),
        "certainty_exact": round(sum(d == 0 for d in distance) / len(rated), 4) if rated else None,
        "certainty_within_one": round(sum(d is not None and d <= 1 for d in distance) / len(rated), 4)
        if rated
        else None,
    }
    if both:
        summary["both_ways"] = {
            "questions": len(both),
            "same_answer": round(sum(line["answer"] == line["answer_reduce"] for line in both) / len(both), 4),
            "yes_to_both": sum(line["label"] == line["label_reduce"] == "yes" for line in both),
        }
    return summary


def _wilson(successes: int, total: int) -> list[float]:
    """The Wilson score 95 % interval of a proportion (five questions right of five is not 1.0 for sure)."""
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, total, alpha=0.05, method="wilson")
    return [round(float(low), 4), round(float(high), 4)]


def _yes_no(label: str) -> str:
    return "yes" if label in ("yes", "supported") else "no" if label in ("no", "refuted") else label


def score(predictions: Path, gold_file: Path, timing: dict[str, float]) -> dict[str, Any]:
    """The figures of ``score_lines`` for the predictions in the file, with what was predicted and time."""
    lines = read_predictions(predictions)
    summary = run_summary("medevidence", lines, "answer", PUBLISHED, timing)
    return summary | score_lines(lines, gold_medevidence(gold_file))
