"""The whole progress stream of a run: the stages' events, then ``RunFinished`` with the outcome."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from deepcritical.events import (
    IterationStarted,
    JudgeFinished,
    QueriesPlanned,
    ReportWritten,
    RunStarted,
    RunWarning,
    SearchFinished,
)
from deepcritical.run.outcome import ResearchOutcome


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
