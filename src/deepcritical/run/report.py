"""The report stage: the Report agent's draft, checked against the run's evidence; or, when the model
fails, runs out of time or requests, or cites nothing that was collected, an extractive report built in
code. A crash in this stage (a bug) still ends in an extractive report, but fails the run."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import structlog
from pydantic_ai.exceptions import AgentRunError

from deepcritical.agents.deps import ResearchDeps
from deepcritical.agents.report import MAX_REPORT_ITEMS
from deepcritical.errors import DeepCriticalError
from deepcritical.events import RunWarning
from deepcritical.models import Evidence
from deepcritical.outputs import CitationAudit, FallbackReason, ResearchReport, StopReason
from deepcritical.stages.citations import verify_citations
from deepcritical.stages.extractive import extractive_report
from deepcritical.stages.framing import REPORT_TEXT_CHARS, EvidenceView

logger = structlog.get_logger(__name__)

ReportWriter = Callable[[ResearchDeps, list[Evidence], StopReason], Awaitable[ResearchReport]]


@dataclass
class CheckedReport:
    """A citation-checked report; ``fallback`` says why it was built in code (None: the model wrote it),
    ``crash`` is set when the stage failed with a bug."""

    report: ResearchReport
    audit: CitationAudit
    fallback: FallbackReason | None = None
    crash: str | None = None
    # The ids of the items the report was written from, so the strength table counts the same items as
    # the answer in brief (empty: every collected item).
    pool: list[str] = field(default_factory=list)


def nothing_found(deps: ResearchDeps) -> ResearchReport:
    state = deps.state
    limitations = [f"Queries run: {'; '.join(state.queries_run) or 'none'}."]
    if failed := state.failed_sources():
        # Only the names: limitations go through the model-text renderer, which removes URLs; the errors
        # themselves render escaped, like every other error, under "Why the run stopped".
        limitations.append(
            f"Sources that did not answer: {', '.join(failed)} (their errors are under Why the run stopped)."
        )
    return ResearchReport(
        question=state.question,
        answer_brief="No evidence was found, so this question cannot be answered from the sources searched.",
        key_findings=[],
        limitations=limitations,
    )


def _extractive(deps: ResearchDeps, items: list[Evidence], note: str, reason: FallbackReason) -> CheckedReport:
    collected = deps.evidence.items
    pool = items or sorted(collected.values(), key=lambda item: item.relevance, reverse=True)[:MAX_REPORT_ITEMS]
    views = [EvidenceView.of(item, REPORT_TEXT_CHARS) for item in pool]
    draft = extractive_report(deps.state.question, views, assessment=deps.state.last_assessment, notes=[note])
    report, audit = verify_citations(draft, collected, question=deps.state.question)
    return CheckedReport(report, audit, reason, pool=[item.id for item in pool])


async def write_report(deps: ResearchDeps, writer: ReportWriter, stop: StopReason) -> CheckedReport:
    """The run's report, always; never raises for a model failure or a bug in this stage."""
    with deps.state.timed("report"):
        if not deps.evidence:
            return CheckedReport(nothing_found(deps), CitationAudit(), "no_evidence")
        items: list[Evidence] = []
        try:
            items = await deps.evidence.select(
                deps.state.question, min(2 * deps.settings.judge_max_items, MAX_REPORT_ITEMS)
            )
            async with asyncio.timeout(max(deps.budget.remaining(report=True), 0.0)):
                draft = await writer(deps, items, stop)
        except (TimeoutError, AgentRunError, DeepCriticalError) as error:  # out of time or budget, model failed
            note = deps.record_error("report", error)
            deps.emit(RunWarning(message=note))
            deps.state.degraded.append(f"the report was built in code: the Report agent failed ({note})")
            deps.state.agent("report").fallbacks += 1
            return _extractive(
                deps, items, f"The Report agent failed ({note}); this report is extractive.", "report_failed"
            )
        except Exception as error:  # a bug: the run keeps a report, but fails and says so
            logger.exception("report_stage_crashed")
            note = deps.record_error("report", error)
            checked = _extractive(
                deps, items, f"The report stage crashed ({note}); this report is extractive.", "report_crashed"
            )
            checked.crash = f"the report stage crashed: {note}"
            return checked
        report, audit = verify_citations(draft, deps.evidence.items, question=deps.state.question)
        if report.key_findings or report.contrary_evidence:  # contrary findings alone are a valid report
            return CheckedReport(report, audit, pool=[item.id for item in items])
        if draft.key_findings or draft.contrary_evidence:
            note = "None of the Report agent's findings cited collected evidence; this report is extractive."
        else:
            note = "The Report agent gave no findings; this report is extractive."
        deps.state.degraded.append("the report was built in code: " + note[0].lower() + note[1:].split(";")[0])
        deps.state.agent("report").fallbacks += 1
        return _extractive(deps, items, note, "no_cited_findings")
