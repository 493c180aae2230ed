"""One shape for the model's work in a run, and one runner for it.

A ``Stage`` (plan, judge, report) has a model half and a code half that produce the same result type. The
runner spends the budget on the model half, classifies any failure once (budget, model, or a crash), and,
when the code half has to stand in, records the degradation once: a warning, ``RunState.degraded`` and
the agent's fallback count. A stage built without a model half (``Stages.code_only``) runs its code half
as the design, not as a degradation.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

import structlog
from pydantic_ai.exceptions import AgentRunError, UsageLimitExceeded

from deepcritical.agents.deps import ResearchDeps
from deepcritical.events import RunWarning
from deepcritical.outputs import StopReason

logger = structlog.get_logger(__name__)
In = TypeVar("In")
Out = TypeVar("Out")

# One failed model call is survived (code stands in); this many in a row mean the model cannot do the work.
MAX_CONSECUTIVE_MODEL_FAILURES = 3

Failure = Literal["time", "budget", "model"]
CauseKind = Literal["model_failed", "rejected", "crashed", "code_only"]


def classify(error: BaseException) -> Failure | None:
    """What a stage's failure means, the one definition: the LLM request budget ran out, the model failed
    (an API error, a refusal, output that never fit the schema), or None: a crash (a bug or a store failure)."""
    if isinstance(error, UsageLimitExceeded):
        return "budget"
    if isinstance(error, AgentRunError):
        return "model"
    return None


@dataclass(frozen=True)
class Cause:
    """Why the code half ran: the model failed (``note`` is the error line), its result was rejected (``note``
    says why), the stage crashed, or the stage has no model half."""

    kind: CauseKind
    note: str


@dataclass(frozen=True)
class Stage(Generic[In, Out]):
    """A unit of the model's work. ``model`` does it with the language model (None: code only); ``code``
    does it without one. ``rejects`` looks at the model's result and says why it cannot stand (then the code
    half runs), or None. ``degraded`` words the record of a code half standing in for a failed model (None:
    the model's work was done before it failed, nothing is degraded and the code half has nothing to add).
    ``final`` marks the report: it runs on the report's share of the time, never stops the loop, and a crash
    in it still ends in its code half (the run fails all the same). ``code_when_stopped``: when a budget or
    repeated model failures end the loop during this stage, its code half still runs first (the plan's
    code-built search), except when the time is out."""

    name: str  # timing key and message prefix
    agent: str  # the agent whose counts record the fallback
    model: Callable[[ResearchDeps, In], Awaitable[Out]] | None
    code: Callable[[ResearchDeps, In, Cause], Awaitable[Out]]
    degraded: Callable[[ResearchDeps, Cause], str | None]
    rejects: Callable[[ResearchDeps, Out], str | None] | None = None
    final: bool = False
    code_when_stopped: bool = False


class LoopStopError(Exception):
    """A budget ran out or the model kept failing: the loop ends and the report is written."""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Ran(Generic[Out]):
    """A stage's result; ``by`` says which half produced it, ``cause`` why the code half ran, ``crash`` is
    set when the final stage crashed (the run keeps its result but fails)."""

    result: Out
    by: Literal["model", "code"]
    cause: Cause | None = None
    crash: str | None = None


async def run_stage(stage: Stage[In, Out], deps: ResearchDeps, request: In) -> Ran[Out]:
    """Run ``stage`` within the run's budgets. A loop stage raises ``LoopStopError`` when the time or the
    LLM requests run out, or at the last of ``MAX_CONSECUTIVE_MODEL_FAILURES`` model failures in a row;
    the final stage always returns."""
    if stage.model is None:
        cause = Cause("code_only", "this run uses no language model")
        return Ran(await _code(stage, deps, request, cause), "code", cause)
    stop: StopReason | None = None
    crash: str | None = None
    remaining = deps.budget.remaining(report=stage.final)
    timeout = asyncio.timeout(max(remaining, 0.0))
    try:
        if remaining <= 0 and not stage.final:
            raise LoopStopError("time_budget")
        with deps.state.timed(stage.name):
            async with timeout:
                result = await stage.model(deps, request)
    except LoopStopError as error:
        stop, cause = error.reason, Cause("model_failed", "out of time")
    except TimeoutError as error:
        if not timeout.expired():
            raise
        if stage.final:
            cause = Cause("model_failed", deps.record_error(stage.name, error))
            deps.emit(RunWarning(message=cause.note))
        else:
            deps.emit(RunWarning(message=f"{stage.name}: stopped by the time budget"))
            stop, cause = "time_budget", Cause("model_failed", "out of time")
    except Exception as error:
        kind = classify(error)
        if kind is None and not stage.final:
            raise
        note = deps.record_error(stage.name, error)
        if kind is None:
            logger.exception("stage_crashed", stage=stage.name)
            crash, cause = note, Cause("crashed", note)
        elif kind == "budget":
            deps.emit(RunWarning(message=f"{stage.name}: the LLM request budget is spent"))
            stop, cause = "llm_budget", Cause("model_failed", note)
        else:
            deps.emit(RunWarning(message=note))
            deps.state.model_failures += 1
            cause = Cause("model_failed", note)
            if deps.state.model_failures >= MAX_CONSECUTIVE_MODEL_FAILURES:
                stop = "llm_failed"
    else:
        deps.state.model_failures = 0
        rejected = stage.rejects(deps, result) if stage.rejects is not None else None
        if rejected is None:
            return Ran(result, "model")
        cause = Cause("rejected", rejected)
    if stop is not None and not stage.final:
        if stage.code_when_stopped and stop != "time_budget":
            _record(stage, deps, cause)
            with contextlib.suppress(LoopStopError):  # out of time: the run keeps the stop reason it has
                await _code(stage, deps, request, cause)
        raise LoopStopError(stop)
    if cause.kind != "crashed":
        _record(stage, deps, cause)
    return Ran(await _code(stage, deps, request, cause), "code", cause, crash)


def _record(stage: Stage[In, Out], deps: ResearchDeps, cause: Cause) -> None:
    """The one record of a code half standing in for the model: a warning, the run's degraded list, and
    the agent's fallback count."""
    reason = stage.degraded(deps, cause)
    if reason is None:
        return
    deps.state.degraded.append(reason)
    deps.state.agent(stage.agent).fallbacks += 1
    deps.emit(RunWarning(message=reason))


async def _code(stage: Stage[In, Out], deps: ResearchDeps, request: In, cause: Cause) -> Out:
    """The code half; in the loop it runs on the loop's time too (``LoopStopError`` when that is out)."""
    with deps.state.timed(stage.name):
        if stage.final:
            return await stage.code(deps, request, cause)
        remaining = deps.budget.remaining()
        if remaining <= 0:
            raise LoopStopError("time_budget")
        timeout = asyncio.timeout(remaining)
        try:
            async with timeout:
                return await stage.code(deps, request, cause)
        except TimeoutError as error:
            if not timeout.expired():
                raise
            raise LoopStopError("time_budget") from error
