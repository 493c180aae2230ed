"""``deepcritical batch FILE``: many questions, a folder each, ``--jobs`` at a time, and ``summary.csv``.

FILE is one question per line (blank lines and ``#`` comments skipped), or, by its extension, a CSV
(``.csv``) or JSON Lines (``.jsonl``) file with a ``question`` column. Question N of FILE is written to
``OUT/NNN-words-of-the-question``; so a rerun finds its folders again: a question whose run succeeded is
skipped, one whose run was killed or interrupted (its ``checkpoint.json``) is resumed, and one that failed
runs again. ``summary.csv`` is rewritten as each question ends, so a killed batch still has one.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepcritical.cli.common import inert
from deepcritical.config import Settings
from deepcritical.errors import ConfigError, DeepCriticalError
from deepcritical.jsonl import json_objects
from deepcritical.questions import checked_question
from deepcritical.run.checkpoint import has_checkpoint, write_atomic
from deepcritical.run.request import RunRequest
from deepcritical.text import one_line

SUMMARY_FILE = "summary.csv"
SUMMARY_COLUMNS = (
    "question", "verdict", "confidence", "answer", "certainty", "items", "exit_status", "folder", "error"
)  # fmt: skip
EXIT_OK, EXIT_FAILED, EXIT_DEGRADED = 0, 1, 3
SLUG_WORDS = 6
SLUG_CHARS = 48


def read_questions(path: Path) -> list[str]:
    """The questions of FILE, in order; a ConfigError naming the file and line for anything unusable."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as error:
        raise ConfigError(f"FILE {path}: no such file") from error
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"FILE {path}: cannot be read ({error})") from error
    suffix = path.suffix.lower()
    if suffix == ".csv":
        rows = _csv_questions(path, text)
    elif suffix == ".jsonl":
        rows = _jsonl_questions(path, text)
    else:
        rows = [
            (number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip() and not _comment(line)
        ]
    questions = [_checked(path, number, question) for number, question in rows]
    if not questions:
        raise ConfigError(f"FILE {path}: no questions in it")
    return questions


def _comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _csv_questions(path: Path, text: str) -> list[tuple[int, str]]:
    reader = csv.DictReader(io.StringIO(text))
    columns = reader.fieldnames or []
    column = next((name for name in columns if name.strip().lower() == "question"), None)
    if column is None:
        shown = ", ".join(one_line(name) for name in columns) or "none"
        raise ConfigError(f"FILE {path}: no 'question' column (columns: {shown})")
    # Line numbers as a person counts them: the header is line 1.
    rows: list[tuple[int, str]] = []
    for row in reader:
        value = row.get(column) or ""
        cells = [cell for value in row.values() for cell in (value if isinstance(value, list) else [value])]
        if any((cell or "").strip() for cell in cells):  # blank rows are skipped
            rows.append((reader.line_num, value))
    return rows


def _jsonl_questions(path: Path, text: str) -> list[tuple[int, str]]:
    try:
        records = list(json_objects(text.splitlines(), path))
    except ConfigError as error:
        raise ConfigError(f"FILE {error}") from None
    rows: list[tuple[int, str]] = []
    for number, value in records:
        if not isinstance(value.get("question"), str):
            raise ConfigError(f"FILE {path} line {number}: not a JSON object with a string 'question'")
        rows.append((number, value["question"]))
    return rows


def _checked(path: Path, number: int, question: str) -> str:
    text, problem = checked_question(question)
    if problem:
        raise ConfigError(f"FILE {path} line {number}: {problem}")
    return text


def folder_name(index: int, question: str, width: int) -> str:
    """``007-can-metformin-be-repurposed-for``: the question's place in FILE, then its first words."""
    words = re.findall(r"[a-z0-9]+", question.lower())[:SLUG_WORDS]
    slug = "-".join(words)[:SLUG_CHARS].strip("-") or "question"
    return f"{index:0{width}d}-{slug}"


@dataclass
class Row:
    """One line of ``summary.csv``."""

    question: str
    folder: Path
    exit_status: int
    verdict: str = ""
    confidence: str = ""
    answer: str = ""  # which way the question's outcome moves, as a review states it
    certainty: str = ""  # GRADE
    items: str = ""
    error: str = ""
    skipped: bool = False

    def cells(self) -> list[str]:
        stated = (self.question, self.verdict, self.confidence, self.answer, self.certainty, self.items)
        return [inert(value) for value in (*stated, str(self.exit_status), str(self.folder), self.error)]


def row_from_record(question: str, folder: Path, *, skipped: bool = False) -> Row | None:
    """The summary row of a finished run, from its ``run.json``; None when there is none (or it is of
    another question)."""
    try:
        record = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("question") != question:
        return None
    error = record.get("error")
    status = EXIT_FAILED if error else EXIT_DEGRADED if record.get("degraded") else EXIT_OK
    return Row(
        question=question,
        folder=folder,
        exit_status=status,
        **verdict_of(record),
        items=str(len(record.get("evidence") or [])),
        error=one_line(str(error)) if error else "",
        skipped=skipped,
    )


def verdict_of(record: dict[str, Any]) -> dict[str, str]:
    """The verdict's cells of a summary row (``verdict``, ``confidence``, ``answer``, ``certainty``), from the run
    record; empty strings for what it does not have."""
    verdict = record.get("verdict")
    if not isinstance(verdict, dict):
        return {}
    confidence = verdict.get("confidence")
    cells = {name: one_line(value) for name in ("answer", "certainty") if isinstance(value := verdict.get(name), str)}
    if isinstance(label := verdict.get("label"), str):
        cells["verdict"] = one_line(label)
    if isinstance(confidence, int | float):
        cells["confidence"] = f"{confidence:.2f}"
    return cells


def write_summary(out_dir: Path, rows: Iterable[Row]) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(SUMMARY_COLUMNS)
    writer.writerows(row.cells() for row in rows)
    path = out_dir / SUMMARY_FILE
    write_atomic(path, buffer.getvalue())
    return path


@dataclass
class Plan:
    """What a batch will do with each question."""

    question: str
    folder: Path
    action: str  # "skip" (succeeded before), "resume" (a checkpoint), "run"
    done: Row | None = None


def plan_batch(questions: Sequence[str], out_dir: Path) -> list[Plan]:
    width = max(3, len(str(len(questions))))
    plans: list[Plan] = []
    for index, question in enumerate(questions, 1):
        folder = out_dir / folder_name(index, question, width)
        if has_checkpoint(folder):
            plans.append(Plan(question, folder, "resume"))
        elif (row := row_from_record(question, folder, skipped=True)) is not None and row.exit_status != EXIT_FAILED:
            plans.append(Plan(question, folder, "skip", row))
        else:
            plans.append(Plan(question, folder, "run"))
    return plans


async def run_batch(
    plans: Sequence[Plan],
    settings: Settings,
    out_dir: Path,
    *,
    jobs: int,
    on_done: Callable[[Row], None] = lambda _row: None,
    request: RunRequest | None = None,
) -> list[Row]:
    """Run every planned question, ``jobs`` at a time; rows in FILE's order. ``request``: the options every
    question is asked with (its question is replaced by each of FILE's)."""
    template = request if request is not None else RunRequest(question="")
    from deepcritical.cli.research import run_research
    from deepcritical.evidence.resources import Resources

    # One redactor, embedding service (one model load) and store connection for every question of the batch.
    resources = Resources(settings)

    rows: dict[int, Row] = {index: plan.done for index, plan in enumerate(plans) if plan.done is not None}
    for row in rows.values():
        on_done(row)
    limit = asyncio.Semaphore(jobs)

    def ordered() -> list[Row]:
        return [rows[index] for index in sorted(rows)]

    async def one(index: int, plan: Plan) -> None:
        async with limit:
            try:
                await run_research(
                    template.asking(plan.question),
                    settings,
                    out_dir=plan.folder,
                    console=None,
                    resume_from=plan.folder if plan.action == "resume" else None,
                    resources=resources,
                )
                row = row_from_record(plan.question, plan.folder)
                if row is None:
                    row = Row(plan.question, plan.folder, EXIT_FAILED, error="the run wrote no run.json")
            except DeepCriticalError as error:  # this question failed; the batch goes on
                row = Row(plan.question, plan.folder, EXIT_FAILED, error=one_line(str(error)))
            rows[index] = row
            write_summary(out_dir, ordered())
            on_done(row)

    try:
        await asyncio.gather(*(one(index, plan) for index, plan in enumerate(plans) if plan.action != "skip"))
    finally:
        await asyncio.to_thread(resources.close)
    write_summary(out_dir, ordered())
    return ordered()


def summary_line(rows: Sequence[Row], summary: Path) -> str:
    failed = [row for row in rows if row.exit_status == EXIT_FAILED]
    degraded = [row for row in rows if row.exit_status == EXIT_DEGRADED]
    ok = len(rows) - len(failed) - len(degraded)
    skipped = sum(row.skipped for row in rows)
    earlier = f" ({skipped} from an earlier batch)" if skipped else ""
    line = f"{ok} of {len(rows)} questions succeeded{earlier}"
    if failed:
        line += f"; {len(failed)} failed: " + ", ".join(row.folder.name for row in failed[:5])
        line += ", …" if len(failed) > 5 else ""
    if degraded:
        line += f"; {len(degraded)} degraded (part of the model's work done in code)"
    return f"{line}; summary: {summary}"


def exit_code(rows: Sequence[Row]) -> int:
    statuses = {row.exit_status for row in rows}
    if EXIT_FAILED in statuses:
        return EXIT_FAILED
    return EXIT_DEGRADED if EXIT_DEGRADED in statuses else EXIT_OK
