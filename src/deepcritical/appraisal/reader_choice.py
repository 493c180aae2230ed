"""Which result reader a run reads its studies with (``Settings.reader``: ``linear`` or ``transformer``).

The run sets it once, for its own task (``reading_with``, in ``run.orchestrator``), and every stage that reads a
study (``study_reading.study_reader``) takes it from there. A context variable, not an argument: about twenty
functions over a dozen modules read studies by the question alone (the counted table, the verdict, the brief,
the citation check, the stance features), and the demo's stand-in Judge and Report models, which get only
their prompt, read them too; an argument would have to reach all of them, and one missed would read a run's
studies with two readers. A context variable is per task: asyncio copies it into the tasks and the worker
threads (``asyncio.to_thread``) a run starts, and a run's own setting never reaches another run's task, so a
server's concurrent runs each read with their own (phases/16_result_reader.md, round 4: the run's reader)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from deepcritical.errors import ConfigError
from deepcritical.options import ReaderName
from deepcritical.reading.results import ResultReader

_RUN_READER: ContextVar[ReaderName] = ContextVar("deepcritical_result_reader", default="linear")
# How a verdict's method names the reader; the linear one keeps the words runs have always recorded.
LINEAR_WORDS = "the trained result reader"
TRANSFORMER_WORDS = "the transformer result reader"


def run_reader() -> ReaderName:
    """The reader of the run whose task this is (``linear`` outside any run: a test, a bench, the eval)."""
    return _RUN_READER.get()


@contextmanager
def reading_with(reader: ReaderName) -> Iterator[None]:
    """Read studies with ``reader`` in this task (and the tasks and threads it starts) until the block ends."""
    token = _RUN_READER.set(reader)
    try:
        yield
    finally:
        _RUN_READER.reset(token)


def read_by(method: str) -> str:
    """A code verdict's ``method`` (worded for the linear reader) naming the reader that read this run's studies."""
    if run_reader() == "linear":
        return method
    if LINEAR_WORDS in method:
        return method.replace(LINEAR_WORDS, TRANSFORMER_WORDS)
    return f"{method}; results read by {TRANSFORMER_WORDS}"


def check_reader(reader: ReaderName, named: str = "DEEPCRITICAL_READER") -> None:
    """Load ``reader`` now (it is cached), so that a run that cannot read with it fails before it starts, in
    one line naming the setting (``named``: its flag or variable), not at its first study."""
    try:
        ResultReader.load(reader)
    except OSError as error:  # the transformer's weights or base model are not installed, or unreadable
        raise ConfigError(f"{named} {reader}: {error}") from error


def installed_readers() -> list[ReaderName]:
    """The readers this install can read with, without loading them: the transformer needs its shipped
    weights and the base model's package (the page offers only these)."""
    from deepcritical.reading.transformer_classifier import base_model_dir, bundled_weights

    readers: list[ReaderName] = ["linear"]
    if bundled_weights() is not None and base_model_dir() is not None:
        readers.append("transformer")
    return readers
