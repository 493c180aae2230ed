"""The per-run context every agent and tool reads: settings, the search step, the store, the
ResearchEngine, the budget and the run's state. One instance per run; nothing lives at module level."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog
from pydantic_ai.usage import RunUsage, UsageLimits

from deepcritical.agents.outputs import Assessment, BrainTurn
from deepcritical.agents.ports import EvidenceStoreLike, TermContextSource
from deepcritical.agents.search_agent import SearchAgent, SearchStep
from deepcritical.config import Settings
from deepcritical.models import Evidence

if TYPE_CHECKING:  # events import the agents' types; at run time only the annotation needs it
    from deepcritical.events import ProgressEvent

logger = structlog.get_logger(__name__)

# The report needs its own share of the budgets, or a loop that used everything leaves no report.
REPORT_TIME_SHARE = 0.2
REPORT_REQUEST_RESERVE = 3
# A Brain usually spends its first request on background lookups and searches in its second; a loop
# left with one request would end every run before its first search.
MIN_LOOP_REQUESTS = 2


@dataclass
class Budget:
    """Limits enforced in code. ``deadline`` ends the research loop; ``report_deadline`` ends the run."""

    max_iterations: int
    max_evidence: int
    deadline: float
    report_deadline: float
    max_llm_requests: int
    usage: RunUsage = field(default_factory=RunUsage)
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def from_settings(cls, settings: Settings, clock: Callable[[], float] = time.monotonic) -> Budget:
        start = clock()
        return cls(
            max_iterations=settings.max_iterations,
            max_evidence=settings.max_evidence,
            deadline=start + settings.max_seconds * (1 - REPORT_TIME_SHARE),
            report_deadline=start + settings.max_seconds,
            max_llm_requests=settings.max_llm_requests,
            clock=clock,
        )

    def remaining(self, *, report: bool = False) -> float:
        return (self.report_deadline if report else self.deadline) - self.clock()

    def expired(self) -> bool:
        return self.remaining() <= 0

    def loop_requests(self) -> int:
        """The loop's share of the requests: all but the report's reserve, yet at least
        ``MIN_LOOP_REQUESTS`` as long as the report keeps one (and never less than one)."""
        total = self.max_llm_requests
        return max(total - REPORT_REQUEST_RESERVE, min(MIN_LOOP_REQUESTS, total - 1), 1)

    def usage_limits(self, *, report: bool = False) -> UsageLimits:
        """Request limits counted on the run's shared usage; the loop leaves a reserve for the report."""
        return UsageLimits(request_limit=self.max_llm_requests if report else self.loop_requests())


@dataclass
class RunState:
    """What the run has done so far."""

    question: str
    iteration: int = 0
    queries_run: list[str] = field(default_factory=list)
    evidence: dict[str, Evidence] = field(default_factory=dict)
    assessments: list[Assessment] = field(default_factory=list)
    plans: list[BrainTurn] = field(default_factory=list)
    searches: list[SearchStep] = field(default_factory=list)
    term_contexts: dict[str, str] = field(default_factory=dict)
    search_calls: dict[int, int] = field(default_factory=dict)  # iteration -> searches run in it
    timings: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def add_time(self, stage: str, seconds: float) -> None:
        self.timings[stage] = self.timings.get(stage, 0.0) + seconds

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add_time(stage, time.perf_counter() - started)

    def collect(self, items: Iterable[Evidence]) -> None:
        for item in items:
            self.evidence[item.id] = self.evidence[item.id].merged_with(item) if item.id in self.evidence else item

    def is_new_query(self, query: str) -> bool:
        return query.strip().lower() not in {done.lower() for done in self.queries_run}

    @property
    def last_assessment(self) -> Assessment | None:
        return self.assessments[-1] if self.assessments else None


@dataclass
class ResearchDeps:
    """Passed as ``deps`` to every agent run of one research run."""

    settings: Settings
    search_agent: SearchAgent
    store: EvidenceStoreLike
    research_engine: TermContextSource
    budget: Budget
    state: RunState
    emit: Callable[[ProgressEvent], None] = lambda _event: None
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep  # waits between LLM retries; tests inject

    def redact(self, text: str) -> str:
        """``text`` with every configured secret blanked out (provider errors may echo a request)."""
        for secret in (
            self.settings.google_api_key,
            self.settings.openai_api_key,
            self.settings.anthropic_api_key,
            self.settings.ncbi_api_key,
            self.settings.you_api_key,
        ):
            if secret is not None and len(value := secret.get_secret_value()) >= 4:
                text = text.replace(value, "***")
        return text

    def record_error(self, stage: str, error: BaseException) -> str:
        """Log and keep a one-line, secret-free account of a failure the run survives."""
        message = self.redact(f"{stage}: {type(error).__name__}: {error}")
        self.state.errors.append(message)
        logger.warning("stage_failed", stage=stage, error=message)
        return message
