"""What a run has done so far, and the limits it runs within. One of each per run."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pydantic_ai.usage import RunUsage, UsageLimits

from deepcritical.config import Settings
from deepcritical.outputs import Assessment, BrainTurn, SearchStep

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
class AgentStats:
    """What one agent's model calls came to in a run. ``requests`` counts every request sent, failed ones
    included (``failed_requests``); ``outputs_refused`` counts answers that did not fit the output schema
    (each sent back to the model, or the end of the call); ``fallbacks`` counts the times code did the agent's
    work because its model failed."""

    calls: int = 0
    requests: int = 0
    failed_requests: int = 0
    outputs_validated: int = 0
    outputs_refused: int = 0
    fallbacks: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0


@dataclass
class RunState:
    """What the run has done so far (its evidence is owned by ``RunEvidence``, not kept here).
    ``degraded`` lists each piece of the model's work that was done in code instead, and why."""

    question: str
    iteration: int = 0
    queries_run: list[str] = field(default_factory=list)
    assessments: list[Assessment] = field(default_factory=list)
    plans: list[BrainTurn] = field(default_factory=list)
    searches: list[SearchStep] = field(default_factory=list)
    term_contexts: dict[str, str] = field(default_factory=dict)
    search_calls: dict[int, int] = field(default_factory=dict)  # iteration -> searches run in it
    timings: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)
    full_text_read: bool = False  # the key studies' full text was read (once a run: before the first Judge)
    model_failures: int = 0  # consecutive failed model calls; a successful one resets it
    agents: dict[str, AgentStats] = field(default_factory=dict)  # agent name -> what its model calls came to

    def agent(self, name: str) -> AgentStats:
        return self.agents.setdefault(name, AgentStats())

    def add_time(self, stage: str, seconds: float) -> None:
        self.timings[stage] = self.timings.get(stage, 0.0) + seconds

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add_time(stage, time.perf_counter() - started)

    def is_new_query(self, query: str) -> bool:
        return query.strip().lower() not in {done.lower() for done in self.queries_run}

    def searched_in(self, iteration: int) -> bool:
        return self.search_calls.get(iteration, 0) > 0

    @property
    def last_assessment(self) -> Assessment | None:
        return self.assessments[-1] if self.assessments else None

    def failed_sources(self) -> dict[str, str]:
        """Each source that failed a search in this run, with its first error."""
        failed: dict[str, str] = {}
        for step in self.searches:
            for name, error in step.sources_failed.items():
                failed.setdefault(name, error)
        return failed
