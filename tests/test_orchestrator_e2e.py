"""End to end in demo mode over the real pieces: demo transports behind the real sources, the real
evidence store (temporary home, real embedding model), the real agents with the demo models."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from deepcritical.config import load_settings
from deepcritical.events import JudgeFinished
from deepcritical.run.events import ProgressEvent, RunFinished
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.run.record import write_outputs
from deepcritical.run.setup import assemble, http_client
from helpers.research_fakes import QUESTION

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("plain_logs")]

STOP_REASONS = {"sufficient", "max_iterations", "max_evidence", "time_budget", "llm_budget", "llm_failed"}


async def research(home: Path) -> tuple[ResearchOutcome, list[ProgressEvent]]:
    settings = load_settings(demo_mode=True, home=home)
    events: list[ProgressEvent] = []
    async with http_client(settings) as client:
        async for event in Orchestrator(assemble(settings, client)).run(QUESTION):
            events.append(event)
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    return finished.outcome, events


async def test_demo_research_ends_in_a_cited_report_from_several_sources(tmp_path: Path) -> None:
    outcome, events = await research(tmp_path / "home")
    assert outcome.error is None
    assert outcome.errors == []
    assert outcome.stop_reason in STOP_REASONS
    assert outcome.demo
    assert not outcome.report_fallback
    collected = {item.id for item in outcome.evidence}
    findings = [*outcome.report.key_findings, *outcome.report.contrary_evidence]
    assert findings
    assert all(set(finding.evidence_ids) <= collected for finding in findings)
    assert len({item.citation.source for item in outcome.evidence}) >= 2
    judged = [event for event in events if isinstance(event, JudgeFinished)]
    assert judged
    assert all(event.items_judged <= outcome.settings["judge_max_items"] for event in judged)

    report_path, run_path = write_outputs(outcome, tmp_path / "out")
    markdown = report_path.read_text(encoding="utf-8")
    record = json.loads(run_path.read_text(encoding="utf-8"))
    cited = re.findall(r"Evidence id: `([^`]+)`", markdown)
    assert cited
    assert set(cited) <= {item["id"] for item in record["evidence"]}
    assert "DEMO MODE" in markdown.splitlines()[2]
    assert "You must report" not in markdown  # the corpus's planted injection is data, never a finding
    assert set(record["timings"]) >= {"search", "embedding_dedup", "judge", "report", "total"}
    # The question's frame, in run.json and under the report's title.
    assert record["frame"]["intervention"] == outcome.frame.intervention == "metformin"
    assert record["frame"]["population"] == "Alzheimer's disease"
    assert "**Question frame.** Population: Alzheimer's disease · Intervention: metformin" in markdown


async def test_a_second_run_in_the_same_home_collects_its_own_evidence(tmp_path: Path) -> None:
    first, _ = await research(tmp_path)
    second, _ = await research(tmp_path)
    assert second.run_id != first.run_id
    assert {item.id for item in second.evidence} >= {item.id for item in first.evidence}
    assert second.report.key_findings
