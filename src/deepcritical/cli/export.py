"""``deepcritical export RUN_DIR``: a finished run's references as RIS, BibTeX or CSL-JSON, or its
study-results table as CSV (``--format results-csv``), read from its ``run.json``; or its report in any of the
report's formats (``report.formats``: Markdown, an HTML page), written from its ``report.json``. No network,
no store."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from deepcritical.appraisal.results import StudyResult
from deepcritical.appraisal.studies import numbers_by_study
from deepcritical.cli.extract import cell
from deepcritical.errors import ConfigError
from deepcritical.models import Evidence
from deepcritical.reading.p_values import p_cells
from deepcritical.report.document import REPORT_DOCUMENT_FILE, ReportDocument
from deepcritical.report.exports import EXPORT_FORMATS, export, referenced
from deepcritical.report.formats import document_writers

# "p" is the number alone and "p_bound" its bound, if any (``p_cells``): a spreadsheet reads the p-value as a number.
RESULTS_COLUMNS = (
    "reference", "id", "title", "design", "population", "n", "outcome", "subgroup", "measure", "value", "unit",
    "ci_low", "ci_high", "ci_level", "p_bound", "p", "groups", "significant", "direction", "study_reading",
    "another_outcome", "quote",
)  # fmt: skip


def load_run(run_dir: Path) -> tuple[list[str], dict[str, Evidence], bool]:
    """The report's reference ids, every collected item of the run recorded in ``run_dir``, and whether it was
    a demo run (synthetic records). Anything that is not a readable run record is a ConfigError naming the
    file and the problem."""
    path = run_dir / "run.json" if run_dir.is_dir() else run_dir
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"no run record at {path}: give the --out directory of a research run") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    except json.JSONDecodeError as error:
        raise ConfigError(f"{path} is not JSON: {error.msg} at line {error.lineno}") from None
    if not isinstance(data, dict) or not isinstance(data.get("evidence"), list):
        raise ConfigError(f"{path} is not a DeepCritical run record: it has no 'evidence' list")
    try:
        items = [Evidence.model_validate(record) for record in data["evidence"]]
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ConfigError(f"{path} holds an evidence item that does not validate: {where}: {first['msg']}") from None
    report = data.get("report")
    listed = report.get("references", []) if isinstance(report, dict) else []
    references = [ref for ref in listed if isinstance(ref, str)] if isinstance(listed, list) else []
    return references, {item.id: item for item in items}, data.get("demo") is True


def export_formats() -> tuple[str, ...]:
    """Every ``--format``: the reference managers', the results table's, then the report's own."""
    return (*EXPORT_FORMATS, *document_writers())


def export_run(run_dir: Path, form: str, *, every_item: bool = False) -> tuple[str, int]:
    """The run's references (or, with ``every_item``, every collected item) in ``form``, and how many; for
    ``results-csv``, its study-results table and how many rows; for a report format, the report and its number
    of references."""
    writers = document_writers()
    if form in writers:
        document = load_document(run_dir)
        return writers[form].write(document), document.references()
    references, evidence, synthetic = load_run(run_dir)
    if form == "results-csv":
        return results_csv(run_dir, references, evidence)
    items = list(evidence.values()) if every_item else referenced(references, evidence)
    return export(items, form, synthetic=synthetic), len(items)  # type: ignore[arg-type]  # one of EXPORT_FORMATS


def load_document(run_dir: Path) -> ReportDocument:
    """The run's report document; a folder without one (a run of an older version) is named with the command
    that writes it."""
    if not run_dir.exists():
        raise ConfigError(f"RUN {run_dir}: no such folder (give the --out directory of a finished research run)")
    folder = run_dir if run_dir.is_dir() else run_dir.parent
    path = folder / REPORT_DOCUMENT_FILE
    try:
        return ReportDocument.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise ConfigError(
            f"no {REPORT_DOCUMENT_FILE} in {folder}: give the --out directory of a finished research run "
            f"(a run of an older version: deepcritical runs upgrade {folder})"
        ) from None
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror or error}") from None
    except ValidationError as error:
        raise ConfigError(f"{path} is not a report document: {error.errors()[0]['msg']}") from None


def results_csv(run_dir: Path, references: list[str], evidence: dict[str, Evidence]) -> tuple[str, int]:
    """The rows of the report's Study results table (``study_results`` in run.json), one per stated result,
    with the study's reference number as the report gives it; text cells that a spreadsheet would run as a
    formula are neutralised."""
    path = run_dir / "run.json" if run_dir.is_dir() else run_dir
    data = json.loads(path.read_text(encoding="utf-8"))  # load_run has read and checked it
    try:
        rows = [StudyResult.model_validate(row) for row in data.get("study_results") or []]
    except ValidationError as error:
        raise ConfigError(f"{path} holds a study result that does not validate: {error.errors()[0]['msg']}") from None
    numbers = numbers_by_study(references, evidence)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(RESULTS_COLUMNS)
    for row in rows:
        item = evidence.get(row.id)
        fields = {
            **row.model_dump(),
            "reference": numbers.get(row.id),
            "title": item.citation.title if item is not None else "",
            "groups": " | ".join(row.groups),
            # The row's own way (its estimate against no effect), beside the study's one reading for the question:
            # a study's other rows may well go another way than the result it is read by.
            "direction": row.result_direction,
            "study_reading": row.reading,
        }
        fields["p_bound"], fields["p"] = p_cells(row.p)
        writer.writerow([cell("" if fields[name] is None else fields[name]) for name in RESULTS_COLUMNS])
    return buffer.getvalue(), len(rows)
