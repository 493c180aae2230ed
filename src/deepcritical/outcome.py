"""The end of a run: the report stage (with its extractive fallback) and the assembled outcome."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from datetime import datetime

import structlog
from pydantic_ai import Agent
from pydantic_ai.exceptions import AgentRunError
from pydantic_ai.models import Model

from deepcritical.agents.citations import CitationAudit, verify_citations
from deepcritical.agents.deps import ResearchDeps
from deepcritical.agents.extractive import extractive_report
from deepcritical.agents.outputs import FallbackReason, ResearchReport, StopReason
from deepcritical.agents.render import RenderContext, render_markdown
from deepcritical.agents.report import MAX_REPORT_ITEMS, report_items, views, write_report
from deepcritical.errors import DeepCriticalError
from deepcritical.events import LlmUsage, ResearchOutcome
from deepcritical.models import Evidence

logger = structlog.get_logger(__name__)


def new_run_id() -> str:
    return f"research-{datetime.now().astimezone():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"


class OutcomeBuilder:
    def __init__(self, deps: ResearchDeps, run_id: str, model: str, started_at: datetime, started: float) -> None:
        self._deps = deps
        self._run_id = run_id
        self._model = model
        self._started_at = started_at
        self._started = started

    async def report(
        self, agent: Agent[ResearchDeps, ResearchReport], model: Model, stop: StopReason
    ) -> tuple[ResearchReport, CitationAudit, FallbackReason | None]:
        """The checked report, its citation audit, and why it was built in code (None: the Report agent wrote it)."""
        with self._deps.state.timed("report"):
            return await self._report(agent, model, stop)

    async def _report(
        self, agent: Agent[ResearchDeps, ResearchReport], model: Model, stop: StopReason
    ) -> tuple[ResearchReport, CitationAudit, FallbackReason | None]:
        deps, state = self._deps, self._deps.state
        if not state.evidence:
            return self._nothing_found(), CitationAudit(), "no_evidence"
        items: list[Evidence] = []
        try:
            items = await report_items(deps)
            async with asyncio.timeout(max(deps.budget.remaining(report=True), 0.0)):
                draft = await write_report(agent, deps, model, items, stop)
        except (TimeoutError, AgentRunError, DeepCriticalError) as error:  # out of time or budget, model failed
            note = deps.record_error("report", error)
            return self._fallback(items, f"The Report agent failed ({note}); this report is extractive.")
        except Exception as error:  # a bug here must not cost the run its report: logged, recorded, built in code
            logger.exception("report_stage_crashed")
            note = deps.record_error("report", error)
            return self._fallback(items, f"The Report agent failed ({note}); this report is extractive.")
        report, audit = verify_citations(draft, state.evidence, question=state.question)
        if not (report.key_findings or report.contrary_evidence):  # contrary findings alone are a valid report
            if draft.key_findings or draft.contrary_evidence:
                note = "None of the Report agent's findings cited collected evidence; this report is extractive."
            else:
                note = "The Report agent gave no findings; this report is extractive."
            return self._fallback(items, note, "no_cited_findings")
        return report, audit, None

    def _fallback(
        self, items: list[Evidence], note: str, reason: FallbackReason = "report_failed"
    ) -> tuple[ResearchReport, CitationAudit, FallbackReason]:
        state = self._deps.state
        by_relevance = sorted(state.evidence.values(), key=lambda item: item.relevance, reverse=True)
        pool = items or by_relevance[:MAX_REPORT_ITEMS]
        draft = extractive_report(state.question, views(pool), assessment=state.last_assessment, notes=[note])
        report, audit = verify_citations(draft, state.evidence, question=state.question)
        return report, audit, reason

    def _failed_sources(self) -> dict[str, str]:
        failed: dict[str, str] = {}
        for step in self._deps.state.searches:
            for name, error in step.sources_failed.items():
                failed.setdefault(name, error)
        return failed

    def _nothing_found(self) -> ResearchReport:
        state = self._deps.state
        limitations = [f"Queries run: {'; '.join(state.queries_run) or 'none'}."]
        if failed := self._failed_sources():
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

    def timings(self) -> dict[str, float]:
        timings = dict(self._deps.state.timings)
        # Searches run inside the Brain's turn; planning is what the turn took besides them.
        inside = timings.get("search", 0.0) + timings.get("embedding_dedup", 0.0)
        timings["planning"] = max(timings.get("planning", 0.0) - inside, 0.0)
        timings["total"] = time.perf_counter() - self._started
        return {stage: round(seconds, 4) for stage, seconds in timings.items()}

    def outcome(
        self,
        stop: StopReason,
        report: ResearchReport,
        audit: CitationAudit,
        *,
        fallback: FallbackReason | None,
        error: str | None,
    ) -> ResearchOutcome:
        deps, state = self._deps, self._deps.state
        sources = Counter(name for item in state.evidence.values() for name in item.found_by)
        context = RenderContext(
            demo=deps.settings.demo_mode,
            stop_reason=stop,
            run_id=self._run_id,
            model=self._model,
            iterations=state.iteration,
            assessment=state.last_assessment,
            sources=dict(sorted(sources.items())),
            failed_sources=self._failed_sources(),
            problems=state.errors,
        )
        usage = deps.budget.usage
        return ResearchOutcome(
            question=state.question,
            run_id=self._run_id,
            started_at=self._started_at.isoformat(),
            demo=deps.settings.demo_mode,
            model=self._model,
            stop_reason=stop,
            iterations=state.iteration,
            report=report,
            markdown=render_markdown(report, state.evidence, context),
            report_fallback=fallback is not None,
            report_fallback_reason=fallback,
            citation_audit=audit,
            evidence=list(state.evidence.values()),
            assessments=state.assessments,
            plans=state.plans,
            searches=state.searches,
            timings=self.timings(),
            llm_usage=LlmUsage(
                requests=usage.requests, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens
            ),
            errors=[deps.redact(message) for message in state.errors],
            error=error,
            settings=deps.settings.public_dict(),
        )
