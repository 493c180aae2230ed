"""Typed progress events that the stages emit while a run goes on. Each serialises to JSON with a
``kind`` discriminator, so the command line, a web page or an MCP client can render the same stream.
The event that ends a run, carrying its outcome, is ``deepcritical.run.events.RunFinished``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from deepcritical.outputs import FallbackReason


class RunStarted(BaseModel):
    """``sources``: the sources the run searches; ``sources_disabled``: the ones it does not, and why.
    ``demo``: the sources are the synthetic stand-ins; ``output_mode``: how a live model is asked for its
    structured answers (None for the demo's stand-in models)."""

    kind: Literal["run_started"] = "run_started"
    run_id: str
    question: str
    demo: bool
    model: str
    sources: list[str]
    sources_disabled: dict[str, str] = Field(default_factory=dict)
    max_iterations: int
    output_mode: str | None = None


class IterationStarted(BaseModel):
    kind: Literal["iteration_started"] = "iteration_started"
    iteration: int
    max_iterations: int


class QueriesPlanned(BaseModel):
    kind: Literal["queries_planned"] = "queries_planned"
    iteration: int
    queries: list[str]
    by: Literal["model", "code"] = Field(
        default="model", description="``code``: the queries were built in code because the Brain did not search"
    )


class SearchFinished(BaseModel):
    """``related``: items recalled from the library of earlier runs, counted apart from what the
    sources found in this run."""

    kind: Literal["search_finished"] = "search_finished"
    iteration: int
    queries: list[str]
    sources_answered: list[str]
    sources_failed: dict[str, str]
    found: int
    kept: int
    deduplicated: int = Field(description="Items dropped as duplicates in meaning of stored evidence")
    related: int
    total_evidence: int
    capped: bool
    # The run's evidence so far in the study flow's terms (``appraisal.studies.record_counts``): the log and the
    # PRISMA diagram state one count of records and duplicates.
    records_identified: int = 0
    duplicates_removed: int = 0


class JudgeFinished(BaseModel):
    """``by``: ``code`` when the Judge's model failed and the assessment was computed in code."""

    kind: Literal["judge_finished"] = "judge_finished"
    iteration: int
    items_judged: int
    scores: dict[str, int]
    sufficient: bool
    confidence: float
    gaps: list[str]
    by: Literal["model", "code"] = "model"


class ReportWritten(BaseModel):
    """``fallback``: the report was built in code; ``fallback_reason`` says why (``FALLBACK_EXPLANATIONS``
    in ``deepcritical.outputs`` has a phrase for each reason)."""

    kind: Literal["report_written"] = "report_written"
    findings: int
    contrary: int
    references: int
    fallback: bool
    fallback_reason: FallbackReason | None = None
    dropped_citations: int
    repaired_citations: int


class RunWarning(BaseModel):
    """Something went wrong that the run survived (a source down, a judge that failed); or, as a ``note``,
    something the run did that a reader should know of (what full text it read)."""

    kind: Literal["warning"] = "warning"
    message: str
    level: Literal["warning", "note"] = "warning"


StageEvent = Annotated[
    RunStarted | IterationStarted | QueriesPlanned | SearchFinished | JudgeFinished | ReportWritten | RunWarning,
    Field(discriminator="kind"),
]
