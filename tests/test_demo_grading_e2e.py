"""The demo run shows what this slice adds, end to end: designs and populations on findings, the
strength-of-evidence table, the retraction warning, grades in run.json, the two new sources, and
reference exports that parse."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import rispy
from bibtexparser import parse_string
from typer.testing import CliRunner

from deepcritical.cli.app import app


@pytest.mark.model
def test_the_demo_report_weighs_evidence_by_design(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPCRITICAL_HOME", str(tmp_path / "home"))
    for variable in ("DEEPCRITICAL_SOURCES", "CHROMA_HOST", "SEARXNG_BASE_URL", "YOU_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    out = tmp_path / "out"
    question = "Can metformin be repurposed for Alzheimer's disease?"
    result = CliRunner().invoke(app, ["research", question, "--demo", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output

    report = (out / "report.md").read_text(encoding="utf-8")
    assert "*(randomised controlled trial" in report
    assert "*(preclinical study, animals)*" in report  # the mechanism keeps a place among the findings
    assert "| Animal and cell studies | outside the scale |" in report
    assert "## Strength of evidence" in report
    assert "| Randomised controlled trials | 2 |" in report
    assert "> **Warning: 1 retracted publication on this question.**" in report
    assert "Retracted:** \\[DEMO\\] Metformin reverses memory decline" in report.split("## Key findings")[0]  # warned
    assert "99000114" not in report.split("## References")[1]  # never a reference
    assert "> **Caution: 1 publication under an expression of concern.**" in report
    assert "The strongest evidence in people is at OCEBM level" in report

    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    evidence = record["evidence"]
    assert all(item["grade"]["basis"] is not None for item in evidence)
    by_id = {item["id"]: item for item in evidence}
    assert by_id["pmid:99000114"]["retracted"] is True
    assert by_id["pmid:99000105"]["grade"]["design"] == "randomized_controlled_trial"
    assert "clinicaltrials" in by_id["pmid:99000105"]["found_by"]  # merged with its registry entry
    sources = {name for item in evidence for name in item["found_by"]}
    assert {"clinicaltrials", "europepmc"} <= sources

    verdict = record["verdict"]
    answer_line = result.stdout.splitlines()[-1]  # --quiet: no progress, so the answer is said here or nowhere
    assert answer_line.startswith(f"answer: {verdict['label']} ")
    assert f"GRADE certainty {verdict['certainty']}" in answer_line

    references = record["report"]["references"]
    listed = re.findall(r"^\d+\. .*? Evidence id: `([^`]+)`", report.split("## References")[1], re.MULTILINE)
    assert listed == references  # one numbering: report.md, run.json and the exports list the same items
    assert record["report_assessment"]["clinical"]["score"] <= record["assessments"][-1]["clinical"]["score"]
    assert [entry["id"] for entry in rispy.loads((out / "references.ris").read_text(encoding="utf-8"))] == references
    assert len(parse_string((out / "references.bib").read_text(encoding="utf-8")).entries) == len(references)
    assert [entry["id"] for entry in json.loads((out / "references.json").read_text(encoding="utf-8"))] == references
