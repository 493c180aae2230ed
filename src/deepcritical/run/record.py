"""A run's files: ``report.md`` (the rendered report) and ``run.json`` (everything else, no secrets)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deepcritical.run.outcome import ResearchOutcome

RUN_RECORD_VERSION = 1


def run_record(outcome: ResearchOutcome) -> dict[str, Any]:
    """The JSON record: question, settings (secrets reduced to "set"), every evidence item and
    assessment, timings per stage, LLM usage, stop reason, errors, and evidence counts per source."""
    record = outcome.model_dump(mode="json", exclude={"markdown"})
    return {"record_version": RUN_RECORD_VERSION, **record, "sources": outcome.sources}


def write_outputs(outcome: ResearchOutcome, out_dir: Path) -> tuple[Path, Path]:
    """Write ``report.md`` and ``run.json`` into ``out_dir`` (created if needed); return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    report_path = out_dir / "report.md"
    run_path = out_dir / "run.json"
    report_path.write_text(outcome.markdown, encoding="utf-8")
    run_path.write_text(json.dumps(run_record(outcome), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return report_path, run_path
