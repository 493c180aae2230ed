"""One-line accounts of model failures, for the progress output and ``run.json``: a schema mismatch reads
``the Judge's answer did not fit its schema: confidence must be at most 1, got 5``, not a validation dump."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelConnectionError,
    ModelHTTPError,
    ModelRequestTimeout,
    ModelRetry,
    ModelTimeoutError,
    OutputTokenLimitExceeded,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)

from deepcritical.agents.output import short_http_error
from deepcritical.text import shorten

AGENT_NAMES = {"brain": "the Brain", "judge": "the Judge", "report": "the Report agent"}
MAX_MESSAGE_CHARS = 240
MAX_VALUE_CHARS = 60


class OutputMismatchError(UnexpectedModelBehavior):
    """The model's answers did not fit the agent's output schema, on every attempt; the message says how."""


def agent_name(agent: str) -> str:
    return AGENT_NAMES.get(agent, f"the {agent} agent")


def _unchanged(text: str) -> str:
    return text


def _show(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float | bool) or value is None:
        return str(value).lower() if isinstance(value, bool) or value is None else str(value)
    if isinstance(value, str):
        return repr(shorten(value, MAX_VALUE_CHARS))
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _where(loc: tuple[int | str, ...]) -> str:
    where = ""
    for part in loc:
        if part == "response":  # pydantic-ai's wrapper around a non-object answer
            continue
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    return where


def _problem(item: Any) -> str:
    kind, where, ctx = item.get("type", ""), _where(tuple(item.get("loc", ()))), item.get("ctx") or {}
    got = item.get("input")
    subject = where or "the answer"
    bounds = {
        "less_than_equal": ("at most", "le"),
        "greater_than_equal": ("at least", "ge"),
        "less_than": ("below", "lt"),
        "greater_than": ("above", "gt"),
    }
    if kind in bounds:
        words, key = bounds[kind]
        return f"{subject} must be {words} {_show(ctx.get(key))}, got {_show(got)}"
    if kind == "missing":
        return f"{subject} is missing"
    if kind == "json_invalid":
        return f"it was not JSON: {_show(got)}"
    if kind in ("int_parsing", "int_type", "int_from_float", "float_parsing", "float_type"):
        return f"{subject} must be a number, got {_show(got)}"
    if kind in ("bool_parsing", "bool_type"):
        return f"{subject} must be true or false, got {_show(got)}"
    if kind in ("string_type",):
        return f"{subject} must be text, got {_show(got)}"
    if kind in ("list_type",):
        return f"{subject} must be a list, got {_show(got)}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"{subject} must be an object, got {_show(got)}"
    if kind == "string_too_short":
        return f"{subject} must not be empty"
    message = str(item.get("msg", kind))
    return f"{subject}: {message[:1].lower()}{message[1:]}"


def describe_mismatch(error: ValidationError | ModelRetry | str) -> str:
    """What was wrong with an answer, in a few words: ``confidence must be at most 1, got 5``."""
    if isinstance(error, str):
        return error
    if isinstance(error, ModelRetry):
        return shorten(str(error.message), MAX_MESSAGE_CHARS)
    problems = error.errors(include_url=False)
    if not problems:
        return "it did not validate"
    first = _problem(problems[0])
    more = len(problems) - 1
    return first + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def mismatch_message(agent: str, problem: str) -> str:
    if problem.startswith("answered in prose"):
        return f"{agent_name(agent)} {problem}"
    return f"{agent_name(agent)}'s answer did not fit its schema: {problem}"


def describe_model_error(error: BaseException, redact: Callable[[str], str] = _unchanged) -> str:
    """One line for a failed model call, without the provider's traceback or a validation dump. Every text
    taken from the error (a server's body, a cause) goes through ``redact`` before it is shortened, so a
    cut can never keep part of a secret the server echoed."""
    if isinstance(error, OutputMismatchError):
        return redact(error.message)
    if isinstance(error, OutputTokenLimitExceeded):
        return "the model's answer was cut off at its max_tokens limit"
    if isinstance(error, ModelRequestTimeout | ModelTimeoutError):
        return "the model did not answer in time (DEEPCRITICAL_LLM_TIMEOUT)"
    if isinstance(error, ModelHTTPError):
        return f"the model server answered {short_http_error(error, redact=redact)}"
    if isinstance(error, ModelConnectionError):
        cause = error.__cause__
        detail = f" ({shorten(redact(str(cause)), 120)})" if cause is not None and str(cause) else ""
        return f"cannot reach the model server{detail}"
    if isinstance(error, UnexpectedModelBehavior):
        first_line = error.message.splitlines()[0] if error.message else type(error).__name__
        if first_line.startswith("Invalid response from"):  # e.g. an HTML page, or JSON of another shape
            what = "was not JSON" if "expected JSON" in first_line else "was JSON of the wrong shape"
            return f"the model server's answer is not the API's format: it {what}"
        return shorten(redact(first_line), MAX_MESSAGE_CHARS)
    if isinstance(error, ModelAPIError) and str(error).startswith("Failed to decode response as JSON"):
        detail = redact(str(error).removeprefix("Failed to decode response as JSON:").strip())
        return f"the model server's answer is not the API's format: it was broken JSON ({shorten(detail, 80)})"
    if isinstance(error, UsageLimitExceeded):
        return "the LLM request budget is spent"
    if isinstance(error, TimeoutError):
        return "the run's time budget ran out (DEEPCRITICAL_MAX_SECONDS)"
    first_line = redact(next(iter(str(error).splitlines()), ""))
    return shorten(f"{type(error).__name__}: {first_line}" if first_line else type(error).__name__, MAX_MESSAGE_CHARS)
