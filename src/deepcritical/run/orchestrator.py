"""The research loop: plan, search, judge, repeat; then report. Budgets are enforced here, in code.

    for each iteration (up to max_iterations):
        plan    the Brain plans and searches through the search stage
                (if it ran no search, queries built in code run instead: the one fallback path)
        judge   the Judge assesses at most K items (if its model fails, an assessment computed in code)
        stop when sufficient with enough confidence, at the evidence cap, when the time or LLM request
        budget is spent, or after repeated consecutive model failures
    report  from the evidence collected, citations checked in code, rendered to Markdown

``run`` streams typed progress events and always ends with ``RunFinished`` carrying the outcome, even
when the loop crashed: collected evidence stays in the store and the outcome still has a cited report.
``outcome.error`` is set when the run failed; ``outcome.degraded`` when part of the model's work was done
in code because the model failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

import httpx2
import structlog
from pydantic_ai.exceptions import ModelAPIError, UnexpectedModelBehavior, UsageLimitExceeded

from deepcritical.agents.brain import Planner
from deepcritical.agents.deps import ResearchDeps
from deepcritical.agents.judge import Judge
from deepcritical.agents.models import AgentModels, check_endpoint
from deepcritical.agents.output import OutputChoice
from deepcritical.agents.report import Reporter
from deepcritical.config import Settings
from deepcritical.errors import DeepCriticalError, ResearchError
from deepcritical.events import IterationStarted, JudgeFinished, ReportWritten, RunStarted, RunWarning, StageEvent
from deepcritical.outputs import BrainTurn, Judgement, StopReason
from deepcritical.redaction import Redactor
from deepcritical.run import code_only, setup
from deepcritical.run.events import ProgressEvent, RunFinished
from deepcritical.run.fulltext import read_key_full_texts
from deepcritical.run.outcome import ResearchOutcome, assemble_outcome, new_run_id
from deepcritical.run.report import ReportWriter, write_report
from deepcritical.stages.assessment import code_assessment
from deepcritical.stages.collection import RunEvidence
from deepcritical.stages.framing import EvidenceView
from deepcritical.stages.ports import EvidenceStoreLike, SearchHandlerLike, TermContextSource
from deepcritical.stages.search import SearchStage
from deepcritical.stages.state import Budget, RunState
from deepcritical.text import one_line

logger = structlog.get_logger(__name__)
T = TypeVar("T")
LLM_FAILURES = (ModelAPIError, UnexpectedModelBehavior)
# One failed model call is survived (code stands in); this many in a row mean the model cannot do the work.
MAX_CONSECUTIVE_MODEL_FAILURES = 3
# Stops caused by the language model; ending one of these with no evidence fails the run (``outcome.error``).
LLM_STOPS: dict[StopReason, str] = {
    "llm_failed": "the language model failed",
    "llm_budget": "the LLM request budget ran out",
}
MAX_ERROR_CHARS = 100

Planning = Callable[[ResearchDeps], Awaitable[BrainTurn]]
Judging = Callable[[ResearchDeps], Awaitable[Judgement]]
StoreOpener = Callable[[Settings, str], Awaitable[EvidenceStoreLike]]


@dataclass(frozen=True)
class Stages:
    """The loop's swappable units: each takes the run's deps and returns a typed result."""

    plan: Planning
    judge: Judging
    report: ReportWriter

    @classmethod
    def with_agents(cls, models: AgentModels, *, term_lookups: bool) -> Stages:
        return cls(
            plan=Planner(models.brain, term_lookups=term_lookups),
            judge=Judge(models.judge),
            report=Reporter(models.report),
        )

    @classmethod
    def in_code(cls) -> Stages:
        """No model at all (``--no-llm``): the code planner, judge and extractive report."""
        return cls(plan=code_only.plan_in_code, judge=code_only.judge_in_code, report=code_only.report_in_code)


class LoopStopError(Exception):
    """A budget ran out or the model kept failing: the loop ends and the report is written."""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason)
        self.reason = reason


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1].rstrip() + "…"


def no_source_answered(state: RunState) -> str:
    """One line for a run in which no source answered: each failed source's first error, shortened."""
    if not state.searches:
        return "no search was run"
    details = "; ".join(_shorten(message) for message in state.failed_sources().values())
    return f"no source answered any search: {details or 'no source is enabled'}"


