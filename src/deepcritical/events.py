"""Typed progress events of a research run, and its outcome. The command line renders them now; a web
page can render the same stream later (each event serialises to JSON with a ``kind`` discriminator)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from deepcritical.agents.citations import CitationAudit
from deepcritical.agents.outputs import Assessment, BrainTurn, FallbackReason, ResearchReport, StopReason
from deepcritical.agents.search_agent import SearchStep
from deepcritical.models import Evidence


class LlmUsage(BaseModel):
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
    assessments: list[Assessment]
    plans: list[BrainTurn]
    searches: list[SearchStep]
    timings: dict[str, float] = Field(description="Wall-clock seconds per stage, and in total")
    llm_usage: LlmUsage
    errors: list[str]
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
        counts: dict[str, int] = {}
        for item in self.evidence:
            for name in item.found_by:
                counts[name] = counts.get(name, 0) + 1
        return dict(sorted(counts.items()))


class RunStarted(BaseModel):
    """``sources``: the sources the run searches; ``sources_disabled``: the ones it does not, and why."""

    kind: Literal["run_started"] = "run_started"
    run_id: str
    question: str
    demo: bool
    model: str
    sources: list[str]
    sources_disabled: dict[str, str] = Field(default_factory=dict)
    max_iterations: int


class IterationStarted(BaseModel):
    kind: Literal["iteration_started"] = "iteration_started"
    iteration: int
    max_iterations: int


class QueriesPlanned(BaseModel):
    kind: Literal["queries_planned"] = "queries_planned"
    iteration: int
    queries: list[str]


class SearchFinished(BaseModel):
    kind: Literal["search_finished"] = "search_finished"
    iteration: int
    queries: list[str]
    sources_answered: list[str]
    sources_failed: dict[str, str]
    found: int
    kept: int
    deduplicated: int
    related: int
    total_evidence: int
    capped: bool


class JudgeFinished(BaseModel):
    kind: Literal["judge_finished"] = "judge_finished"
    iteration: int
    items_judged: int
    scores: dict[str, int]
    sufficient: bool
    confidence: float
    gaps: list[str]


class ReportWritten(BaseModel):
    """``fallback``: the report was built in code; ``fallback_reason`` says why (``FALLBACK_EXPLANATIONS``
    in ``deepcritical.agents.outputs`` has a phrase for each reason)."""

    kind: Literal["report_written"] = "report_written"
    findings: int
    contrary: int
    references: int
    fallback: bool
    fallback_reason: FallbackReason | None = None
    dropped_citations: int
    repaired_citations: int


class RunWarning(BaseModel):
    """Something went wrong that the run survived (a source down, a judge that failed)."""

    kind: Literal["warning"] = "warning"
    message: str


class RunFinished(BaseModel):
    kind: Literal["run_finished"] = "run_finished"
    outcome: ResearchOutcome
    error: str | None = None


ProgressEvent = Annotated[
    RunStarted
    | IterationStarted
    | QueriesPlanned
    | SearchFinished
    | JudgeFinished
    | ReportWritten
    | RunWarning
    | RunFinished,
    Field(discriminator="kind"),
]
