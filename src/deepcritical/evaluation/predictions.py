"""An evaluation's ``predictions.jsonl``, shared by every ``eval`` command: one JSON object a line, appended
item by item so an interrupted evaluation resumes after the items it finished.

A crash can cut the last line off mid-write. Appending after it would glue the next item onto the partial
line, and scoring would then fail on a line that is not JSON; so resuming first rewrites the file with its
whole lines only, and the item whose line was cut is predicted again. Beside it, the scores every ``eval``
command computes the same way (a label's F1, their mean, accuracy, the confusion matrix). No third-party import:
the Evidence Inference readers import this from the training scripts' torch environment.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from deepcritical.run.checkpoint import write_atomic


def _record(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) and "id" in value else None


def read_predictions(path: Path) -> list[dict[str, Any]]:
    """The file's whole predictions, in order (a line cut off or garbled is not one)."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [record for line in lines if line.strip() and (record := _record(line)) is not None]


def resume(path: Path) -> set[str]:
    """The ids already predicted in ``path``, after rewriting it without any line that is not a whole
    prediction (a last line cut off by a crash, or one that a crash's partial line was glued onto), so the
    next prediction appended starts on a line of its own."""
    if not path.exists():
        return set()
    text = path.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip()]
    whole = [line for line in lines if _record(line) is not None]
    if len(whole) != len(lines) or not text.endswith("\n"):
        write_atomic(path, "".join(line + "\n" for line in whole))
    return {str(record["id"]) for line in whole if (record := _record(line)) is not None}


def macro_average(scores: Iterable[float | None]) -> float:
    """The mean of the labels' F1 scores, over the labels that have one: a label that neither the gold answers
    nor the predictions give (None) has no F1, and counting it 0 would mark a perfect run on a few items down."""
    given = [score for score in scores if score is not None]
    return round(sum(given) / len(given), 4) if given else 0.0


def label_f1(gold: Sequence[str], predicted: Sequence[str], label: str) -> float | None:
    """The label's F1; None when neither the gold answers nor the predictions give it (no score to average: a
    perfect run on items without a decrease is not scored 0 for decreases)."""
    true_positive = sum(g == p == label for g, p in zip(gold, predicted, strict=True))
    predicted_count, gold_count = predicted.count(label), gold.count(label)
    if not predicted_count and not gold_count:
        return None
    if not true_positive:
        return 0.0
    precision, recall = true_positive / predicted_count, true_positive / gold_count
    return 2 * precision * recall / (precision + recall)


def accuracy(gold: Sequence[str], predicted: Sequence[str]) -> float:
    return round(sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold), 4)


def confusion_rows(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]) -> list[list[int]]:
    """How often each gold label (a row) was predicted as each label (a column), in ``labels``' order."""
    pairs = Counter(zip(gold, predicted, strict=True))
    return [[pairs[(row, column)] for column in labels] for row in labels]


def add_session_time(path: Path, setup_seconds: float, predict_seconds: float) -> dict[str, float]:
    """The seconds of every session of this evaluation so far (a resumed one adds to them), kept in ``path``."""
    spent = {"setup_seconds": 0.0, "predict_seconds": 0.0, "sessions": 0.0}
    if path.exists():
        stored = json.loads(path.read_text(encoding="utf-8"))
        spent |= {key: float(stored.get(key, 0.0)) for key in spent}
    spent = {
        "setup_seconds": round(spent["setup_seconds"] + setup_seconds, 2),
        "predict_seconds": round(spent["predict_seconds"] + predict_seconds, 2),
        "sessions": spent["sessions"] + 1,
    }
    path.write_text(json.dumps(spent) + "\n", encoding="utf-8")
    return spent
