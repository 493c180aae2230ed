"""One place that calls an agent: the run's shared usage and limits, and a short retry of transient
model failures (rate limits, overload, server errors, dropped connections). Anything else, and a
failure that outlasts the retries, propagates to the orchestrator, which reports it."""

from __future__ import annotations

from typing import TypeVar

import structlog
from pydantic_ai import Agent
from pydantic_ai.exceptions import (
    ModelConnectionError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelServerError,
    ModelUnavailableError,
)
from pydantic_ai.models import Model
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from deepcritical.agents.deps import ResearchDeps

logger = structlog.get_logger(__name__)

OutputT = TypeVar("OutputT")
LLM_ATTEMPTS = 3
MAX_RETRY_WAIT = 30.0


def is_transient(error: BaseException) -> bool:
    """A model failure worth retrying: the same request may well succeed a moment later."""
    if isinstance(error, ModelRateLimitError | ModelUnavailableError | ModelServerError | ModelConnectionError):
        return True
    return isinstance(error, ModelHTTPError) and (error.status_code == 429 or error.status_code >= 500)


def _wait(state: RetryCallState) -> float:
    """Exponential backoff, or what the provider asked for (``Retry-After``) when it said."""
    error = state.outcome.exception() if state.outcome else None
    asked = getattr(error, "retry_after", None)
    backoff = 2.0 ** (state.attempt_number - 1)
    return min(float(asked) if isinstance(asked, int | float) else backoff, MAX_RETRY_WAIT)


def _log_retry(state: RetryCallState) -> None:
    error = state.outcome.exception() if state.outcome else None
    logger.warning("llm_retry", attempt=state.attempt_number, error=type(error).__name__)


async def run_agent(
    agent: Agent[ResearchDeps, OutputT],
    prompt: str,
    *,
    deps: ResearchDeps,
    model: Model,
    report: bool = False,
) -> OutputT:
    """Run ``agent`` once (retrying transient model errors) against the run's shared LLM budget."""
    retrying = AsyncRetrying(
        stop=stop_after_attempt(LLM_ATTEMPTS),
        wait=_wait,
        retry=retry_if_exception(is_transient),
        sleep=deps.sleep,
        before_sleep=_log_retry,
        reraise=True,
    )
    async for attempt in retrying:
        with attempt:
            result = await agent.run(
                prompt,
                deps=deps,
                model=model,
                usage=deps.budget.usage,
                usage_limits=deps.budget.usage_limits(report=report),
            )
            return result.output
    raise AssertionError("unreachable: tenacity either returns or re-raises")
