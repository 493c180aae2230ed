"""The research loop: plan, search, judge, repeat; then report. Budgets are enforced here, in code.

    for each iteration (up to max_iterations):
        plan    the Brain plans and searches through the search stage (code half: queries built in code)
        judge   the Judge assesses at most K items (code half: an assessment computed in code)
        stop when sufficient with enough confidence, at the evidence cap, when the time or LLM request
        budget is spent, or after repeated consecutive model failures
    appraise the items the report is written from are chosen and appraised: the verdict, in code
    report  from those items, given the verdict, citations checked in code (code half: an extractive report)

Each stage runs through ``run.stage.run_stage``, which spends the budget, classifies a failure and records
a degradation; the orchestrator only decides when to stop. It receives its parts (``run.setup.assemble``).

``run`` streams typed progress events and always ends with ``RunFinished`` carrying the outcome, even
when the loop crashed: collected evidence stays in the store and the outcome still has a cited report.
``outcome.error`` is set when the run failed; ``outcome.degraded`` when part of the model's work was done
in code because the model failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import structlog

from deepcritical.agents.deps import ResearchDeps
from deepcritical.agents.models import check_endpoint
from deepcritical.agents.output import OutputChoice
from deepcritical.errors import DeepCriticalError, DiskFullError, ResearchError
from deepcritical.events import IterationStarted, JudgeFinished, RunStarted, RunWarning, StageEvent
from deepcritical.outputs import StopReason
from deepcritical.run.checkpoint import RESUMABLE, Checkpoint, CheckpointSink, capture, restore
from deepcritical.run.events import ProgressEvent, RunFinished
from deepcritical.run.fulltext import read_key_full_texts
from deepcritical.run.outcome import CheckpointStage, ResearchOutcome, Resumption, assemble_outcome, new_run_id
from deepcritical.run.report import CheckedReport, appraise_pool, report_written, write_report
from deepcritical.run.setup import RunParts
from deepcritical.run.stage import LoopStopError, run_stage
from deepcritical.stages.collection import RunEvidence
from deepcritical.stages.ports import EvidenceStoreLike
from deepcritical.stages.search import SearchStage
from deepcritical.stages.state import Budget, RunState
from deepcritical.text import one_line, quantity, shorten

logger = structlog.get_logger(__name__)
# Stops caused by the language model; ending one of these with no evidence fails the run (``outcome.error``).
LLM_STOPS: dict[StopReason, str] = {
    "llm_failed": "the language model failed",
    "llm_budget": "the LLM request budget ran out",
}
MAX_ERROR_CHARS = 100


def no_source_answered(state: RunState) -> str:
    """One line for a run in which no source answered: each failed source's first error, shortened."""
    if not state.searches:
        return "no search was run"
    details = "; ".join(shorten(message, MAX_ERROR_CHARS) for message in state.failed_sources().values())
    return f"no source answered any search: {details or 'no source is enabled'}"


@dataclass
class _Progress:
    """Where one run is, for its checkpoints: written through ``sink`` after every stage."""

    run_id: str
    started_at: datetime
    started: float
    sink: CheckpointSink | None
    resumed: Checkpoint | None = None
    resumptions: list[Resumption] | None = None

    async def save(
        self,
        deps: ResearchDeps,
        stage: CheckpointStage,
        *,
        stop: StopReason | None = None,
        loop_error: str | None = None,
        report: CheckedReport | None = None,
    ) -> None:
        if self.sink is None:
            return
        checkpoint = capture(
            deps,
            run_id=self.run_id,
            started_at=self.started_at,
            elapsed=time.perf_counter() - self.started,
            stage=stage,
            stop=stop,
            loop_error=loop_error,
            report=report,
            resumptions=self.resumptions,
        )
        await self.sink(checkpoint)


