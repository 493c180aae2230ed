"""The run's result reader (``appraisal.reader_choice``): each run reads with its own, two readers in one process
(a server's runs) never share a study reader, and a reader that cannot load fails the run before it starts."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepcritical.appraisal import study_reading
from deepcritical.appraisal.reader_choice import read_by, reading_with, run_reader
from deepcritical.appraisal.study_reading import study_reader
from deepcritical.appraisal.verdict import COUNTED_METHOD
from deepcritical.config import load_settings
from deepcritical.errors import ConfigError
from deepcritical.options import ReaderName
from deepcritical.reading import transformer_classifier
from deepcritical.reading.results import ResultReader
from deepcritical.run.events import ProgressEvent
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.setup import assemble, http_client

# A question no other test asks.
QUESTION = "Does reader-choice-test therapy reduce mortality in imaginary disease?"


@pytest.fixture
def stand_in_readers(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, ResultReader]]:
    """``ResultReader.load`` returning one stand-in per name (the linear reader's parts under both), so the
    cache key is tested without building the transformer's graphs; the study readers cached with them go."""
    linear = ResultReader.load()
    readers = {name: ResultReader(linear.ranker, linear.classifier) for name in ("linear", "transformer")}
    monkeypatch.setattr(ResultReader, "load", staticmethod(lambda classifier="linear": readers[classifier]))
    study_reading._study_reader.cache_clear()
    yield readers
    study_reading._study_reader.cache_clear()


def test_two_readers_of_one_question_are_never_shared(stand_in_readers: dict[str, ResultReader]) -> None:
    linear, transformer = study_reader(QUESTION, "linear"), study_reader(QUESTION, "transformer")
    assert linear is not transformer
    assert linear.result_reader is stand_in_readers["linear"]
    assert transformer.result_reader is stand_in_readers["transformer"]
    assert study_reader(QUESTION, "transformer") is transformer  # the same question and reader: cached
    assert study_reader(QUESTION) is linear  # outside a run: the linear reader
    with reading_with("transformer"):
        assert study_reader(QUESTION) is transformer


async def test_concurrent_runs_each_read_with_their_own_reader(stand_in_readers: dict[str, ResultReader]) -> None:
    """Two runs' tasks in one event loop, interleaved: each sees its own reader, in its worker threads too, and
    neither setting outlives its run."""
    both_set = asyncio.Event()
    started = 0

    async def run(reader: ReaderName) -> list[ResultReader]:
        nonlocal started
        with reading_with(reader):
            started += 1
            if started == 2:
                both_set.set()
            await both_set.wait()  # the other run has set its reader meanwhile
            here = study_reader(QUESTION).result_reader
            in_thread = await asyncio.to_thread(lambda: study_reader(QUESTION).result_reader)
            return [here, in_thread]

    linear, transformer = await asyncio.gather(
        asyncio.create_task(run("linear")), asyncio.create_task(run("transformer"))
    )
    assert linear == [stand_in_readers["linear"]] * 2
    assert transformer == [stand_in_readers["transformer"]] * 2
    assert run_reader() == "linear"


def test_a_verdict_method_names_the_reader_that_read_the_studies() -> None:
    assert read_by(COUNTED_METHOD) == COUNTED_METHOD  # the linear reader keeps the recorded wording
    with reading_with("transformer"):
        assert "read by the transformer result reader" in read_by(COUNTED_METHOD)
        assert "trained result reader" not in read_by(COUNTED_METHOD)
        assert read_by("code: stance").endswith("; results read by the transformer result reader")


@pytest.fixture
def no_transformer_weights(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(transformer_classifier, "bundled_weights", lambda: None)
    transformer_classifier.bundled.cache_clear()
    yield None
    transformer_classifier.bundled.cache_clear()


@pytest.mark.usefixtures("no_transformer_weights")
async def test_a_run_whose_reader_cannot_load_fails_before_it_starts(tmp_path: Path) -> None:
    settings = load_settings(demo_mode=True, home=tmp_path / "home", reader="transformer")
    events: list[ProgressEvent] = []

    async def run() -> None:
        async with http_client(settings) as client:
            async for event in Orchestrator(assemble(settings, client)).run("Do statins reduce mortality in sepsis?"):
                events.append(event)

    with pytest.raises(ConfigError) as raised:
        await run()
    assert str(raised.value) == (
        "DEEPCRITICAL_READER transformer: the transformer classifier's weights or its base model are not installed"
    )
    assert events == []  # not even RunStarted: nothing was searched or stored


@pytest.mark.usefixtures("no_transformer_weights")
def test_the_command_line_checks_the_reader_before_the_run(tmp_path: Path) -> None:
    from deepcritical.cli.research import preflight

    settings = load_settings(demo_mode=True, home=tmp_path / "home", reader="transformer", flags={"reader": "--reader"})
    with pytest.raises(ConfigError, match=r"^--reader transformer: the transformer classifier's weights"):
        preflight(settings)
