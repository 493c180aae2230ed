"""Everything a run produced, assembled once at its end: what ``run.json`` records and ``report.md`` renders."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from deepcritical.agents.deps import ResearchDeps
from deepcritical.models import Evidence, count_by_source
from deepcritical.outputs import (
    Assessment,
    BrainTurn,
    CitationAudit,
    FallbackReason,
    ResearchReport,
    SearchStep,
    StopReason,
)
from deepcritical.stages.render import RenderContext, render_markdown


def new_run_id(kind: str = "research") -> str:
    """``<kind>-<UTC time>-<random>``: sortable, unique, the same form for every kind of run."""
    return f"{kind}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"


class LlmUsage(BaseModel):
    """Requests sent to the language model, failed attempts included, and the tokens they used."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class ResearchOutcome(BaseModel):
    """Everything a run produced: what ``run.json`` records and ``report.md`` renders."""

    question: str
    run_id: str
    started_at: str
    demo: bool
    model: str
    stop_reason: StopReason
    iterations: int
    report: ResearchReport
    markdown: str
    report_fallback: bool = Field(description="True when the report was built in code, not by the Report agent")
    report_fallback_reason: FallbackReason | None = Field(
        default=None, description="Why the report was built in code (None when the Report agent wrote it)"
    )
    citation_audit: CitationAudit
    evidence: list[Evidence]
    recalled_ids: list[str] = Field(
        default_factory=list,
        description="Evidence recalled from the library of earlier runs rather than found by this run's searches",
    )
    assessments: list[Assessment]
    plans: list[BrainTurn]
    searches: list[SearchStep]
    timings: dict[str, float] = Field(description="Wall-clock seconds per stage, and in total")
    llm_usage: LlmUsage
    errors: list[str]
    degraded: bool = Field(
        default=False,
        description="True when part of the model's work was done in code because the model failed; "
        "``degraded_reasons`` says which part and why",
    )
    degraded_reasons: list[str] = Field(default_factory=list)
    error: str | None = Field(
        default=None,
        description="Set when the run failed: it crashed, or no evidence was collected because the language model "
        "failed, its request budget ran out, or no source answered any search. Sources that answered but found "
        "nothing relevant leave it None. A caller should treat a set error as a failed run.",
    )
    settings: dict[str, Any]

    @property
    def sources(self) -> dict[str, int]:
        """How many collected items each source returned (an item found by two sources counts for both)."""
        return count_by_source(self.evidence)


def assemble_outcome(
    deps: ResearchDeps,
    *,
    run_id: str,
    model: str,
    started_at: datetime,
    started: float,
    stop: StopReason,
    report: ResearchReport,
    audit: CitationAudit,
    fallback: FallbackReason | None,
    error: str | None,
) -> ResearchOutcome:
    state, evidence = deps.state, deps.evidence
    context = RenderContext(
        demo=deps.settings.demo_mode,
        stop_reason=stop,
        run_id=run_id,
        model=model,
        iterations=state.iteration,
        assessment=state.last_assessment,
        sources=evidence.count_by_source(),
        failed_sources=state.failed_sources(),
        problems=state.errors,
        degraded=state.degraded,
        recalled=evidence.recalled_ids,
    )
    usage = deps.budget.usage
    return ResearchOutcome(
        question=state.question,
        run_id=run_id,
        started_at=started_at.isoformat(),
        demo=deps.settings.demo_mode,
        model=model,
        stop_reason=stop,
        iterations=state.iteration,
        report=report,
        markdown=render_markdown(report, evidence.items, context),
        report_fallback=fallback is not None,
        report_fallback_reason=fallback,
        citation_audit=audit,
        evidence=list(evidence),
        recalled_ids=evidence.recalled_ids,
        assessments=state.assessments,
        plans=state.plans,
        searches=state.searches,
        timings=_timings(state.timings, started),
        llm_usage=LlmUsage(requests=usage.requests, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens),
        errors=[deps.redact(message) for message in state.errors],
        degraded=bool(state.degraded),
        degraded_reasons=[deps.redact(reason) for reason in state.degraded],
        error=deps.redact(error) if error else None,
        settings=deps.settings.public_dict(),
    )


def _timings(measured: dict[str, float], started: float) -> dict[str, float]:
    timings = dict(measured)
    # Searches run inside the Brain's turn; planning is what the turn took besides them.
    inside = timings.get("search", 0.0) + timings.get("embedding_dedup", 0.0)
    timings["planning"] = max(timings.get("planning", 0.0) - inside, 0.0)
    timings["total"] = time.perf_counter() - started
    return {stage: round(seconds, 4) for stage, seconds in timings.items()}
