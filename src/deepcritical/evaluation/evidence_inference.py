"""``deepcritical eval evidence-inference``: the result reader scored against doctors' readings of
randomised trials (Evidence Inference 2.0: DeYoung et al. 2020).

Each prompt names a trial (``PMCID``), an outcome, an intervention and a comparator. The reader gets the
article's text (its full text when ``DIR/fulltext/PMC….txt`` is there, else its abstract), finds the
sentence(s) stating the result for that comparison and reads it. ``predictions.jsonl`` is appended prompt
by prompt (an interrupted evaluation resumes); the doctors' labels (``--annotations``) are read only by
``score``, after every prediction is made. Before predicting, ``check_annotations`` only asks whether the file
can score anything (one of the three labels for a prompt to predict) and refuses it when it cannot.
"""

from __future__ import annotations

import csv
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepcritical.errors import ConfigError
from deepcritical.evaluation.predictions import accuracy, label_f1, macro_average, read_predictions, resume
from deepcritical.reading.comparison import Comparison
from deepcritical.reading.results import LABEL_TEXT, ResultReader, ResultReading, labelled_by
from deepcritical.reading.units import TextUnit, split_units
from deepcritical.text import collapse_whitespace, shorten

PROMPT_COLUMNS = ("PromptID", "PMCID", "Outcome", "Intervention", "Comparator")
PMCID = re.compile(r"(?:PMC)?[0-9]{1,10}", re.IGNORECASE)
LABELS = tuple(LABEL_TEXT.values())  # as the doctors wrote them
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
        # "utf-8-sig": a spreadsheet's "CSV UTF-8" opens with a byte-order mark, which would hide the first column.
        with path.open(encoding="utf-8-sig", newline="") as handle:
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
    """The prompts, one per ``PromptID`` (the first row wins). A row that lacks any of the five values (a short
    row, an empty cell) is a ConfigError naming the file, its line and what is missing; a row with none is
    skipped (spreadsheets write them)."""
    prompts: dict[str, Prompt] = {}
    with _table(path, PROMPT_COLUMNS) as reader:
        for row in reader:
            # A short row gives None for the columns it lacks: read as empty, then refused below.
            values = {column: (row.get(column) or "").strip() for column in PROMPT_COLUMNS}
            missing = [column for column, value in values.items() if not value]
            if len(missing) == len(PROMPT_COLUMNS):
                continue
            if missing:
                raise ConfigError(
                    f"{path}, line {reader.line_num}: no {', '.join(missing)} (each prompt needs "
                    f"{', '.join(PROMPT_COLUMNS)})"
                )
            if not PMCID.fullmatch(values["PMCID"]):  # it names a file: a 5,000-digit one cannot be looked for
                raise ConfigError(
                    f"{path}, line {reader.line_num}: PMCID {shorten(values['PMCID'], 21)!r} is not a PMCID "
                    "(PMC and up to 10 digits)"
                )
            if values["PromptID"] not in prompts:
                prompts[values["PromptID"]] = Prompt(
                    values["PromptID"],
                    pmc_number(values["PMCID"]),
                    values["Outcome"],
                    values["Intervention"],
                    values["Comparator"],
                )
    return list(prompts.values())


def pmc_number(pmcid: str) -> str:
    """A PMCID as the articles' file names hold it: "PMC59610" (as PubMed Central writes it) and "59610" (as
    Evidence Inference does) are both ``PMC59610.txt``."""
    return pmcid[3:] if pmcid[:3].upper() == "PMC" else pmcid


ANNOTATION_COLUMNS = ("PromptID", "Label", "Evidence Start", "Evidence End")


def _label(row: dict[str, str]) -> str | None:
    """The row's label as the doctors wrote it (any letter case), or None when it is not one of the three."""
    label = collapse_whitespace(row.get("Label") or "").lower()
    return label if label in LABELS else None


def check_annotations(path: Path, prompt_ids: Collection[str]) -> None:
    """A ConfigError when ``path`` cannot score any of the prompts ``prompt_ids``: unreadable, without the
    columns scoring reads, or with no row giving one of the three labels to one of them. Each label is read
    for its form only (one of the three or not) and the answer is only this error: what is predicted cannot
    depend on it; the labels' values reach ``score`` alone, after every prediction is made."""
    rows, usable, unusable, first_unusable = 0, 0, 0, ""
    with _table(path, ANNOTATION_COLUMNS) as reader:
        for row in reader:
            rows += 1
            if _label(row) is None:
                unusable += 1
                first_unusable = first_unusable or (row.get("Label") or "").strip()[:40]
            elif (row.get("PromptID") or "").strip() in prompt_ids:
                usable += 1
    if usable:
        return
    if not rows:
        raise ConfigError(f"{path}: no annotation rows; nothing to score")
    if unusable == rows:
        shown = f" (the first: {first_unusable!r})" if first_unusable else ""
        labels = ", ".join(repr(label) for label in LABELS)
        raise ConfigError(f"{path}: no row's Label is one of {labels}{shown}; nothing to score")
    raise ConfigError(
        f"{path}: none of its labelled PromptIDs is among the {len(prompt_ids)} prompt(s) to predict; nothing to score"
    )


def read_labels(path: Path) -> tuple[dict[str, str], int]:
    """Each prompt's label: what most of its doctors answered (ties go to the first answer given); and how
    many rows gave none of the three labels (skipped)."""
    votes: dict[str, Counter[str]] = {}
    skipped = 0
    for row in _rows(path, ("PromptID", "Label")):
        label = _label(row)
        if label is None:
            skipped += 1
        else:
            votes.setdefault((row.get("PromptID") or "").strip(), Counter())[label] += 1
    return {prompt: counts.most_common(1)[0][0] for prompt, counts in votes.items()}, skipped


