"""One place that calls an agent: the run's output mode (and its fallback when a server refuses a mode), the
shared usage and limits, the agent's own ``max_tokens``, a short retry of transient model failures (rate
limits, overload, server errors, dropped connections), and the agent's counts in the run's state.

A request that timed out is retried at most once: a server that did not answer in time is busy, and each
retry queues more work on it. httpx closes the connection of a request it gave up on, so the server sees
the client leave (llama.cpp stops generating for it); ``max_tokens`` bounds what it generates either way.
Anything else, and a failure that outlasts the retries, propagates to the orchestrator, which reports it."""

from __future__ import annotations

import time
from typing import TypeVar

from pydantic_ai import Agent
from pydantic_ai.exceptions import (
    ModelConnectionError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
)
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RunUsage

from deepcritical.agents.deps import ResearchDeps
from deepcritical.agents.messages import OutputMismatchError, mismatch_message
from deepcritical.agents.observer import CallObserver
from deepcritical.agents.output import OutputAgents, refused
from deepcritical.events import RunWarning
from deepcritical.sources.retry import RetryPolicy
from deepcritical.stages.state import AgentStats

OutputT = TypeVar("OutputT")


def is_transient(error: BaseException) -> bool:
    """A model failure worth retrying: the same request may well succeed a moment later. A server that
    refused the output mode (even with a 500) will refuse it again: the next mode is tried instead."""
    if refused(error):
        return False
    if isinstance(error, ModelRateLimitError | ModelUnavailableError | ModelServerError | ModelConnectionError):
        return True
    return isinstance(error, ModelHTTPError) and (error.status_code == 429 or error.status_code >= 500)


def _asked(error: BaseException) -> float | None:
    """What the provider asked to wait (its ``Retry-After``, read by pydantic-ai), when it said."""
    asked = getattr(error, "retry_after", None)
    return float(asked) if isinstance(asked, int | float) else None


# The sources' policy (``sources.retry``): a timed-out call is retried once, a provider asking for a longer
# wait than a call waits ends the call with its rate-limit error.
MODEL_CALLS = RetryPolicy(
    retryable=is_transient,
    asked=_asked,
    timed_out=lambda error: isinstance(error, ModelTimeoutError),
    event="llm_retry",
)


def _count(stats: AgentStats, used: RunUsage, seconds: float) -> None:
    stats.requests += used.requests
    stats.input_tokens += used.input_tokens
    stats.output_tokens += used.output_tokens
    stats.seconds += seconds


async def _attempts(
    agent: Agent[ResearchDeps, OutputT],
    prompt: str,
    *,
    deps: ResearchDeps,
    model: Model,
    observer: CallObserver,
    settings: ModelSettings,
    report: bool,
) -> OutputT:
    retrying = MODEL_CALLS.retrying(deps.sleep)
    async for attempt in retrying:
        with attempt:
            result = await agent.run(
                prompt,
                deps=deps,
                model=model,
                model_settings=settings,
                usage=deps.budget.usage,
                usage_limits=deps.budget.usage_limits(report=report),
                capabilities=[observer],
            )
            return result.output
    raise AssertionError("unreachable: tenacity either returns or re-raises")


async def run_agent(
    agents: OutputAgents[ResearchDeps, OutputT],
    prompt: str,
    *,
    deps: ResearchDeps,
    model: Model,
    name: str,
    max_tokens: int | None = None,
    report: bool = False,
) -> OutputT:
    """Run the agent ``name`` once, in the run's output mode, against the run's shared LLM budget. A server
    that refuses the mode moves the run to the next mode and the call is made again in it."""
    stats = deps.state.agent(name)
    stats.calls += 1
    settings = ModelSettings(max_tokens=max_tokens) if max_tokens else ModelSettings()
    while True:
        strategy = deps.output.current
        observer = CallObserver(stats, strategy)
        before, started = RunUsage() + deps.budget.usage, time.perf_counter()
        try:
            return await _attempts(
                agents(strategy.mode),
                prompt,
                deps=deps,
                model=model,
                observer=observer,
                settings=settings,
                report=report,
            )
        except ModelHTTPError as error:
            if deps.output.fall_back(error, redact=deps.redact) is None:
                raise
            deps.emit(RunWarning(message=deps.redact(deps.output.refusals[-1])))
        except UnexpectedModelBehavior as error:
            # "Exceeded maximum output retries": every answer was sent back, the last for ``last_mismatch``.
            if observer.last_mismatch is None or "exceeded maximum" not in error.message.lower():
                raise
            raise OutputMismatchError(mismatch_message(name, observer.last_mismatch)) from error
        finally:
            _count(stats, deps.budget.usage - before, time.perf_counter() - started)