class Orchestrator:
    """Runs research questions on the parts it is given; every call to ``run`` is an independent run with
    its own deps."""

    def __init__(self, parts: RunParts) -> None:
        self.parts = parts
        self.settings = parts.settings
        self.stages = parts.stages

    async def research(self, question: str) -> ResearchOutcome:
        """Run to the end and return the outcome (``outcome.error`` set means the run failed)."""
        async for event in self.run(question):
            if isinstance(event, RunFinished):
                return event.outcome
        raise ResearchError("the run ended without an outcome")

    async def run(
        self,
        question: str,
        *,
        run_id: str | None = None,
        checkpoint: CheckpointSink | None = None,
        resume: Checkpoint | None = None,
    ) -> AsyncIterator[ProgressEvent]:
        """Progress events as they happen, ending with ``RunFinished``. ``checkpoint`` receives the run's
        state after every stage; ``resume`` continues the run a checkpoint saved (its question and id win)."""
        queue: asyncio.Queue[ProgressEvent | None] = asyncio.Queue()
        if resume is not None:
            question, run_id = resume.question, resume.run_id
        # Control characters would reach the report's heading and the terminal: the question is one clean line.
        produce = self._produce(one_line(question), run_id or new_run_id(), queue, checkpoint, resume)
        task = asyncio.create_task(produce)
        try:
            while (event := await queue.get()) is not None:
                yield event
            await task  # surfaces a failure from before the run started (e.g. the store would not open)
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _produce(
        self,
        question: str,
        run_id: str,
        queue: asyncio.Queue[ProgressEvent | None],
        sink: CheckpointSink | None,
        resume: Checkpoint | None,
    ) -> None:
        try:
            with structlog.contextvars.bound_contextvars(run_id=run_id):
                if not question:
                    raise ResearchError("the question is empty")
                parts = self.parts
                if parts.models is not None and parts.models.endpoint is not None:  # is the model server there?
                    await check_endpoint(parts.models.endpoint, parts.client)
                started, started_at = time.perf_counter(), datetime.now(UTC)
                progress = _Progress(run_id, started_at, started, sink)
                # Said before the store opens: opening it waits for other runs' store sessions, and a
                # server's concurrent runs should each show they started at once.
                queue.put_nowait(self._started(question, run_id))
                store = parts.store or await parts.open_store(self.settings, run_id, question)
                try:
                    deps = self._deps(question, store, queue.put_nowait)
                    if resume is not None:
                        await self._resume(deps, progress, resume)
                    deps.state.add_time("store_open", time.perf_counter() - started)
                    deps.search.after_step = lambda: progress.save(deps, "search")
                    if resume is not None:
                        deps.emit(self._resumed_note(deps, resume))
                    if resume is not None and resume.stop is not None:  # the loop had ended before the kill
                        stop, error = resume.stop, resume.loop_error
                    else:
                        stop, error = await self._research(deps, progress)
                        await progress.save(deps, "judge", stop=stop, loop_error=error)
                    if resume is not None and resume.report is not None:
                        checked = resume.report.checked()
                    else:
                        if self._reads_full_text(deps):  # the loop ended before any Judge
                            await self._read_full_texts(deps)
                        checked = await write_report(deps, self.stages.report, stop)
                        await progress.save(deps, "report", stop=stop, loop_error=error, report=checked)
                    outcome = await self._outcome(deps, progress, run_id, stop, error or checked.crash, checked)
                    queue.put_nowait(RunFinished(outcome=outcome, error=outcome.error))
                finally:
                    if parts.store is None:
                        await store.close()
        finally:
            queue.put_nowait(None)

    async def _outcome(
        self,
        deps: ResearchDeps,
        progress: _Progress,
        run_id: str,
        stop: StopReason,
        error: str | None,
        checked: CheckedReport,
    ) -> ResearchOutcome:
        """The run's outcome from its checked report; a report restored from a checkpoint has no appraisal with
        it, so the same one is computed from its pool."""
        appraisal = checked.appraisal
        if appraisal is None:
            appraisal = await asyncio.to_thread(appraise_pool, deps, checked.pool)
        outcome = await asyncio.to_thread(  # CPU-bound (0.1 s): off a server's shared event loop
            assemble_outcome,
            deps,
            checked,
            appraisal,
            run_id=run_id,
            model=self.parts.model_name,
            started_at=progress.started_at,
            started=progress.started,
            stop=stop,
            error=error,
            brief_in_code=self.parts.models is not None and self.parts.models.report_in_code,
        )
        deps.emit(report_written(outcome.report, checked))  # its references: the report's numbered list
        if progress.resumptions:
            outcome = outcome.model_copy(update={"resumed": True, "resumptions": progress.resumptions})
        return outcome

    def _started(self, question: str, run_id: str) -> RunStarted:
        parts = self.parts
        live_output = parts.models is not None and not self.settings.demo_mode
        return RunStarted(
            run_id=run_id,
            question=question,
            demo=self.settings.stand_in_sources,
            model=parts.model_name,
            output_mode=OutputChoice(parts.models.output_modes).current.label if live_output and parts.models else None,
            sources=list(parts.handler.source_names),
            sources_disabled=dict(parts.handler.unavailable),
            max_iterations=self.settings.max_iterations,
        )

    @staticmethod
    def _resumed_note(deps: ResearchDeps, checkpoint: Checkpoint) -> RunWarning:
        return RunWarning(
            message=f"resumed from its checkpoint after the {checkpoint.stage} stage of iteration "
            f"{checkpoint.iteration} ({len(deps.evidence)} evidence items, "
            f"{len(deps.state.queries_run)} queries already run)"
        )

    async def _resume(self, deps: ResearchDeps, progress: _Progress, checkpoint: Checkpoint) -> None:
        """Continue from ``checkpoint``: its state, evidence and spent budgets; its start time and id."""
        await restore(deps, checkpoint)
        progress.started = time.perf_counter() - checkpoint.elapsed_seconds
        progress.started_at = datetime.fromisoformat(checkpoint.started_at)
        progress.resumed = checkpoint
        now = datetime.now(UTC).isoformat()
        resumption = Resumption(at=now, stage=checkpoint.stage, iteration=checkpoint.iteration)
        progress.resumptions = [*checkpoint.resumptions, resumption]

    def _reads_full_text(self, deps: ResearchDeps) -> bool:
        """Whether to read the key studies' full text now: once a run, when it has evidence, unless off
        (``DEEPCRITICAL_FULLTEXT_MAX_ARTICLES=0``) or the store is the caller's (a test, an evaluation)."""
        return (
            not deps.state.full_text_read
            and bool(deps.evidence)
            and self.settings.fulltext_max_articles > 0
            and self.parts.store is None
        )

    async def _read_full_texts(self, deps: ResearchDeps) -> None:
        """The key studies' full text for the Judge and the Report (``run.fulltext``); a failure keeps the
        abstracts."""
        deps.state.full_text_read = True
        with deps.state.timed("full_text"):
            try:
                report, added = await read_key_full_texts(
                    self.settings, self.parts.client, deps.store, deps.evidence, deps.state.question
                )
            except DiskFullError:
                raise ResearchError(
                    f"the run stopped: cannot write the evidence store (no space left); {RESUMABLE}"
                ) from None
            except DeepCriticalError as error:
                deps.emit(RunWarning(message=f"full text not read, abstracts kept: {error}"))
                return
        deps.emit(
            RunWarning(
                message=f"{report.summary} {quantity(len(added), 'passage')} bearing on the question added.",
                level="note",
            )
        )

    def _deps(self, question: str, store: EvidenceStoreLike, emit: Callable[[StageEvent], None]) -> ResearchDeps:
        settings, parts = self.settings, self.parts
        state, budget = RunState(question=question), Budget.from_settings(settings, parts.clock)
        evidence = RunEvidence(store, max_evidence=settings.max_evidence)
        search = SearchStage(
            parts.handler,
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
            research_engine=parts.research_engine,
            budget=budget,
            state=state,
            emit=emit,
            sleep=parts.sleep,
            redact=parts.resources.redactor,
            output=OutputChoice(parts.models.output_modes) if parts.models else OutputChoice(),
            result_reader=parts.result_reader,
        )

    async def _research(self, deps: ResearchDeps, progress: _Progress) -> tuple[StopReason, str | None]:
        """The loop's stop reason, and the run's error if it failed."""
        try:
            stop = await self._loop(deps, progress)
        except DiskFullError:  # not the run's failure: it stops where it is, its last checkpoint kept
            raise ResearchError(
                f"the run stopped: cannot write the evidence store (no space left); {RESUMABLE}"
            ) from None
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
            # The sources first: their names are short and say what to fix, where the model's message can be long
            # enough to push them out of a one-line error.
            return stop, f"no evidence was collected: {no_source_answered(state)}; and {model}"
        if model_down:
            return stop, f"no evidence was collected: {model}"
        return stop, no_source_answered(state) if sources_down else None

    async def _loop(self, deps: ResearchDeps, progress: _Progress) -> StopReason:
        state, budget, evidence, stages = deps.state, deps.budget, deps.evidence, self.stages
        resumed = progress.resumed
        # A resumed run starts in the iteration its checkpoint was in, after the stage it had finished.
        first = 1 if resumed is None else resumed.iteration + (resumed.stage == "judge")
        for iteration in range(max(first, 1), budget.max_iterations + 1):
            state.iteration = iteration
            here = resumed is not None and resumed.iteration == iteration
            if not here:
                deps.emit(IterationStarted(iteration=iteration, max_iterations=budget.max_iterations))
            try:
                # The iteration's search ran (its turn may have been cut short after it): on to its judgement,
                # as the Brain's turn usually ends with its search; planning again would only cost requests.
                if not (here and resumed is not None and resumed.stage in ("search", "plan")):
                    await run_stage(stages.plan, deps, None)
                    await progress.save(deps, "plan")
                if budget.expired():
                    return "time_budget"
                if not evidence:
                    deps.emit(RunWarning(message=f"iteration {iteration}: no evidence found yet"))
                    continue
                if self._reads_full_text(deps):  # once, so that the Judge and the Report both read it
                    await self._read_full_texts(deps)
                judgement = (await run_stage(stages.judge, deps, None)).result
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
            await progress.save(deps, "judge")
        return "max_iterations" if evidence else "no_evidence"
