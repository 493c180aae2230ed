"""The one retry policy for a request to another service: a source's GET, a model call, a webhook's POST.

A failure worth retrying is asked again up to ``attempts`` times, after what the server asked for
(``Retry-After``, in seconds or as an HTTP date) when it said, else after an exponential back-off from
``base_delay``. A server asking for more than ``max_wait`` is not asked again sooner than it said: the retrying
stops at once and the caller says when to try again. A timed-out request is asked once more, never twice (the
second wait would be as long). The sleep is the caller's, so a test waits for nothing.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC

import structlog
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

logger = structlog.get_logger(__name__)
# The longest a request waits before asking again; a server asking for more gets no earlier request.
MAX_RETRY_WAIT_SECONDS = 30.0


def retry_after_seconds(headers: Mapping[str, str], *, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date); None without a readable one."""
    header = (headers.get("Retry-After") or "").strip()
    if header.isdigit():
        return float(header)
    try:
        when = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT by definition
        when = when.replace(tzinfo=UTC)
    return max(when.timestamp() - now(), 0.0)


@dataclass(frozen=True)
class RetryPolicy:
    """What is retried (``retryable``), what the server asked to wait (``asked``: seconds or None) and what a
    timeout is (``timed_out``), read from the error of a failed attempt; ``event`` names the log line."""

    retryable: Callable[[BaseException], bool]
    asked: Callable[[BaseException], float | None]
    timed_out: Callable[[BaseException], bool]
    event: str
    attempts: int = 3
    base_delay: float = 1.0
    max_wait: float = MAX_RETRY_WAIT_SECONDS

    def wait(self, error: BaseException, attempt: int) -> float:
        """How long to wait after failed attempt number ``attempt``."""
        asked = self.asked(error)
        return self.base_delay * 2 ** (attempt - 1) if asked is None else asked

    def retrying(self, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep, **log: object) -> AsyncRetrying:
        """A tenacity loop with this policy; the last error is raised as it was when the retrying stops."""
        timeouts = 0

        def stop(state: RetryCallState) -> bool:
            nonlocal timeouts
            error = _error(state)
            timeouts += self.timed_out(error)
            too_long = self.wait(error, state.attempt_number) > self.max_wait
            return state.attempt_number >= self.attempts or timeouts >= 2 or too_long

        def before_sleep(state: RetryCallState) -> None:
            error = _error(state)
            wait = self.wait(error, state.attempt_number)
            logger.warning(self.event, attempt=state.attempt_number, error=type(error).__name__, wait=wait, **log)

        return AsyncRetrying(
            stop=stop,
            wait=lambda state: self.wait(_error(state), state.attempt_number),
            retry=retry_if_exception(self.retryable),
            sleep=sleep,
            before_sleep=before_sleep,
            reraise=True,
        )


def _error(state: RetryCallState) -> BaseException:
    error = state.outcome.exception() if state.outcome is not None else None
    assert error is not None, "tenacity asks about a retry only after a failed attempt"
    return error
