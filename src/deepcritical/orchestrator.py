"""The research loop: plan, search, judge, repeat; then report. Budgets are enforced here, in code.

    for each iteration (up to max_iterations):
        Brain plans and runs searches  -> SearchAgent -> EvidenceStore
            (if its model fails or its requests run out before it searched, queries built in code run instead)
        Judge assesses at most K items -> stop when sufficient with enough confidence
        stop early when the evidence cap or the time budget is reached, or the LLM budget or the LLM fails
    Report from the evidence collected, citations checked in code, rendered to Markdown.

``run`` streams typed progress events and always ends with ``RunFinished`` carrying the outcome, even
when the loop failed: collected evidence stays in the store and the outcome still has a cited report.
``outcome.error`` is set when the run failed: a crash, or no evidence at all because of the LLM or because
no source answered any search. Sources that answered but found nothing relevant are an empty answer, not a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Coroutine
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx
import structlog
from pydantic_ai.exceptions import ModelAPIError, UnexpectedModelBehavior, UsageLimitExceeded

from deepcritical.agents.brain import build_brain, fallback_search, plan
from deepcritical.agents.deps import Budget, ResearchDeps, RunState
from deepcritical.agents.judge import assess, build_judge
from deepcritical.agents.llm import AgentModels, resolve_models
from deepcritical.agents.outputs import StopReason
from deepcritical.agents.ports import EvidenceStoreLike, SearchHandlerLike, TermContextSource
from deepcritical.agents.report import build_report_agent
from deepcritical.agents.search_agent import SearchAgent
from deepcritical.config import Settings
from deepcritical.errors import ResearchError
from deepcritical.events import (
    IterationStarted,
    JudgeFinished,
    ProgressEvent,
    ReportWritten,
    ResearchOutcome,
    RunFinished,
    RunStarted,
    RunWarning,
)
from deepcritical.outcome import OutcomeBuilder, new_run_id

logger = structlog.get_logger(__name__)
T = TypeVar("T")
LLM_FAILURES = (ModelAPIError, UnexpectedModelBehavior)
# Stops caused by the language model; ending one of these with no evidence fails the run (``outcome.error``).
LLM_STOPS: dict[StopReason, str] = {
    "llm_failed": "the language model failed",
    "llm_budget": "the LLM request budget ran out",
}


MAX_ERROR_CHARS = 100


def no_source_answered(deps: ResearchDeps, disabled: Collection[str]) -> str:
    """One line for a run in which no source answered: each failed source's first error, shortened."""
    if not deps.state.searches:
        return "no evidence was collected: no search was run"
    failed: dict[str, str] = {}
    for step in deps.state.searches:
        for name, message in step.sources_failed.items():
            failed.setdefault(name, message)
    # Disabled sources were never asked; they are named only when no source was asked at all.
    shown = {name: message for name, message in failed.items() if name not in disabled} or failed
    details = "; ".join(_shorten(" ".join(message.split())) for message in shown.values())
    return f"no source answered any search: {details or 'no source is enabled'}"


def _shorten(text: str) -> str:
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1].rstrip() + "…"


class LoopStopError(Exception):
    """A budget ran out or the LLM failed: the loop ends and the report is written."""

    def __init__(self, reason: StopReason, message: str = "") -> None:
        super().__init__(message or reason)
        self.reason = reason


