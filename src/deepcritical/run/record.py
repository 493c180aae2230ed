"""A run's files: ``report.md`` (the report in Markdown), ``report.json`` (the report as the document both the
Markdown and the page's HTML are written from), ``run.json`` (everything else, no secrets) and the report's
references for reference managers (RIS, BibTeX, CSL-JSON)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepcritical.report.document import REPORT_DOCUMENT_FILE, Block
from deepcritical.report.exports import FILE_NAMES, REFERENCE_FORMATS, ReferenceFormat, export, referenced
from deepcritical.report.figure_files import write_figures
from deepcritical.report.markdown_writer import to_markdown
from deepcritical.report.render import on_top
from deepcritical.run.outcome import ResearchOutcome

RUN_RECORD_VERSION = 1


def run_record(outcome: ResearchOutcome) -> dict[str, Any]:
    """The JSON record: question, settings (secrets reduced to "set"), every evidence item and
    assessment, timings per stage, LLM usage, stop reason, errors, and evidence counts per source."""
    record = outcome.model_dump(mode="json", exclude={"markdown", "document"})
    return {"record_version": RUN_RECORD_VERSION, **record, "sources": outcome.sources}


@dataclass(frozen=True)
class Addendum:
    """What a caller adds to a run before its files are written, never after (a watch's "what changed"):
    ``blocks`` at the top of its report, ``files`` (name: text) beside it."""

    blocks: list[Block] = field(default_factory=list)
    files: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in self.files:
            if Path(name).name != name or name in (".", ".."):
                raise ValueError(f"an addendum's file is a plain name in the run's folder, not {name!r}")


def with_addendum(outcome: ResearchOutcome, addendum: Addendum) -> ResearchOutcome:
    """``outcome`` with ``addendum``'s blocks at the top of its report (the document and its Markdown)."""
    if not addendum.blocks or outcome.document is None:
        return outcome
    document = on_top(outcome.document, addendum.blocks)
    return outcome.model_copy(update={"document": document, "markdown": to_markdown(document)})


def write_outputs(outcome: ResearchOutcome, out_dir: Path, files: Mapping[str, str] | None = None) -> tuple[Path, Path]:
    """Write ``report.md``, ``report.json`` and ``run.json`` into ``out_dir`` (created if needed), and beside them the
    report's references for reference managers (``references.ris``, ``references.bib``,
    ``references.json`` in CSL-JSON), its figures (``prisma.svg``, ``forest-N.svg`` and ``.png``) and ``files``
    (an addendum's); return the paths of the report and the run record."""
    out_dir.mkdir(parents=True, exist_ok=True)
    report_path = out_dir / "report.md"
    run_path = out_dir / "run.json"
    report_path.write_text(outcome.markdown, encoding="utf-8")
    if outcome.document is not None:
        (out_dir / REPORT_DOCUMENT_FILE).write_text(outcome.document.model_dump_json(), encoding="utf-8")
    run_path.write_text(json.dumps(run_record(outcome), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    write_references(outcome, out_dir)
    write_figures(outcome.figures, out_dir)
    for name, text in (files or {}).items():
        (out_dir / name).write_text(text, encoding="utf-8")
    return report_path, run_path


def write_references(outcome: ResearchOutcome, out_dir: Path) -> dict[ReferenceFormat, Path]:
    """The report's references in every export format, beside the report."""
    items = referenced(outcome.report.references, {item.id: item for item in outcome.evidence})
    paths: dict[ReferenceFormat, Path] = {}
    for form in REFERENCE_FORMATS:
        paths[form] = out_dir / FILE_NAMES[form]
        paths[form].write_text(export(items, form, synthetic=outcome.demo), encoding="utf-8")
    return paths
