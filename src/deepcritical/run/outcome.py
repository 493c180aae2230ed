"""Everything a run produced, assembled once at its end: what ``run.json`` records and the report document
that ``report.md`` and the page's HTML are written from."""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from deepcritical.agents.deps import ResearchDeps
from deepcritical.appraisal.results import StudyResult
from deepcritical.appraisal.run_appraisal import Appraisal, run_verdict
from deepcritical.appraisal.studies import group_studies, lead, study_numbers
from deepcritical.models import Evidence, count_by_source
from deepcritical.outputs import (
    Assessment,
    BrainTurn,
    CitationAudit,
    FallbackReason,
    ResearchReport,
    SearchStep,
    StopReason,
    Verdict,
)
from deepcritical.reading.frame import QuestionFrame
from deepcritical.report.document import ReportDocument
from deepcritical.report.extractive import code_brief, code_findings
from deepcritical.report.figure_data import Figures, StudyFlow, build_figures
from deepcritical.report.forest_data import ForestPlot
from deepcritical.report.markdown_writer import to_markdown
from deepcritical.report.render import RenderContext, build_document, reference_order
from deepcritical.report.sections import findings_for_the_answer
from deepcritical.run.report import CheckedReport


def new_run_id(kind: str = "research") -> str:
    """``<kind>-<UTC time>-<random>``: sortable, unique, the same form for every kind of run."""
    return f"{kind}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"


CheckpointStage = Literal["search", "plan", "judge", "report"]


class Resumption(BaseModel):
    """One time the run was continued from a checkpoint."""

    at: str = Field(description="When the run was resumed (UTC, ISO 8601)")
    stage: CheckpointStage = Field(description="The last stage the checkpoint had finished")
    iteration: int = Field(description="The iteration that stage belonged to")


class LlmUsage(BaseModel):
    """Requests sent to the language model, failed attempts included, and the tokens they used."""

    requests: int = 0
    failed_requests: int = Field(default=0, description="Requests that failed (an HTTP error, a timeout, no answer)")
    input_tokens: int = 0
    output_tokens: int = 0


class AgentUsage(BaseModel):
    """What one agent's model calls came to (``deepcritical.stages.state.AgentStats``)."""

    calls: int = Field(description="Times the agent was asked (one Brain turn, one judgement, one report)")
    requests: int = Field(description="Requests sent to the model, failed ones included")
    failed_requests: int
    outputs_validated: int = Field(description="Structured answers that fit the output schema")
    outputs_refused: int = Field(description="Answers that did not fit the output schema (prose, wrong JSON)")
    fallbacks: int = Field(description="Times code did the agent's work because its model failed")
    input_tokens: int
    output_tokens: int
    seconds: float