class Orchestrator:
    """Runs research questions; every call to ``run`` is an independent run with its own deps. Models
    and prompts are resolved here, at start, so a missing API key is a ConfigError before any search."""

    def __init__(
        self,
        settings: Settings,
        *,
        client: httpx2.AsyncClient,
        models: AgentModels | None = None,
        store: EvidenceStoreLike | None = None,
        open_store: StoreOpener = setup.open_store,
        handler: SearchHandlerLike | None = None,
        research_engine: TermContextSource | None = None,
        stages: Stages | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.settings = settings
        self._client = client
        self._store = store
        self._open_store = open_store
        if handler is None:
            built = setup.sources(settings, client)
            handler, research_engine = built.handler, research_engine or built.research_engine
        self._handler = handler
        self._research_engine = research_engine
        self.models = models or setup.models(settings, client)  # live models talk through the run's client
        self.stages = stages or (
            Stages.in_code()
            if settings.no_llm
            else Stages.with_agents(self.models, term_lookups=research_engine is not None)
        )
        self._clock = clock
        self._sleep = sleep

    async def research(self, question: str) -> ResearchOutcome:
        """Run to the end and return the outcome (``outcome.error`` set means the run failed)."""
        async for event in self.run(question):
            if isinstance(event, RunFinished):
                return event.outcome
        raise ResearchError("the run ended without an outcome")

    async def run(self, question: str, *, run_id: str | None = None) -> AsyncIterator[ProgressEvent]:
        """Progress events as they happen, ending with ``RunFinished``."""
        queue: asyncio.Queue[ProgressEvent | None] = asyncio.Queue()
        # Control characters would reach the report's heading and the terminal: the question is one clean line.
        task = asyncio.create_task(self._produce(one_line(question), run_id or new_run_id(), queue))
        try:
            while (event := await queue.get()) is not None:
                yield event
            await task  # surfaces a failure from before the run started (e.g. the store would not open)
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _produce(self, question: str, run_id: str, queue: asyncio.Queue[ProgressEvent | None]) -> None:
        try:
            with structlog.contextvars.bound_contextvars(run_id=run_id):
                if not question:
                    raise ResearchError("the question is empty")
                if self.models.endpoint is not None:  # before any search: is the model server there at all?
                    await check_endpoint(self.models.endpoint, self._client)
                started, started_at = time.perf_counter(), datetime.now(UTC)
                store = self._store or await self._open_store(self.settings, run_id)
                try:
                    deps = self._deps(question, store, queue.put_nowait)
                    deps.state.add_time("store_open", time.perf_counter() - started)
                    deps.emit(
                        RunStarted(
                            run_id=run_id,
                            question=question,
                            demo=self.settings.stand_in_sources,
                            model=self.models.name,
                            output_mode=None
                            if self.settings.demo_mode or self.settings.no_llm
                            else deps.output.current.label,
                            sources=list(self._handler.source_names),
                            sources_disabled=dict(self._handler.unavailable),
                            max_iterations=self.settings.max_iterations,
                        )
                    )
                    stop, error = await self._research(deps)
                    if self._store is None and deps.evidence and self.settings.fulltext_max_articles:
                        await self._read_full_texts(deps)
                    checked = await write_report(deps, self.stages.report, stop)
                    report, audit = checked.report, checked.audit
                    deps.emit(
                        ReportWritten(
                            findings=len(report.key_findings),
                            contrary=len(report.contrary_evidence),
                            references=len(report.references),
                            fallback=checked.fallback is not None,
                            fallback_reason=checked.fallback,
                            dropped_citations=len(audit.dropped_ids),
                            repaired_citations=len(audit.repaired),
                        )
                    )
                    outcome = assemble_outcome(
                        deps,
                        run_id=run_id,
                        model=self.models.name,
                        started_at=started_at,
                        started=started,
                        stop=stop,
                        report=checked.report,
                        audit=checked.audit,
                        fallback=checked.fallback,
                        error=error or checked.crash,
                        pool=checked.pool,
                    )
                    queue.put_nowait(RunFinished(outcome=outcome, error=outcome.error))
                finally:
                    if self._store is None:
                        await store.close()
        finally:
            queue.put_nowait(None)

    async def _read_full_texts(self, deps: ResearchDeps) -> None:
        """The key studies' full text for the Report (``run.fulltext``); a failure keeps the abstracts."""
        with deps.state.timed("full_text"):
            try:
                report, added = await read_key_full_texts(
                    self.settings, self._client, deps.evidence, deps.state.question
                )
            except DeepCriticalError as error:
                deps.emit(RunWarning(message=f"full text not read, abstracts kept: {error}"))
                return
        deps.emit(RunWarning(message=f"{report.summary} {len(added)} passage(s) bearing on the question added."))

    def _deps(self, question: str, store: EvidenceStoreLike, emit: Callable[[StageEvent], None]) -> ResearchDeps:
        settings = self.settings
        state, budget = RunState(question=question), Budget.from_settings(settings, self._clock)
        evidence = RunEvidence(store, max_evidence=settings.max_evidence)
        search = SearchStage(
            self._handler,
            store,
            evidence,
            state,
            budget,
            emit=emit,
            max_results_per_source=settings.max_results_per_source,
            recall=settings.recall,
        )
        return ResearchDeps(
            settings=settings,
            search=search,
            store=store,
            research_engine=self._research_engine,
            budget=budget,
            state=state,
            emit=emit,
            sleep=self._sleep,
            redact=Redactor.for_settings(settings),
            output=OutputChoice(self.models.output_modes),
        )

    async def _research(self, deps: ResearchDeps) -> tuple[StopReason, str | None]:
        """The loop's stop reason, and the run's error if it failed."""
        try:
            stop = await self._loop(deps)
        except Exception as exc:  # a crash keeps what was collected: it is reported, and the report still written
            logger.exception("research_loop_failed")
            return "error", f"{type(exc).__name__}: {exc}"
        state = deps.state
        logger.info("research_loop_stopped", reason=stop, evidence=len(deps.evidence))
        if deps.evidence.found:
            return stop, None
        # Evidence recalled from earlier runs never makes a run succeed on its own.
        sources_down = not any(step.sources_answered for step in state.searches)
        # The model is named when it stopped the loop, or when its last call failed (it failed on every call
        # while the loop ran out of iterations with nothing found).
        model_down = stop in LLM_STOPS or state.model_failures > 0
        model = LLM_STOPS.get(stop, "the language model failed") + (f" ({state.errors[-1]})" if state.errors else "")
        if model_down and sources_down:  # both are named: fixing one alone would not make the run work
            return stop, f"no evidence was collected: {model}; and {no_source_answered(state)}"
        if model_down:
            return stop, f"no evidence was collected: {model}"
        return stop, no_source_answered(state) if sources_down else None

    async def _loop(self, deps: ResearchDeps) -> StopReason:
        state, budget, evidence = deps.state, deps.budget, deps.evidence
        for iteration in range(1, budget.max_iterations + 1):
            state.iteration = iteration
            deps.emit(IterationStarted(iteration=iteration, max_iterations=budget.max_iterations))
            try:
                await self._plan(deps)
                if budget.expired():
                    return "time_budget"
                if not evidence:
                    deps.emit(RunWarning(message=f"iteration {iteration}: no evidence found yet"))
                    continue
                judgement = await self._stage(deps, "judge", self.stages.judge(deps)) or await self._code_judge(deps)
            except LoopStopError as stop:
                return stop.reason
            assessment = judgement.assessment
            state.assessments.append(assessment)
            deps.emit(
                JudgeFinished(
                    iteration=iteration,
                    items_judged=judgement.items_judged,
                    scores=assessment.scores,
                    sufficient=assessment.sufficient,
                    confidence=assessment.confidence,
                    gaps=assessment.gaps,
                    by=judgement.by,
                )
            )
            # Only the Judge's own verdict ends the research: keyword coverage computed in code is too weak a
            # signal to stop on, so a run whose Judge failed goes on searching while its budgets allow.
            confident = assessment.confidence >= self.settings.confidence_threshold
            if judgement.by == "model" and assessment.sufficient and confident:
                return "sufficient"
            if evidence.full:
                return "max_evidence"
            if budget.expired():
                return "time_budget"
        return "max_iterations" if evidence else "no_evidence"

    async def _plan(self, deps: ResearchDeps) -> None:
        """The Brain's turn; if it ran no search (its model failed, its requests ran out, or it just did
        not), queries built in code run instead, so every iteration searches."""
        try:
            await self._stage(deps, "planning", self.stages.plan(deps))
        except LoopStopError as stop:
            if stop.reason != "time_budget":
                await self._search_in_code(deps)
            raise
        await self._search_in_code(deps)

    async def _search_in_code(self, deps: ResearchDeps) -> None:
        iteration = deps.state.iteration
        if deps.state.searched_in(iteration):
            return
        reason = f"iteration {iteration}: the Brain ran no search; searching with queries built in code"
        deps.emit(RunWarning(message=reason))
        deps.state.degraded.append(reason)
        deps.state.agent("brain").fallbacks += 1
        with contextlib.suppress(LoopStopError):  # out of time: the run keeps the stop reason it has
            await self._stage(deps, "planning", deps.search.fallback(), model=False)

    async def _code_judge(self, deps: ResearchDeps) -> Judgement:
        items = await deps.evidence.select(deps.state.question, deps.settings.judge_max_items)
        assessment = code_assessment(deps.state.question, [EvidenceView.of(item) for item in items])
        reason = f"iteration {deps.state.iteration}: the Judge's model failed; the assessment was computed in code"
        deps.state.degraded.append(reason)
        deps.state.agent("judge").fallbacks += 1
        deps.emit(RunWarning(message=reason))
        return Judgement(assessment=assessment, items_judged=len(items), by="code")

    async def _stage(self, deps: ResearchDeps, stage: str, work: Awaitable[T], *, model: bool = True) -> T | None:
        """Run one stage under the time budget. Budget exhaustion raises ``LoopStopError``; a model failure
        is recorded and gives None, unless it is the last of ``MAX_CONSECUTIVE_MODEL_FAILURES`` in a row."""
        remaining = deps.budget.remaining()
        if remaining <= 0:
            if inspect.iscoroutine(work):
                work.close()
            raise LoopStopError("time_budget")
        timeout = asyncio.timeout(remaining)
        try:
            with deps.state.timed(stage):
                async with timeout:
                    result = await work
        except TimeoutError as error:
            if not timeout.expired():
                raise
            deps.emit(RunWarning(message=f"{stage}: stopped by the time budget"))
            raise LoopStopError("time_budget") from error
        except UsageLimitExceeded as error:
            deps.emit(RunWarning(message=f"{stage}: the LLM request budget is spent"))
            raise LoopStopError("llm_budget") from error
        except LLM_FAILURES as error:
            deps.emit(RunWarning(message=deps.record_error(stage, error)))
            deps.state.model_failures += 1
            if deps.state.model_failures >= MAX_CONSECUTIVE_MODEL_FAILURES:
                raise LoopStopError("llm_failed") from error
            return None
        if model:
            deps.state.model_failures = 0
        return result
