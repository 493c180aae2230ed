"""Run folders written by earlier versions, brought to this one once (``deepcritical runs upgrade``), so that
nothing else reads the older forms: a finished run's folder without ``report.json`` (the report as a document,
which the page shows and ``report.md`` is written from) gets one, rebuilt from its ``run.json``.

What a record does not hold cannot be rebuilt as it was: which items the report was written from (recorded as
``report_pool`` since this command exists; an older record's document counts every collected item) and which
sources failed (their errors stay under "Why the run stopped"). The report's text, verdict, figures and
references are the record's."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.reading.frame import frame_question
from deepcritical.reading.results import ResultReader
from deepcritical.report.document import REPORT_DOCUMENT_FILE
from deepcritical.report.markdown_writer import to_markdown
from deepcritical.report.render import RenderContext, build_document
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.run.store import RunStore
from deepcritical.text import one_line

RECORD_FILE = "run.json"
Upgraded = Literal["upgraded", "current", "not finished", "unreadable"]


@dataclass(frozen=True)
class FolderUpgrade:
    """What ``upgrade_folder`` did with one run folder, and why when it could not."""

    folder: Path
    result: Upgraded
    why: str = ""


def _outcome(folder: Path) -> ResearchOutcome:
    """The run's outcome as its record holds it (``report.md`` stands for the Markdown the record leaves out)."""
    record = json.loads((folder / RECORD_FILE).read_text(encoding="utf-8"))
    record.pop("record_version", None)
    record.pop("sources", None)  # derived from the evidence
    markdown = folder / "report.md"
    record["markdown"] = markdown.read_text(encoding="utf-8") if markdown.is_file() else ""
    return ResearchOutcome.model_validate(record)


def rebuilt(outcome: ResearchOutcome) -> ResearchOutcome:
    """``outcome`` with its report document built again from what it records, and its Markdown from that."""
    evidence = {item.id: item for item in outcome.evidence}
    reader = StudyReader(outcome.question, ResultReader.load(outcome.settings.get("reader", "linear")))
    context = RenderContext(
        demo=outcome.demo,
        stop_reason=outcome.stop_reason,
        run_id=outcome.run_id,
        model=outcome.model,
        iterations=outcome.iterations,
        assessment=outcome.assessments[-1] if outcome.assessments else None,
        sources=outcome.sources,
        problems=outcome.errors,
        degraded=outcome.degraded_reasons,
        recalled=outcome.recalled_ids,
        pool=outcome.report_pool,
        verdict=outcome.verdict,
        frame=outcome.frame or frame_question(outcome.question),
        figures=outcome.figures,
        reader=reader,
    )
    document = build_document(outcome.report, evidence, context)
    return outcome.model_copy(update={"document": document, "markdown": to_markdown(document)})


def upgrade_folder(folder: Path) -> FolderUpgrade:
    """Bring one run folder to this version; a folder that is current, or holds no finished run, is left as it is."""
    if (folder / REPORT_DOCUMENT_FILE).is_file():
        return FolderUpgrade(folder, "current")
    if not (folder / RECORD_FILE).is_file():
        return FolderUpgrade(folder, "not finished", f"no {RECORD_FILE}: the run never finished")
    try:
        outcome = rebuilt(_outcome(folder))
    except (OSError, ValueError, ValidationError) as error:  # json's errors are ValueErrors
        return FolderUpgrade(folder, "unreadable", one_line(str(error))[:300])
    RunStore(folder).write_outputs(outcome)
    return FolderUpgrade(folder, "upgraded")


def upgrade_runs(runs_dir: Path) -> list[FolderUpgrade]:
    """Every run folder under ``runs_dir`` brought to this version, oldest name first."""
    return [upgrade_folder(folder) for folder in sorted(p for p in runs_dir.iterdir() if p.is_dir())]