class ResearchOutcome(BaseModel):
    """Everything a run produced: what ``run.json`` records and ``report.md`` renders."""

    question: str
    frame: QuestionFrame | None = Field(
        default=None,
        description="The question's population, intervention, comparator and outcomes, as read in code "
        "(None only in records written before frames existed)",
    )
    run_id: str
    started_at: str
    demo: bool
    model: str
    stop_reason: StopReason
    iterations: int
    report: ResearchReport
    verdict: Verdict | None = Field(
        default=None,
        description="The run's answer in one label, with its confidence and what it rests on (set by every run; "
        "None only in records written before verdicts existed)",
    )
    markdown: str
    document: ReportDocument | None = Field(
        default=None,
        description="The report as a document (report.json): report.md is its Markdown, the page shows its HTML "
        "(None only for an outcome built from Markdown alone)",
    )
    report_fallback: bool = Field(description="True when the report was built in code, not by the Report agent")
    report_fallback_reason: FallbackReason | None = Field(
        default=None, description="Why the report was built in code (None when the Report agent wrote it)"
    )
    citation_audit: CitationAudit
    evidence: list[Evidence]
    report_pool: list[str] = Field(
        default_factory=list,
        description="The ids of the items the report was written from, which it counts (empty: every collected item)",
    )
    recalled_ids: list[str] = Field(
        default_factory=list,
        description="Evidence recalled from the library of earlier runs rather than found by this run's searches",
    )
    assessments: list[Assessment]
    study_results: list[StudyResult] = Field(
        default_factory=list,
        description="Per counted study, the result its text states in numbers (the report's Study results table)",
    )
    study_flow: StudyFlow | None = Field(
        default=None, description="The PRISMA 2020-style flow's numbers (drawn as prisma.svg in the run folder)"
    )
    forest_plots: list[ForestPlot] = Field(
        default_factory=list,
        description="Per outcome, the counted studies' comparable estimates (drawn as forest-N.svg and .png)",
    )
    forest_notes: list[str] = Field(default_factory=list, description="Why an outcome has no forest plot")
    report_assessment: Assessment | None = Field(
        default=None,
        description="The last assessment as report.md shows it: each score capped by what the report's counted items "
        "can support (``caps`` says which and why)",
    )
    plans: list[BrainTurn]
    searches: list[SearchStep]
    timings: dict[str, float] = Field(description="Wall-clock seconds per stage, and in total")
    llm_usage: LlmUsage
    llm_agents: dict[str, AgentUsage] = Field(default_factory=dict, description="Model calls per agent")
    output_mode: str | None = Field(
        default=None, description="How the live model was asked for structured answers at the end of the run"
    )
    output_mode_refusals: list[str] = Field(
        default_factory=list, description="Output modes the model server refused, and what the run used instead"
    )
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
    resumed: bool = Field(default=False, description="True when the run was continued from a checkpoint")
    resumptions: list[Resumption] = Field(
        default_factory=list, description="Each time the run was resumed: when, after which stage of which iteration"
    )

    @property
    def figures(self) -> Figures:
        """The run's figures as its record holds them."""
        plots, notes = self.forest_plots, self.forest_notes
        return Figures(rows=self.study_results, flow=self.study_flow, forest_plots=plots, forest_notes=notes)

    @property
    def sources(self) -> dict[str, int]:
        """How many collected items each source returned (an item found by two sources counts for both)."""
        return count_by_source(self.evidence)


def assemble_outcome(
    deps: ResearchDeps,
    checked: CheckedReport,
    appraisal: Appraisal,
    *,
    run_id: str,
    model: str,
    started_at: datetime,
    started: float,
    stop: StopReason,
    error: str | None,
    brief_in_code: bool = False,
) -> ResearchOutcome:
    """The run's outcome from its checked report and the appraisal of the evidence it was written from
    (computed before the report stage): the verdict, the report rendered from the appraisal, and what the
    run used."""
    state, evidence = deps.state, deps.evidence
    report, audit, fallback, pool = checked.report, checked.audit, checked.fallback, checked.pool
    verdict = run_verdict(appraisal, report, evidence.items)
    report = _stated_report(deps, appraisal, verdict, report, in_code=fallback is not None or brief_in_code)
    context = _render_context(deps, appraisal, verdict, run_id=run_id, model=model, stop=stop, pool=pool)
    # One numbering: every study the report cites or counts is a reference, in run.json and the exports too,
    # named by the item its entry shows (its abstract; a passage only for a study known by passages alone).
    studies = group_studies(evidence.items[i] for i in reference_order(report, evidence.items, context))
    report = report.model_copy(update={"references": [lead(study).id for study in studies]})
    # One set of figures (rows, flow, plots) for report.md, run.json and the figure files.
    figures = build_figures(appraisal.counted, evidence.items, study_numbers(studies))
    context.figures = figures
    outcome = ResearchOutcome(
        question=state.question,
        frame=appraisal.frame,
        run_id=run_id,
        started_at=started_at.isoformat(),
        demo=deps.settings.stand_in_sources,
        model=model,
        stop_reason=stop,
        iterations=state.iteration,
        report=report,
        verdict=verdict,
        markdown="",  # written below from the document, once it is redacted
        document=build_document(report, evidence.items, context),
        report_fallback=fallback is not None,
        report_fallback_reason=fallback,
        citation_audit=audit,
        evidence=list(evidence),
        report_pool=list(pool),
        recalled_ids=evidence.recalled_ids,
        assessments=state.assessments,
        study_results=figures.rows,
        study_flow=figures.flow,
        forest_plots=figures.forest_plots,
        forest_notes=figures.forest_notes,
        report_assessment=appraisal.assessment,
        plans=state.plans,
        searches=state.searches,
        timings=_timings(state.timings, started),
        **_usage(deps),
        error=deps.redact(error) if error else None,
        settings=deps.settings.public_dict(),
    )
    # The last pass before report.md, report.json, run.json and the event stream. The Markdown is written from
    # the redacted document: a secret is one string in a text run, not one broken by Markdown's escapes.
    outcome = deps.redact.model(outcome)
    assert outcome.document is not None
    return outcome.model_copy(update={"markdown": to_markdown(outcome.document)})


