"""An MCP run result opens as the report does: the question's frame, then the answer and its certainty, then
the run and its report (issue 40, item 1)."""

from __future__ import annotations

from pathlib import Path

from mcp_types import TextContent

from deepcritical.mcp.results import run_result
from deepcritical.outputs import Verdict
from deepcritical.reading.frame import QuestionFrame
from deepcritical.run.store import RunInfo, RunSummary

REPORT = "# Do statins reduce mortality in sepsis?\n\n## Verdict\n\n**No**\n"


class OneRun:
    """The three things ``run_result`` asks of a run manager, for one finished run folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def files(self, run_id: str) -> list[str]:
        return sorted(path.name for path in self.folder.iterdir())

    def file(self, run_id: str, name: str) -> Path:
        return self.folder / name

    def position(self, run_id: str) -> int | None:
        return None


def test_a_finished_runs_result_opens_with_its_frame_then_its_answer_and_certainty(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text(REPORT, encoding="utf-8")
    verdict = Verdict(
        label="no", confidence=0.84, evidence_ids=["pmid:1"], answer="no difference", certainty="moderate"
    )
    summary = RunSummary(
        stop_reason="sufficient", iterations=1, evidence=3, references=3, sources={"pubmed": 3}, degraded=False,
        report_fallback=False, llm_requests=2, seconds=1.0, verdict=verdict,
    )  # fmt: skip
    info = RunInfo(
        run_id="research-20240101-000000-abcdef",
        question="Do statins reduce mortality in sepsis?",
        frame=QuestionFrame(population="sepsis", intervention="statins", outcomes=["mortality"]),
        status="finished",
        demo=True,
        max_iterations=1,
        sources=["pubmed"],
        summary=summary,
        created_at="2024-01-01T00:00:00+00:00",
    )
    result = run_result(OneRun(tmp_path), info)  # type: ignore[arg-type]
    content = result.content[0]
    assert isinstance(content, TextContent)
    lines = content.text.split("\n")
    assert lines[0] == "Question frame: Population: sepsis · Intervention: statins · Outcomes: mortality."
    assert lines[1] == "Answer: no (confidence 0.84) · the outcome: no difference · GRADE certainty moderate."
    assert lines[2].startswith("Run research-20240101-000000-abcdef finished")
    assert content.text.endswith(REPORT)
    assert result.structured_content is not None
    assert result.structured_content["answer"] == verdict.stated


def test_an_insufficient_answer_ends_in_one_full_stop(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text(REPORT, encoding="utf-8")
    rationale = "Insufficient: nothing collected names the question's intervention (colchicine)."
    verdict = Verdict(label="insufficient", confidence=0.0, evidence_ids=[], rationale=rationale)
    summary = RunSummary(
        stop_reason="sufficient", iterations=1, evidence=3, references=0, sources={"pubmed": 3}, degraded=False,
        report_fallback=False, llm_requests=0, seconds=1.0, verdict=verdict,
    )  # fmt: skip
    info = RunInfo(
        run_id="research-20240101-000000-abcdef", question="Does colchicine reduce cardiovascular events?",
        status="finished", demo=True, max_iterations=1, sources=["pubmed"], summary=summary,
        created_at="2024-01-01T00:00:00+00:00",
    )  # fmt: skip
    content = run_result(OneRun(tmp_path), info).content[0]  # type: ignore[arg-type]
    assert isinstance(content, TextContent)
    assert f"Answer: {rationale}\n" in content.text  # was "(colchicine).."
