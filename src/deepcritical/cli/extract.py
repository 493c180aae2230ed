"""``deepcritical extract FILE --out OUT``: every statistical result stated in a set of texts, for a
reviewer's own data extraction. FILE is JSON Lines of ``{"id", "text"}``, one document or a folder of documents the
library reads (PDF, JATS, BioC, text, Markdown, HTML); OUT is JSON Lines ``{"id", "effects": [...]}`` or
CSV, one row per result.

Bad input is a one-line error and exit code 2 (a missing FILE, a line that is not a JSON object with a
text, an unknown format); in a folder, a file that cannot be read is one line on stderr and exit code 1,
the others are read."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from deepcritical.cli.common import EXIT_FAILED, err, fail, inert, settings_from
from deepcritical.errors import ConfigError
from deepcritical.jsonl import jsonl_file
from deepcritical.text import one_line

FORMATS = ("jsonl", "csv")
CSV_COLUMNS = (
    "id", "measure", "value", "unit", "ci_low", "ci_high", "ci_level", "ci_sides", "p_bound", "p", "groups",
    "significant", "within_group", "compares_arms", "quote", "start", "end",
)  # fmt: skip


def read_lines(path: Path) -> Iterator[tuple[str, str]]:
    """(id, text) from each line of a JSON Lines file; blank lines are skipped. A line that is not a
    JSON object with a string "text" and an "id" stops with a one-line error naming its line number."""
    try:
        for number, record in jsonl_file(path):
            if not isinstance(record.get("text"), str):
                fail(f'{path}, line {number}: each line must be a JSON object with a string "text" (and an "id")')
            if not isinstance(record.get("id"), str | int) or isinstance(record.get("id"), bool):
                fail(f'{path}, line {number}: the object has no "id" (a string or a number)')
            yield str(record["id"]), record["text"]
    except ConfigError as error:
        fail(str(error))


def read_folder(folder: Path) -> tuple[list[tuple[str, str]], int]:
    """(id, text) of every document the library can read under ``folder`` (or of one document), and how many
    files failed (each named on stderr with its reason). A text's id is its file's path under ``folder`` (a file
    holding several documents, a BioC collection, numbers them: "file.xml#2")."""
    from deepcritical.documents.reader import SUPPORTED, files_under, limits_from, read_files

    paths, refused = files_under([folder])
    if not paths:
        fail(f"no document under {folder} (the library reads {SUPPORTED})")
    texts: list[tuple[str, str]] = []
    failed = len(refused)
    for result in read_files(paths, limits_from(settings_from())):
        if result.error is not None:
            failed += 1
            err.print(one_line(result.line), markup=False, highlight=False, soft_wrap=True)
        name = str(result.path.relative_to(folder)) if folder.is_dir() else result.path.name
        several = len(result.documents) > 1
        for number, document in enumerate(result.documents, 1):
            texts.append((f"{name}#{number}" if several else name, document.text))
    return texts, failed


def _one_document(path: Path) -> bool:
    """A single document the library reads (a PDF, a text, an article's XML), not JSON Lines of texts."""
    from deepcritical.documents.reader import EXTENSIONS

    return path.suffix.lower() in EXTENSIONS.keys() - {".json"}


def cell(value: object) -> object:
    """A CSV cell: text that a spreadsheet would run as a formula made ``inert``; numbers stay numbers."""
    return inert(value) if isinstance(value, str) else value


def as_csv(rows: list[tuple[str, list[dict[str, Any]]]]) -> str:
    from deepcritical.reading.p_values import p_cells

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for text_id, effects in rows:
        for effect in effects:
            fields = {"id": text_id, **effect, "groups": " | ".join(effect["groups"])}
            fields["p_bound"], fields["p"] = p_cells(effect["p"])  # the number alone, for a spreadsheet
            writer.writerow([cell("" if fields[name] is None else fields[name]) for name in CSV_COLUMNS])
    return buffer.getvalue()


def as_jsonl(rows: list[tuple[str, list[dict[str, Any]]]]) -> str:
    return "".join(
        json.dumps({"id": text_id, "effects": effects}, ensure_ascii=False) + "\n" for text_id, effects in rows
    )


def extract_command(
    source: Annotated[
        Path, typer.Argument(help='JSON Lines of {"id", "text"}, or a folder of PDF/JATS/BioC/text documents.')
    ],
    out_path: Annotated[Path, typer.Option("--out", help="Where to write the results ('-': standard output).")],
    out_format: Annotated[
        str, typer.Option("--format", help="jsonl (one line per text) or csv (one row per result).")
    ] = "jsonl",
) -> None:
    """Extract every statistical result (effect sizes with CIs, group values, p-values) stated in texts."""
    from deepcritical.reading.statistics import read_effects

    form = out_format.strip().lower()
    if form not in FORMATS:
        fail(f"unknown format {out_format!r}: use jsonl or csv")
    if not source.exists():
        fail(f"no such file or folder: {source}")
    failed = 0
    if source.is_dir() or _one_document(source):
        texts, failed = read_folder(source)
    else:
        texts = list(read_lines(source))
    if not texts and not failed:
        fail(f'{source} holds no text to read: give JSON Lines of {{"id", "text"}} or a folder of documents')
    rows = [(text_id, [effect.as_dict() for effect in read_effects(text)]) for text_id, text in texts]
    written = as_csv(rows) if form == "csv" else as_jsonl(rows)
    to_stdout = str(out_path) == "-"  # as export's "-o -"; it used to write a file named "-"
    try:
        if to_stdout:
            sys.stdout.write(written)
        else:
            out_path.write_text(written, encoding="utf-8")
    except OSError as error:
        fail(f"cannot write {out_path}: {error.strerror or error}")
    found = sum(len(effects) for _id, effects in rows)
    where = "standard output" if to_stdout else out_path
    err.print(f"{len(rows)} text(s) read, {found} result(s) written to {where}", markup=False, highlight=False)
    if failed:
        raise typer.Exit(EXIT_FAILED)