def _render_context(
    deps: ResearchDeps,
    appraisal: Appraisal,
    verdict: Verdict,
    *,
    run_id: str,
    model: str,
    stop: StopReason,
    pool: Sequence[str],
) -> RenderContext:
    state, evidence = deps.state, deps.evidence
    return RenderContext(
        demo=deps.settings.stand_in_sources,
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
        pool=pool,
        verdict=verdict,
        counted=appraisal.counted,
        frame=appraisal.frame,
        reader=deps.study_reader,
    )


def _stated_report(
    deps: ResearchDeps, appraisal: Appraisal, verdict: Verdict, report: ResearchReport, *, in_code: bool
) -> ResearchReport:
    """The report as it states the appraisal: a brief and findings written in code say what the verdict weighed;
    every report's findings lead with what the verdict rests on."""
    question, items = deps.state.question, deps.evidence.items
    if items and in_code:
        # A brief written in code (the demo's, or the fallback's) says what the run's verdict weighed, from the
        # run's own counted set: the draft's was counted over the slice of text the report was written from.
        report = report.model_copy(update={"answer_brief": code_brief(question, appraisal.counted, verdict)})
        # Its findings too are the counted set's: each study quoted where its row of the table reads it, from
        # the same text (a slice may read a study another way than its whole abstract: one study, one reading).
        report = code_findings(question, report, appraisal.counted, items)
    # Findings lead with what the verdict rests on; contrary evidence is contrary to the answer.
    return findings_for_the_answer(report, verdict, items)


def _usage(deps: ResearchDeps) -> dict[str, Any]:
    """What the run asked of the language model, per agent and in all, and how it asked."""
    state, usage = deps.state, deps.budget.usage
    failed = sum(stats.failed_requests for stats in state.agents.values())
    return {
        "llm_usage": LlmUsage(
            requests=usage.requests + failed,
            failed_requests=failed,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
        ),
        "llm_agents": {
            name: AgentUsage.model_validate({**dataclasses.asdict(stats), "seconds": round(stats.seconds, 4)})
            for name, stats in sorted(state.agents.items())
        },
        "output_mode": None if deps.settings.demo_mode or deps.settings.no_llm else deps.output.current.label,
        "output_mode_refusals": [deps.redact(line) for line in deps.output.refusals],
        "errors": [deps.redact(message) for message in state.errors],
        "degraded": bool(state.degraded),
        "degraded_reasons": [deps.redact(reason) for reason in state.degraded],
    }


def _timings(measured: dict[str, float], started: float) -> dict[str, float]:
    timings = dict(measured)
    # Searches run inside the Brain's turn; planning is what the turn took besides them.
    inside = timings.get("search", 0.0) + timings.get("embedding_dedup", 0.0)
    timings["planning"] = max(timings.get("planning", 0.0) - inside, 0.0)
    timings["total"] = time.perf_counter() - started
    return {stage: round(seconds, 4) for stage, seconds in timings.items()}