class Orchestrator:
    """Runs research questions; every call to ``run`` is an independent run with its own deps. Models
    and prompts are resolved here, at start, so a missing API key is a ConfigError before any search."""

    def __init__(
        self,
        settings: Settings,
        *,
        client: httpx.AsyncClient,
        models: AgentModels | None = None,
        store: EvidenceStoreLike | None = None,
        handler: SearchHandlerLike | None = None,
        research_engine: TermContextSource | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.settings = settings
        self.models = models or resolve_models(settings, client)  # live models talk through the run's client
        self._client = client
        self._store = store
        self._handler = handler
        self._research_engine = research_engine
        self._clock = clock
        self._sleep = sleep
        self._brain = build_brain()
        self._judge = build_judge()
        self._report = build_report_agent()

    async def research(self, question: str) -> ResearchOutcome:
        """Run to the end and return the outcome (``outcome.error`` set means the run failed)."""
        async for event in self.run(question):
            if isinstance(event, RunFinished):
                return event.outcome
        raise ResearchError("the run ended without an outcome")

    async def run(self, question: str) -> AsyncIterator[ProgressEvent]:
        """Progress events as they happen, ending with ``RunFinished``."""
        queue: asyncio.Queue[ProgressEvent | None] = asyncio.Queue()
        task = asyncio.create_task(self._produce(question, queue))
        try:
            while (event := await queue.get()) is not None:
                yield event
            await task  # surfaces a failure from before the run started (e.g. the store would not open)
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _produce(self, question: str, queue: asyncio.Queue[ProgressEvent | None]) -> None:
        run_id = new_run_id()
        try:
            with structlog.contextvars.bound_contextvars(run_id=run_id):
                await self._execute(question.strip(), run_id, queue.put_nowait)
        finally:
            queue.put_nowait(None)

    async def _sources(self) -> tuple[SearchHandlerLike, TermContextSource]:
        if self._handler is not None and self._research_engine is not None:
            return self._handler, self._research_engine
        from deepcritical.sources.factory import build_sources

        built = build_sources(self.settings, self._client)
        return self._handler or built.handler, self._research_engine or built.research_engine

    async def _open_store(self, run_id: str) -> EvidenceStoreLike:
        from deepcritical.evidence import EmbeddingService, EvidenceStore

        return await EvidenceStore.open(self.settings, EmbeddingService(self.settings.embedding_model), run_id)

    async def _execute(self, question: str, run_id: str, emit: Callable[[ProgressEvent], None]) -> None:
        if not question:
            raise ResearchError("the question is empty")
        started = time.perf_counter()
        handler, engine = await self._sources()
        store = self._store or await self._open_store(run_id)
        try:
            opened = time.perf_counter() - started
            deps = ResearchDeps(
                settings=self.settings,
                search_agent=SearchAgent(
                    handler,
                    store,
                    max_results_per_source=self.settings.max_results_per_source,
                    max_evidence=self.settings.max_evidence,
                ),
                store=store,
                research_engine=engine,
                budget=Budget.from_settings(self.settings, self._clock),
                state=RunState(question=question),
                emit=emit,
                sleep=self._sleep,
            )
            deps.state.add_time("store_open", opened)
            builder = OutcomeBuilder(deps, run_id, self.models.name, datetime.now(UTC), started)
            emit(
                RunStarted(
                    run_id=run_id,
                    question=question,
                    demo=self.settings.demo_mode,
                    model=self.models.name,
                    sources=list(handler.source_names),
                    sources_disabled=dict(handler.unavailable),
                    max_iterations=self.settings.max_iterations,
                )
            )
            outcome = await self._research(deps, builder, disabled=set(handler.unavailable))
            emit(RunFinished(outcome=outcome, error=outcome.error))
        finally:
            if self._store is None:
                await store.close()

    async def _research(
        self, deps: ResearchDeps, builder: OutcomeBuilder, *, disabled: Collection[str] = ()
    ) -> ResearchOutcome:
        error: str | None = None
        try:
            stop = await self._loop(deps)
        except Exception as exc:  # a crash keeps what was collected: it is reported, and the report still written
            logger.exception("research_loop_failed")
            error = f"{type(exc).__name__}: {exc}"
            stop = "error"
        logger.info("research_loop_stopped", reason=stop, evidence=len(deps.state.evidence))
        if error is None and not deps.state.evidence and stop in LLM_STOPS:
            # An empty report is no answer: the run failed, though it still writes its report and record.
            error = f"no evidence was collected: {LLM_STOPS[stop]}" + (
                f" ({deps.state.errors[-1]})" if deps.state.errors else ""
            )
        elif error is None and not deps.state.evidence and not any(s.sources_answered for s in deps.state.searches):
            error = no_source_answered(deps, disabled)
        report, audit, fallback = await builder.report(self._report, self.models.report, stop)
        deps.emit(
            ReportWritten(
                findings=len(report.key_findings),
                contrary=len(report.contrary_evidence),
                references=len(report.references),
                fallback=fallback is not None,
                fallback_reason=fallback,
                dropped_citations=len(audit.dropped_ids),
                repaired_citations=len(audit.repaired),
            )
        )
        return builder.outcome(stop, report, audit, fallback=fallback, error=error and deps.redact(error))

    async def _loop(self, deps: ResearchDeps) -> StopReason:
        state, budget = deps.state, deps.budget
        for iteration in range(1, budget.max_iterations + 1):
            state.iteration = iteration
            deps.emit(IterationStarted(iteration=iteration, max_iterations=budget.max_iterations))
            try:
                await self._stage(deps, "planning", plan(self._brain, deps, self.models.brain))
                if budget.expired():
                    return "time_budget"
                if not state.evidence:
                    deps.emit(RunWarning(message=f"iteration {iteration}: no evidence found yet"))
                    continue
                assessment, shown = await self._stage(deps, "judge", assess(self._judge, deps, self.models.judge))
            except LoopStopError as stop:
                if stop.reason != "time_budget" and not state.search_calls.get(iteration):
                    await self._fallback_search(deps, iteration)
                return stop.reason
            deps.emit(
                JudgeFinished(
                    iteration=iteration,
                    items_judged=shown,
                    scores=assessment.scores,
                    sufficient=assessment.sufficient,
                    confidence=assessment.confidence,
                    gaps=assessment.gaps,
                )
            )
            if assessment.sufficient and assessment.confidence >= self.settings.confidence_threshold:
                return "sufficient"
            if deps.search_agent.full:
                return "max_evidence"
            if budget.expired():
                return "time_budget"
        return "max_iterations" if state.evidence else "no_evidence"

    async def _fallback_search(self, deps: ResearchDeps, iteration: int) -> None:
        """The Brain stopped before this iteration's first search: search anyway, with queries built in
        code, so the report is written from evidence. Counted as planning, like the Brain's own searches."""
        deps.emit(
            RunWarning(
                message=f"iteration {iteration}: the Brain stopped before searching; "
                "searching with queries built in code"
            )
        )
        with contextlib.suppress(LoopStopError):  # out of time: the run keeps the Brain's stop reason
            await self._stage(deps, "planning", fallback_search(deps))

    async def _stage(self, deps: ResearchDeps, stage: str, work: Coroutine[Any, Any, T]) -> T:
        """Run one stage under the time budget; budget exhaustion and LLM failure become ``LoopStopError``."""
        remaining = deps.budget.remaining()
        if remaining <= 0:
            work.close()
            raise LoopStopError("time_budget")
        timeout = asyncio.timeout(remaining)
        try:
            with deps.state.timed(stage):
                async with timeout:
                    return await work
        except TimeoutError as error:
            if not timeout.expired():
                raise
            deps.emit(RunWarning(message=f"{stage}: stopped by the time budget"))
            raise LoopStopError("time_budget") from error
        except UsageLimitExceeded as error:
            deps.emit(RunWarning(message=f"{stage}: the LLM request budget is spent"))
            raise LoopStopError("llm_budget") from error
        except LLM_FAILURES as error:
            message = deps.record_error(stage, error)
            deps.emit(RunWarning(message=message))
            raise LoopStopError("llm_failed") from error
