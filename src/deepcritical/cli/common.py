"""What every command shares: the exit codes, the two consoles, the one-line failure, reading the
settings, running a command's coroutine and checking a question's text. Imported by the commands' modules
(``app``, ``library``), so that they need not import each other."""

from __future__ import annotations

import gc
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer
from rich.console import Console

from deepcritical.errors import ConfigError, DeepCriticalError
from deepcritical.logs import redact_logs, redacted
from deepcritical.questions import checked_question
from deepcritical.text import MAX_QUESTION_CHARS, one_line

if TYPE_CHECKING:  # the settings model (pydantic-settings) loads when a command reads the settings
    from deepcritical.config import Settings

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_DEGRADED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

# ":x:" in a title or a message is text, not an emoji; a line is never broken inside (a URL, a path).
out = Console(emoji=False, soft_wrap=True)
err = Console(stderr=True, emoji=False, soft_wrap=True)
# The flag behind each settings field: a message about a value names what the user typed.
FLAGS = {
    "sources": "--sources",
    "model": "--model",
    "max_iterations": "--max-iterations",
    "max_results_per_source": "--max",
    "output_mode": "--output-mode",
    "demo_mode": "--demo",
    "demo_sources": "--demo-sources",
    "reader": "--reader",
}
T = TypeVar("T")
# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection, OWASP); a question, an
# error message or a quote may start so. (defusedcsv does this, but for one function is not worth a dependency.)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """One line on stderr, then exit with ``code``. The message may quote outside text (an error body),
    so control characters go."""
    err.print(f"error: {one_line(redacted(message))}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def settings_from(**overrides: Any) -> Settings:
    from deepcritical.config import load_settings
    from deepcritical.redaction import Redactor

    try:
        settings = load_settings(flags=FLAGS, **overrides)
    except ConfigError as error:
        fail(str(error))
    redact_logs(Redactor.for_settings(settings))  # from here on, no log line can carry a configured secret
    return settings


def freeze_imports() -> None:
    """Move every object alive now (what the imports made: a research run loads about 1,700 modules) out
    of the cyclic garbage collector's reach (``gc.freeze``). They live as long as the process anyway; the
    collector stops walking them at every full collection during the run and once more at exit, which cost
    a warm demo run about 0.4 of its 3 CPU seconds (bench/cli_timing.py). Objects made later are collected
    as before."""
    gc.freeze()


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; project errors become a one-line message and exit code 1."""
    import asyncio  # here: a command refused before it runs anything never pays for the event loop's modules

    freeze_imports()
    try:
        return asyncio.run(coroutine)
    except ConfigError as error:
        fail(str(error))
    except DeepCriticalError as error:
        fail(str(error), EXIT_FAILED)
    except KeyboardInterrupt:
        fail("interrupted", EXIT_INTERRUPTED)


def checked_preflight(settings: Settings) -> None:
    from deepcritical.cli.research import preflight  # the store and embedding modules load only when needed

    try:
        preflight(settings)
    except ConfigError as error:
        fail(str(error))


def require_text(value: str, what: str) -> str:
    """The question or query as the run will use it: one line without control characters, not empty
    and not longer than ``MAX_QUESTION_CHARS``; a question names something to search for, in English
    (``questions.question_problem``). Checked before anything heavy loads: a refusal is immediate."""
    if what == "question":
        text, problem = checked_question(value)
        if problem:
            fail(problem)
        return text
    text = one_line(value)
    if not text:
        fail(f"the {what} is empty: give a non-empty {what}")
    if len(text) > MAX_QUESTION_CHARS:
        fail(f"the {what} is {len(text):,} characters long; the limit is {MAX_QUESTION_CHARS:,}: shorten it")
    return text


def inert(cell: str) -> str:
    """``cell`` as a spreadsheet shows it without running it: text that would start a formula is prefixed
    with ``'`` (which spreadsheets hide); a number stays a number."""
    if not cell.startswith(FORMULA_STARTS):
        return cell
    try:
        float(cell)
    except ValueError:
        return "'" + cell
    return cell
