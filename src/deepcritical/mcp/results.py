"""What the MCP tools answer: evidence items, a search's findings, a run's result (its report or its
status) and each progress event as one plain line. Docstrings and field descriptions are written for the
calling model: they are what it reads."""

from __future__ import annotations

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from deepcritical.models import Evidence
from deepcritical.reading.frame import QuestionFrame
from deepcritical.run.progress import event_line
from deepcritical.run.store import RunInfo, RunSummary, StoredEvent
from deepcritical.service.manager import RunManager
from deepcritical.text import one_line, shorten

MAX_SNIPPET_CHARS = 1500


class EvidenceItem(BaseModel):
    """One piece of evidence, with what you need to cite it."""

    id: str = Field(description="Stable evidence id: pmid:…, doi:… or url:…")
    title: str
    url: str | None = Field(description="The record's page; null for a synthetic demo record, which names no real page")
    date: str
    authors: list[str]
    journal: str | None
    doi: str | None
    pmid: str | None
    found_by: list[str] = Field(description="Every source that returned this item")
    text: str = Field(description=f"The abstract or snippet, cut at {MAX_SNIPPET_CHARS} characters")

    @classmethod
    def of(cls, item: Evidence, *, synthetic: bool = False) -> EvidenceItem:
        """``synthetic``: a demo record, whose PMID or DOI names no real page (its PubMed address would open
        another paper): no link, as the report and the exports give it none."""
        citation = item.citation
        text = shorten(item.content, MAX_SNIPPET_CHARS)
        return cls(
            id=item.id,
            title=citation.title,
            url=None if synthetic else citation.url,
            date=citation.date,
            authors=list(citation.authors),
            journal=citation.journal,
            doi=citation.doi,
            pmid=citation.pmid,
            found_by=list(item.found_by),
            text=text,
        )


class LiteratureSearch(BaseModel):
    """What one search across the sources found."""

    query: str
    synthetic_demo_data: bool = Field(description="True in demo mode: every item is invented, not literature")
    sources_searched: list[str]
    source_errors: list[str] = Field(description="Sources that failed, and why; the others still answered")
    evidence: list[EvidenceItem]


class RunResult(BaseModel):
    """A research run: its status and, once it finished, its cited report in Markdown."""

    run_id: str
    question: str
    frame: QuestionFrame | None = Field(
        default=None, description="The question's population, intervention, comparator and outcomes, read in code"
    )
    answer: str | None = Field(
        default=None,
        description="Once the run finished: its verdict, which way the outcome moves and the GRADE certainty "
        "('no (confidence 0.84) · the outcome: no difference · GRADE certainty moderate')",
    )
    status: str = Field(description="queued, running, finished, failed, cancelled or interrupted")
    queue_position: int | None = Field(default=None, description="1 for the next queued run to start")
    error: str | None = None
    summary: RunSummary | None = None
    files: list[str] = Field(default_factory=list, description="The run's outputs (report.md, run.json, exports)")
    report_markdown: str | None = Field(default=None, description="The cited report, once the run finished")


def progress_line(event: StoredEvent) -> str:
    """The event's line as the run store recorded it (an event of an older folder: worded the same way)."""
    return str(event.data.get("line") or event_line(event.data))


def run_result(manager: RunManager, info: RunInfo) -> CallToolResult:
    """The run as a tool result: the report (or the status) as text, the details as structured content."""
    files = manager.files(info.run_id)
    markdown = manager.file(info.run_id, "report.md").read_text(encoding="utf-8") if "report.md" in files else None
    verdict = info.summary.verdict if info.summary is not None else None
    finished = info.status == "finished" and markdown is not None
    result = RunResult(
        run_id=info.run_id,
        question=info.question,
        frame=info.frame,
        answer=verdict.stated if finished and verdict is not None else None,
        status=info.status,
        queue_position=manager.position(info.run_id),
        error=info.error,
        summary=info.summary,
        files=files,
        report_markdown=markdown if info.status == "finished" else None,
    )
    if finished:
        # The answer first, as the report opens: the question's frame, then the verdict and its certainty.
        frame = f"Question frame: {info.frame.summary()}.\n" if info.frame and info.frame.summary() else ""
        answer = f"Answer: {result.answer.rstrip('.')}.\n" if result.answer else ""  # an insufficient one ends in "."
        text = f"{frame}{answer}Run {info.run_id} finished; its report follows.\n\n{markdown}"
    else:
        where = f", position {result.queue_position} in the queue" if result.queue_position else ""
        text = f"Run {info.run_id} is {info.status}{where}."
        if info.status in ("queued", "running"):
            text += " Call get_run again later for its report."
        elif info.error:
            text += f" {info.error}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=result.model_dump(mode="json")
    )


def run_failure(info: RunInfo) -> ToolError:
    reason = info.error or info.status
    return ToolError(one_line(f"run {info.run_id} {info.status}: {reason}"))
