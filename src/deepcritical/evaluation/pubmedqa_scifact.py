"""``deepcritical eval``: the research loop scored on questions whose answers are known.

- PubMedQA (``ori_pqal.json`` format): every item's ``CONTEXTS`` (the abstract without its conclusion) goes
  into one document collection; each ``QUESTION`` is researched over ``--sources library``; the verdict
  maps to yes / no / maybe.
- SciFact: the corpus goes into a collection; each claim is researched over it; the verdict maps to
  SUPPORT / REFUTE / NEI.

The answer fields (PubMedQA's ``final_decision``, ``LONG_ANSWER``, ``reasoning_*``; SciFact's ``evidence``
and ``cited_doc_ids``) are read only after every prediction is made, by ``score``: ``read_*_inputs`` keep the
fields a system may read and drop the rest, so a file without them predicts the same.

One process, one store (under ``OUT/store``, never the user's), the collection embedded once, one embedder
whose cache holds the collection's vectors; each question gets the real loop (planner, search stage, judge,
report, verdict) with its evidence in memory, run as every run is: a ``RunRequest`` through ``run_to_folder``,
its folder under ``OUT/runs/`` (report, record, events). ``predictions.jsonl`` is appended line by line, so
an interrupted evaluation resumes where it stopped.
"""

from __future__ import annotations