def read_evidence_spans(path: Path) -> tuple[dict[str, list[tuple[int, int]]], int]:
    """Each prompt's doctors' evidence, as offsets into the article's full text; and how many rows' offsets
    were not a span of whole numbers (skipped: only the evidence measure reads them)."""
    spans: dict[str, list[tuple[int, int]]] = {}
    skipped = 0
    for row in _rows(path, ("PromptID", "Evidence Start", "Evidence End")):
        try:
            start, end = int(row["Evidence Start"] or ""), int(row["Evidence End"] or "")
        except ValueError:
            skipped += 1
            continue
        if 0 <= start < end:
            spans.setdefault((row.get("PromptID") or "").strip(), []).append((start, end))
        else:
            skipped += 1
    return spans, skipped


def has_article(articles: Path, pmcid: str) -> bool:
    return any((articles / kind / f"PMC{pmcid}.txt").is_file() for kind in ("fulltext", "abstracts"))


def article_units(articles: Path, pmcid: str) -> tuple[str, list[TextUnit]]:
    """``("fulltext" | "abstract" | "missing", units)`` of one article, its full text first."""
    for kind in ("fulltext", "abstracts"):
        path = articles / kind / f"PMC{pmcid}.txt"
        if path.is_file():
            return kind.rstrip("s"), split_units(path.read_text(encoding="utf-8", errors="replace"))
    return "missing", []


def predicted(reader: ResultReader, units: Sequence[TextUnit], comparison: Comparison) -> tuple[ResultReading, str]:
    """The reader's reading of ``units`` and the prompt's label. A prompt always gets one of the three labels:
    when no unit states the result, the best unit's reading still stands (scored as such; the reading says
    none was found)."""
    reading = reader.read(units, comparison)
    probabilities = reading.probabilities or (
        reader.classify(reader.rank(units, comparison)[0][1].text, comparison) if units else {}
    )
    return reading, max(probabilities, key=probabilities.__getitem__) if probabilities else "no_difference"


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
                comparison = labelled_by(Comparison.of(prompt.intervention, prompt.comparator, prompt.outcome), units)
                reading, label = predicted(reader, units, comparison)
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
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return {
            pmc_number(row["PMCID"].strip()): row["split"]
            for row in csv.DictReader(handle)
            if row.get("PMCID") and row.get("split")
        }


def score(
    predictions: Path,
    annotations: Path | None,
    ids: Collection[str] | None = None,
    reader_name: str = "linear",
) -> dict[str, Any]:
    """Accuracy, macro-F1, per-label F1, the confusion matrix and how often the doctors' evidence was among
    the sentences relied on, over the prompts ``ids`` (all predicted, when None); predictions only when no
    annotations are given. ``seconds`` is the reading time of those prompts, whichever session read them: a
    folder reused for another split or limit holds other prompts, whose time is not theirs."""
    lines = read_predictions(predictions)
    if ids is not None:
        lines = [line for line in lines if line["id"] in ids]
    seconds = sum(float(line.get("seconds", 0.0)) for line in lines)
    summary: dict[str, Any] = {
        "benchmark": "evidence-inference",
        "reader": reader_name,
        "predicted": len(lines),
        "seconds": round(seconds, 2),
        "seconds_per_prompt": round(seconds / max(1, len(lines)), 4),
        "articles_missing": sum(1 for line in lines if line.get("article") == "missing"),
        "published": PUBLISHED,
    }
    if annotations is None:
        summary["note"] = "no --annotations: predictions only"
        return summary
    (labels, labels_skipped), (spans, offsets_skipped) = read_labels(annotations), read_evidence_spans(annotations)
    scored = [line for line in lines if line["id"] in labels]
    # Rows the annotations could not use are counted, never silently dropped.
    summary |= {"scored": len(scored), "labels_skipped": labels_skipped, "evidence_offsets_skipped": offsets_skipped}
    if not scored:
        # No score is 0.0: a summary of zeros would read as a reader that is always wrong.
        summary |= {"accuracy": None, "macro_f1": None, "note": "no predicted prompt has a usable label: no score"}
        return summary
    gold = [labels[line["id"]] for line in scored]
    predicted = [line["prediction"] for line in scored]
    per_label = {label: _rounded(label_f1(gold, predicted, label)) for label in LABELS}
    with_spans = [line for line in scored if line["id"] in spans and line.get("article") == "fulltext"]
    found = sum(_overlaps(line["evidence"], spans[line["id"]]) for line in with_spans)
    found_first = sum(_overlaps(line["evidence"][:1], spans[line["id"]]) for line in with_spans)
    majority = Counter(gold).most_common(1)[0][0]
    summary |= {
        "accuracy": accuracy(gold, predicted),
        # Over the labels the doctors or the reader gave (all three on Evidence Inference's own prompts).
        "macro_f1": macro_average(per_label.values()),
        "per_label_f1": per_label,
        # Over the prompts whose full text was read and whose doctors' offsets are usable; None when there is none.
        "evidence_found": round(found / len(with_spans), 4) if with_spans else None,
        "evidence_found_first": round(found_first / len(with_spans), 4) if with_spans else None,
        "confusion": {
            g: {p: sum(1 for a, b in zip(gold, predicted, strict=True) if (a, b) == (g, p)) for p in LABELS}
            for g in LABELS
        },
        "majority_macro_f1": macro_average(label_f1(gold, [majority] * len(gold), label) for label in LABELS),
    }
    return summary


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _overlaps(evidence: Sequence[dict[str, Any]], spans: Sequence[tuple[int, int]]) -> bool:
    return any(unit["start"] < end and start < unit["end"] for unit in evidence for start, end in spans)
