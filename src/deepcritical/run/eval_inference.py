"""``deepcritical eval evidence-inference``: the result reader scored against doctors' readings of
randomised trials (Evidence Inference 2.0: DeYoung et al. 2020).

Each prompt names a trial (``PMCID``), an outcome, an intervention and a comparator. The reader gets the
article's text (its full text when ``DIR/fulltext/PMC….txt`` is there, else its abstract), finds the
sentence(s) stating the result for that comparison and reads it. ``predictions.jsonl`` is appended prompt
by prompt (an interrupted evaluation resumes); the doctors' labels (``--annotations``) are read only by
``score``, after every prediction is made.
"""

from __future__ import annotations

import csv
import json
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepcritical.errors import ConfigError
from deepcritical.reading.comparison import Comparison
from deepcritical.reading.results import LABEL_TEXT, ResultReader
from deepcritical.reading.units import TextUnit, split_units
from deepcritical.run.predictions import read_predictions, resume

PROMPT_COLUMNS = ("PromptID", "PMCID", "Outcome", "Intervention", "Comparator")
LABELS = tuple(LABEL_TEXT.values())  # as the doctors wrote them
_FROM_TEXT = {text: label for label, text in LABEL_TEXT.items()}
PUBLISHED = "Evidence Inference 2.0, full articles: BioMed RoBERTa pipeline about 0.78 macro-F1; majority label 0.19"


@dataclass(frozen=True)
class Prompt:
    id: str
    pmcid: str
    outcome: str
    intervention: str
    comparator: str


@contextmanager
def _table(path: Path, required: Sequence[str]) -> Iterator[csv.DictReader[str]]:
    """The CSV at ``path`` with its header read and checked; a ConfigError for a file that is missing,
    unreadable or lacks a ``required`` column (also while its rows are read)."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            missing = [column for column in required if column not in (reader.fieldnames or [])]
            if missing:
                raise ConfigError(
                    f"{path}: not a CSV with the columns {', '.join(required)} (missing {', '.join(missing)})"
                )
            yield reader
    except OSError as error:
        raise ConfigError(f"{path}: cannot read it ({error.strerror or error})") from error
    except (csv.Error, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: not a readable CSV ({error})") from error


def _rows(path: Path, required: Sequence[str]) -> Iterator[dict[str, str]]:
    with _table(path, required) as reader:
        yield from reader


def read_prompts(path: Path) -> list[Prompt]:
    """The prompts, one per ``PromptID`` (the first row wins)."""
    prompts: dict[str, Prompt] = {}
    for row in _rows(path, PROMPT_COLUMNS):
        prompt_id = row["PromptID"].strip()
        if prompt_id and prompt_id not in prompts:
            prompts[prompt_id] = Prompt(
                prompt_id, row["PMCID"].strip(), row["Outcome"], row["Intervention"], row["Comparator"]
            )
    return list(prompts.values())


ANNOTATION_COLUMNS = ("PromptID", "Label", "Evidence Start", "Evidence End")


def check_annotations(path: Path) -> None:
    """A ConfigError when ``path`` cannot be the doctors' annotations: unreadable, or without the columns
    scoring reads. Only the header is read: the labels stay unread until every prediction is made."""
    with _table(path, ANNOTATION_COLUMNS):
        pass


def read_labels(path: Path) -> dict[str, str]:
    """Each prompt's label: what most of its doctors answered (ties go to the first answer given)."""
    votes: dict[str, Counter[str]] = {}
    for row in _rows(path, ("PromptID", "Label")):
        label = row["Label"].strip()
        if label in LABELS:
            votes.setdefault(row["PromptID"].strip(), Counter())[label] += 1
    return {prompt: counts.most_common(1)[0][0] for prompt, counts in votes.items()}


def read_evidence_spans(path: Path) -> dict[str, list[tuple[int, int]]]:
    """Each prompt's doctors' evidence, as offsets into the article's full text."""
    spans: dict[str, list[tuple[int, int]]] = {}
    for row in _rows(path, ("PromptID", "Evidence Start", "Evidence End")):
        try:
            start, end = int(row["Evidence Start"]), int(row["Evidence End"])
        except ValueError:
            continue
        if 0 <= start < end:
            spans.setdefault(row["PromptID"].strip(), []).append((start, end))
    return spans


def has_article(articles: Path, pmcid: str) -> bool:
    return any((articles / kind / f"PMC{pmcid}.txt").is_file() for kind in ("fulltext", "abstracts"))


def article_units(articles: Path, pmcid: str) -> tuple[str, list[TextUnit]]:
    """``("fulltext" | "abstract" | "missing", units)`` of one article, its full text first."""
    for kind in ("fulltext", "abstracts"):
        path = articles / kind / f"PMC{pmcid}.txt"
        if path.is_file():
            return kind.rstrip("s"), split_units(path.read_text(encoding="utf-8", errors="replace"))
    return "missing", []


