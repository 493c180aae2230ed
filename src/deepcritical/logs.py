"""Structured logging: structlog to stderr, quiet by default so progress output stays readable."""

from __future__ import annotations

import functools
import logging
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # structlog and the redaction (hence the settings) load when logging is set up, not at
    # import: ``deepcritical --help`` imports this module and needs neither.
    import structlog

    from deepcritical.redaction import RedactingFilter, Redactor


@functools.cache
def _filter() -> RedactingFilter:
    """One filter for the process's log: every record, from any logger (httpx2 logs whole request URLs,
    with ``api_key=``), is redacted on its way to stderr. ``redact_logs`` gives it the settings' secrets."""
    from deepcritical.redaction import RedactingFilter

    return RedactingFilter()


def redact_logs(redactor: Redactor) -> None:
    """Blank ``redactor``'s secrets from every log line from now on (stdlib records and structlog events)."""
    _filter().redact = redactor


def redacted(text: str) -> str:
    """``text`` with the secrets ``redact_logs`` was given blanked: for a line written straight to stderr.
    Before any settings were read there is no secret to blank, and the filter (with the settings model
    behind it) need not load: a question refused at once stays at once."""
    if _filter.cache_info().currsize == 0:
        return text
    return _filter().redact(text)


def _redact_event(_logger: object, _method: str, event_dict: structlog.typing.EventDict) -> structlog.typing.EventDict:
    """structlog's side of the same filter: every value, the formatted traceback included, as text."""
    return {key: _redacted(value) for key, value in event_dict.items()}


def _redacted(value: object) -> object:
    if isinstance(value, int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [_redacted(item) for item in value]
    if isinstance(value, dict):
        return {key: _redacted(item) for key, item in value.items()}
    return _filter().redact(str(value))


def configure_logging(*, verbose: bool = False, json_logs: bool = False) -> None:
    """Route structlog (and the libraries' stdlib logging) to stderr. Context variables such as the
    run id, bound with ``structlog.contextvars.bound_contextvars``, appear on every line."""
    # Every problem reaches the user already: a run survives it (a progress line, a source error) or the
    # command ends with one line saying why. The log repeats them, tracebacks included, only when asked
    # to (--verbose); otherwise a failed run would bury its one line under a traceback or two.
    import structlog

    level = logging.INFO if verbose else logging.CRITICAL
    logging.basicConfig(level=level, stream=sys.stderr, format="%(name)s: %(message)s", force=True)
    # Some libraries (bm25s) set their own logger to DEBUG on import; the handler's level holds anyway.
    for handler in logging.getLogger().handlers:
        handler.setLevel(level)
        handler.addFilter(_filter())
    for noisy in (
        "httpx",
        "httpcore",
        "httpx2",
        "httpcore2",
        "chromadb",
        "sentence_transformers",
        "primp",
        "ddgs",
        "bm25s",
    ):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json_logs
        else structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.format_exc_info,
            _redact_event,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