import ast
import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from deepcritical.config import Settings
from deepcritical.errors import ConfigError
from deepcritical.evaluation.loop import (
    document_ids,
    ensure_collection,
    eval_settings,
    read_json,
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
from deepcritical.outputs import Verdict
from deepcritical.sources.library import LibraryTool

Benchmark = Literal["pubmedqa", "scifact"]
LABELS: dict[Benchmark, tuple[str, ...]] = {"pubmedqa": ("yes", "no", "maybe"), "scifact": ("SUPPORT", "REFUTE", "NEI")}
# Fields a system under test may read; everything else in an item is left unread until scoring.
PUBMEDQA_INPUTS = ("QUESTION", "CONTEXTS", "LABELS", "MESHES", "YEAR")
SCIFACT_INPUTS = ("id", "claim")
PUBLISHED = {
    "pubmedqa": "PubMedQA test split, reasoning-required: majority 0.552, BioBERT 0.681, single human 0.780",
    "scifact": "SciFact: no published figure for this setting (the research loop over the whole corpus)",
}


@dataclass(frozen=True)
class Question:
    id: str
    text: str


def _as_list(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str) and value.strip().startswith("["):
        parsed = ast.literal_eval(value)
        return [str(v) for v in parsed] if isinstance(parsed, list) else [value]
    return [str(value)] if value else []


def read_pubmedqa_inputs(path: Path) -> tuple[list[Question], list[documents.Document]]:
    """The questions and the pool of contexts, from the allowed fields only (``PUBMEDQA_INPUTS``)."""
    data = read_json(path)
    if not isinstance(data, dict) or not data:
        raise ConfigError(f"{path}: expected PubMedQA's format, an object of items keyed by PMID")
    questions, pool = [], []
    for key, raw in data.items():
        if not isinstance(raw, dict) or "QUESTION" not in raw or "CONTEXTS" not in raw:
            raise ConfigError(f"{path}: item {key} has no QUESTION or CONTEXTS")
        item = {field: raw[field] for field in PUBMEDQA_INPUTS if field in raw}
        # A null or empty value is missing too: read as text it would research the question "None".
        if not isinstance(item["QUESTION"], str) or not item["QUESTION"].strip():
            raise ConfigError(f"{path}: item {key}: QUESTION is empty or not text")
        try:
            contexts, labels = _as_list(item["CONTEXTS"]), _as_list(item.get("LABELS", []))
            meshes = _as_list(item.get("MESHES", []))
        except (SyntaxError, ValueError) as error:  # a "[..." string that is no list literal
            raise ConfigError(f"{path}: item {key}: CONTEXTS, LABELS or MESHES is not a list ({error})") from error
        if not any(text.strip() for text in contexts):
            raise ConfigError(f"{path}: item {key}: CONTEXTS holds no text")
        labels = (labels + [""] * len(contexts))[: len(contexts)]
        body = " ".join(
            f"{label.upper()}: {text}" if label else text for label, text in zip(labels, contexts, strict=True)
        )
        questions.append(Question(str(key), str(item["QUESTION"])))
        meta = {"year": str(item.get("YEAR") or ""), "mesh": meshes}
        pool.append(documents.Document(str(key), "", [documents.PassageText(body)], meta))
    return questions, pool


def read_scifact_inputs(path: Path) -> list[Question]:
    """The claims, from ``id`` and ``claim`` only."""
    questions = []
    for number, record in jsonl_file(path):
        if "id" not in record or not str(record.get("claim", "")).strip():
            raise ConfigError(f"{path}, line {number}: expected a SciFact claim with id and claim")
        questions.append(Question(str(record["id"]), str(record["claim"])))
    return questions


def to_label(benchmark: Benchmark, verdict: Verdict) -> str:
    """The benchmark's label for a verdict: yes/supported, no/refuted, else maybe or NEI."""
    positive = verdict.label in ("yes", "supported")
    negative = verdict.label in ("no", "refuted")
    if benchmark == "pubmedqa":
        return "yes" if positive else "no" if negative else "maybe"
    return "SUPPORT" if positive else "REFUTE" if negative else "NEI"


async def predict(
    benchmark: Benchmark,
    questions: Sequence[Question],
    pool: Sequence[documents.Document],
    settings: Settings,
    out: Path,
    *,
    limit: int | None = None,
    on_progress: Callable[[int, int], None] = lambda _done, _total: None,
) -> dict[str, float]:
    """Research every question not predicted yet; append one line per item to ``out/predictions.jsonl``.
    Returns the seconds spent setting up (embedding the pool) and predicting."""
    await asyncio.to_thread(out.mkdir, parents=True, exist_ok=True)
    collection = benchmark
    settings = eval_settings(settings, out, collection)
    predictions = out / "predictions.jsonl"
    chosen = list(questions)[:limit] if limit else list(questions)
    done = resume(predictions)
    todo = [question for question in chosen if question.id not in done]
    on_progress(len(chosen) - len(todo), len(chosen))
    with Resources(settings) as resources:  # one connection and embedding service for every item
        setup_seconds = await ensure_collection(resources, collection, pool)
        library = LibraryTool(settings, embeddings=resources.embeddings, connect=resources.connection)
        loaded = time.perf_counter()
        await library.index()
        setup_seconds += time.perf_counter() - loaded
        started = time.perf_counter()
        with predictions.open("a", encoding="utf-8") as sink:
            for number, question in enumerate(todo, start=len(chosen) - len(todo) + 1):
                began = time.perf_counter()
                folder = out / "runs" / run_folder_name(question.id)
                outcome = await run_question(question.text, collection, settings, resources, library, folder)
                collected, cited = document_ids(outcome)
                verdict = verdict_of(outcome)
                line = {
                    "id": question.id,
                    "prediction": to_label(benchmark, verdict),
                    "verdict": verdict.label,
                    "confidence": verdict.confidence,
                    "verdict_by": verdict.by,
                    "collected": collected,
                    "cited": cited,
                    "degraded": outcome.degraded,
                    "error": outcome.error,
                    "seconds": round(time.perf_counter() - began, 3),
                }
                sink.write(json.dumps(line) + "\n")
                sink.flush()
                on_progress(number, len(chosen))
    return add_session_time(out / "timing.json", setup_seconds, time.perf_counter() - started)


# --- Scoring: the only place that reads the answers, after every prediction is made ---


def gold_pubmedqa(path: Path) -> tuple[dict[str, str], dict[str, set[str]]]:
    """Labels (``final_decision``) and gold evidence (each question's own abstract) by item id."""
    data = read_json(path)
    labels = {
        str(k): str(v["final_decision"]) for k, v in data.items() if isinstance(v, dict) and "final_decision" in v
    }
    return labels, {key: {key} for key in labels}


def gold_scifact(path: Path) -> tuple[dict[str, str], dict[str, set[str]]]:
    """Labels (SUPPORT / REFUTE from ``evidence``, NEI when it is empty) and gold documents by claim id."""
    labels: dict[str, str] = {}
    evidence: dict[str, set[str]] = {}
    for _, record in jsonl_file(path):
        if "evidence" not in record:
            continue
        found = record["evidence"] or {}
        kinds = {str(sentence.get("label")) for sets in found.values() for sentence in sets}
        key = str(record["id"])
        labels[key] = "NEI" if not found else "SUPPORT" if "SUPPORT" in kinds else "REFUTE"
        if found:
            evidence[key] = {str(doc) for doc in found}
    return labels, evidence


def score(benchmark: Benchmark, predictions: Path, gold_file: Path, timing: dict[str, float]) -> dict[str, Any]:
    """Accuracy, macro-F1, the confusion matrix, gold-evidence recall and citation precision (where the file
    has labels), the majority baseline, and time."""
    lines = read_predictions(predictions)
    labels, gold_docs = (gold_pubmedqa if benchmark == "pubmedqa" else gold_scifact)(gold_file)
    classes = LABELS[benchmark]
    summary = run_summary(benchmark, lines, "prediction", PUBLISHED[benchmark], timing)
    scored = [line for line in lines if line["id"] in labels]
    if not scored:
        summary["note"] = "the file has no answer fields: predictions only"
        return summary
    gold = [labels[line["id"]] for line in scored]
    predicted = [line["prediction"] for line in scored]
    matrix = confusion_rows(gold, predicted, classes)
    f1 = {name: label_f1(gold, predicted, name) for name in classes}
    majority_label, majority_count = Counter(gold).most_common(1)[0]
    with_docs = [line for line in scored if line["id"] in gold_docs]
    cited = [(doc, line["id"]) for line in with_docs for doc in line["cited"]]
    summary |= {
        "scored": len(scored),
        "accuracy": accuracy(gold, predicted),
        "macro_f1": macro_average(f1.values()),
        "f1": {name: None if value is None else round(value, 4) for name, value in f1.items()},
        "confusion": {"labels": list(classes), "rows_gold_columns_predicted": matrix},
        "majority_baseline": {"label": majority_label, "accuracy": round(majority_count / len(scored), 4)},
        "gold_evidence_recall": round(
            sum(bool(gold_docs[line["id"]] & set(line["collected"])) for line in with_docs) / len(with_docs), 4
        )
        if with_docs
        else None,
        "gold_evidence_recall_all": round(
            sum(gold_docs[line["id"]] <= set(line["collected"]) for line in with_docs) / len(with_docs), 4
        )
        if with_docs
        else None,
        "citation_precision": round(sum(doc in gold_docs[key] for doc, key in cited) / len(cited), 4)
        if cited
        else None,
        "items_with_gold_evidence": len(with_docs),
    }
    return summary


def corpus_documents(path: Path) -> list[documents.Document]:
    return list(documents.read_jsonl(path))