def predict(
    prompts: Sequence[Prompt],
    articles: Path,
    out: Path,
    *,
    limit: int | None = None,
    reader: ResultReader | None = None,
    reader_name: str = "linear",
    on_progress: Callable[[int, int], None] = lambda _done, _total: None,
) -> float:
    """Read every prompt not predicted yet; one line per prompt in ``out/predictions.jsonl``, naming the reader
    (``reader_name``): a folder holding another reader's predictions is refused, never mixed. Returns the
    seconds spent."""
    reader = reader or ResultReader.load()
    out.mkdir(parents=True, exist_ok=True)
    predictions = out / "predictions.jsonl"
    chosen = list(prompts[:limit] if limit else prompts)
    done = resume(predictions)
    check_reader(out, reader_name)
    cache: dict[str, tuple[str, list[TextUnit]]] = {}
    started = time.perf_counter()
    with predictions.open("a", encoding="utf-8") as sink:
        for count, prompt in enumerate(chosen, 1):
            if prompt.id not in done:
                began = time.perf_counter()
                if prompt.pmcid not in cache:
                    cache.clear()  # prompts come grouped by article: keep one article's units at a time
                    cache[prompt.pmcid] = article_units(articles, prompt.pmcid)
                kind, units = cache[prompt.pmcid]
                comparison = Comparison.of(prompt.intervention, prompt.comparator, prompt.outcome)
                reading = reader.read(units, comparison)
                # A prompt always gets one of the three labels: when no unit states the result, the best
                # unit's reading still stands (scored as such), and ``found`` says so.
                probabilities = reading.probabilities or (
                    reader.classify(reader.rank(units, comparison)[0][1].text, comparison) if units else {}
                )
                label = max(probabilities, key=probabilities.__getitem__) if probabilities else "no_difference"
                line = {
                    "id": prompt.id,
                    "prediction": LABEL_TEXT[label],
                    "evidence": [
                        {"text": unit.text, "start": unit.start, "end": unit.end, "section": unit.section}
                        for unit in reading.evidence
                    ],
                    "found": reading.label is not None,
                    "article": kind,
                    "seconds": round(time.perf_counter() - began, 4),
                    "reader": reader_name,
                }
                sink.write(json.dumps(line) + "\n")
                sink.flush()
            on_progress(count, len(chosen))
    return time.perf_counter() - started


def _f1(gold: Sequence[str], predicted: Sequence[str], label: str) -> float:
    true_positive = sum(g == p == label for g, p in zip(gold, predicted, strict=True))
    predicted_count, gold_count = predicted.count(label), gold.count(label)
    if not true_positive:
        return 0.0
    precision, recall = true_positive / predicted_count, true_positive / gold_count
    return 2 * precision * recall / (precision + recall)


def check_reader(out: Path, reader_name: str) -> None:
    """A ConfigError when ``out`` holds another reader's predictions: resuming there would mix two readers."""
    others = readers_of(out / "predictions.jsonl") - {reader_name}
    if others:
        raise ConfigError(
            f"{out}: holds predictions of the {', '.join(sorted(others))} reader; give another --out, or the same "
            "--reader to resume"
        )


def readers_of(predictions: Path) -> set[str]:
    """The readers whose predictions the file holds (lines from before readers were named: the linear one)."""
    return {str(record.get("reader", "linear")) for record in read_predictions(predictions)}


def split_of(articles: Path) -> dict[str, str]:
    """The data's own split of each article (``splits.csv`` beside the articles: PMCID, split), when given."""
    path = articles / "splits.csv"
    if not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["PMCID"]: row["split"] for row in csv.DictReader(handle) if row.get("PMCID") and row.get("split")}


def score(
    predictions: Path,
    annotations: Path | None,
    seconds: float,
    ids: Collection[str] | None = None,
    reader_name: str = "linear",
) -> dict[str, Any]:
    """Accuracy, macro-F1, per-label F1, the confusion matrix and how often the doctors' evidence was among
    the sentences relied on, over the prompts ``ids`` (all predicted, when None); predictions only when no
    annotations are given."""
    lines = read_predictions(predictions)
    if ids is not None:
        lines = [line for line in lines if line["id"] in ids]
    summary: dict[str, Any] = {
        "benchmark": "evidence-inference",
        "reader": reader_name,
        "predicted": len(lines),
        "seconds": round(seconds, 2),
        "seconds_per_prompt": round(sum(line.get("seconds", 0.0) for line in lines) / max(1, len(lines)), 4),
        "articles_missing": sum(1 for line in lines if line.get("article") == "missing"),
        "published": PUBLISHED,
    }
    if annotations is None:
        summary["note"] = "no --annotations: predictions only"
        return summary
    labels, spans = read_labels(annotations), read_evidence_spans(annotations)
    scored = [line for line in lines if line["id"] in labels]
    gold = [labels[line["id"]] for line in scored]
    predicted = [line["prediction"] for line in scored]
    per_label = {label: round(_f1(gold, predicted, label), 4) for label in LABELS}
    with_spans = [line for line in scored if line["id"] in spans and line.get("article") == "fulltext"]
    found = sum(_overlaps(line["evidence"], spans[line["id"]]) for line in with_spans)
    found_first = sum(_overlaps(line["evidence"][:1], spans[line["id"]]) for line in with_spans)
    majority = Counter(gold).most_common(1)[0][0] if gold else None
    summary |= {
        "scored": len(scored),
        "accuracy": round(sum(g == p for g, p in zip(gold, predicted, strict=True)) / max(1, len(scored)), 4),
        "macro_f1": round(sum(per_label.values()) / len(LABELS), 4),
        "per_label_f1": per_label,
        "evidence_found": round(found / max(1, len(with_spans)), 4),
        "evidence_found_first": round(found_first / max(1, len(with_spans)), 4),
        "confusion": {
            g: {p: sum(1 for a, b in zip(gold, predicted, strict=True) if (a, b) == (g, p)) for p in LABELS}
            for g in LABELS
        },
        "majority_macro_f1": round(sum(_f1(gold, [majority] * len(gold), label) for label in LABELS) / len(LABELS), 4)
        if majority
        else None,
    }
    return summary


def _overlaps(evidence: Sequence[dict[str, Any]], spans: Sequence[tuple[int, int]]) -> bool:
    return any(unit["start"] < end and start < unit["end"] for unit in evidence for start, end in spans)
