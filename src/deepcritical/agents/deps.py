"""The per-run context every agent and tool reads: settings, the search stage, the run's evidence, the
store, the ResearchEngine (None when it is off), the budget, the run's state and its output mode. One
instance per run; nothing lives at module level."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cached_property

import structlog

from deepcritical.agents.messages import describe_model_error
from deepcritical.agents.output import OutputChoice
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.config import Settings
from deepcritical.events import StageEvent
from deepcritical.reading.results import ResultReader
from deepcritical.redaction import Redactor
from deepcritical.stages.collection import RunEvidence
from deepcritical.stages.ports import EvidenceStoreLike, TermContextSource
from deepcritical.stages.search import SearchStage
from deepcritical.stages.state import Budget, RunState
from deepcritical.text import collapse_whitespace

logger = structlog.get_logger(__name__)


@dataclass
class ResearchDeps:
    """Passed as ``deps`` to every agent run of one research run."""

    settings: Settings
    search: SearchStage
    store: EvidenceStoreLike
    research_engine: TermContextSource | None
    budget: Budget
    state: RunState
    emit: Callable[[StageEvent], None] = lambda _event: None
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep  # waits between LLM retries; tests inject
    redact: Redactor = field(default_factory=lambda: Redactor(()))
    output: OutputChoice = field(default_factory=OutputChoice)  # how agents ask for structured answers
    # The run's result reader (``Settings.reader``): every study of the run is read with it.
    result_reader: ResultReader = field(default_factory=ResultReader.load)

    def __post_init__(self) -> None:
        # Every event leaves the run through here: the last redaction before it is serialised.
        send = self.emit
        self.emit = lambda event: send(self.redact.model(event))

    @cached_property
    def study_reader(self) -> StudyReader:
        """The run's reader of its question's studies: each study read once, by the table, the verdict and the
        report alike."""
        return StudyReader(self.state.question, self.result_reader)

    @property
    def evidence(self) -> RunEvidence:
        return self.search.evidence

    def record_error(self, stage: str, error: BaseException) -> str:
        """Log and keep a one-line, secret-free account of a failure the run survives."""
        message = self.redact(collapse_whitespace(f"{stage}: {describe_model_error(error, self.redact)}"))
        self.state.errors.append(message)
        logger.warning("stage_failed", stage=stage, error=message)
        return message
