"""Run one question and write its folder: the one path the command line, the run manager (page, API,
MCP) and any later driver (a batch, a queue worker, an eval harness) take.

``run_to_folder`` opens the run's HTTP client, streams the run's events to ``on_event`` as they come,
and writes ``report.md``, ``run.json`` and the reference exports into the folder, even when the run
failed (``outcome.error``). What runs is a ``RunSource``: by default an ``Orchestrator`` on the parts
``run.setup.assemble`` builds; a test or a harness passes its own factory (e.g. one with a store it keeps
open across runs, or ``code_only``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import httpx2

from deepcritical.config import Settings
from deepcritical.errors import ResearchError
from deepcritical.run import setup
from deepcritical.run.checkpoint import (
    RESUMABLE,
    Checkpoint,
    CheckpointSink,
    folder_sink,
    read_checkpoint,
    remove_checkpoint,
)
from deepcritical.run.events import ProgressEvent, RunFinished
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.outcome import ResearchOutcome, new_run_id
from deepcritical.run.record import write_outputs


class RunSource(Protocol):
    """What runs a question: ``Orchestrator`` (tests may pass a stand-in)."""

    def run(
        self,
        question: str,
        *,
        run_id: str | None = None,
        checkpoint: CheckpointSink | None = None,
        resume: Checkpoint | None = None,
    ) -> AsyncIterator[ProgressEvent]: ...


ClientFactory = Callable[[Settings], httpx2.AsyncClient]
RunSourceFactory = Callable[[Settings, httpx2.AsyncClient], RunSource]
EventSink = Callable[[ProgressEvent], None]


def orchestrator(settings: Settings, client: httpx2.AsyncClient) -> RunSource:
    """The default run source: the orchestrator on the parts the settings call for."""
    return Orchestrator(setup.assemble(settings, client))


@dataclass(frozen=True)
class FolderRun:
    """A finished run and where its files are."""

    outcome: ResearchOutcome
    folder: Path
    report_path: Path
    record_path: Path


async def run_to_folder(
    question: str,
    settings: Settings,
    *,
    folder: Path | None = None,
    run_id: str | None = None,
    on_event: EventSink | None = None,
    client_factory: ClientFactory | None = None,
    run_source: RunSourceFactory = orchestrator,
    resume: bool = False,
) -> FolderRun:
    """Run ``question`` to the end and write its folder (default ``runs/<run_id>``). Every event, the
    final ``RunFinished`` included, goes to ``on_event``. Raises ResearchError when the run gave no outcome
    or its files could not be written; a run that failed still returns (``outcome.error`` set).
    ``client_factory`` defaults to ``run.setup.http_client``, looked up at call time.

    The run checkpoints into its folder after every stage (``checkpoint.json``, removed once ``run.json``
    is written); ``resume`` continues the run whose checkpoint the folder holds (its question and id win)."""
    saved = read_checkpoint(folder) if resume and folder is not None else None
    run_id = saved.run_id if saved is not None else run_id or new_run_id()
    target = folder if folder is not None else Path("runs") / run_id
    outcome: ResearchOutcome | None = None
    async with (client_factory or setup.http_client)(settings) as client:
        source = run_source(settings, client)
        async for event in source.run(question, run_id=run_id, checkpoint=folder_sink(target), resume=saved):
            if on_event is not None:
                on_event(event)
            if isinstance(event, RunFinished):
                outcome = event.outcome
    if outcome is None:
        raise ResearchError("the run ended without an outcome")
    try:
        report_path, record_path = write_outputs(outcome, target)
    except OSError as error:
        raise ResearchError(f"cannot write the report to {target}: {error.strerror or error}; {RESUMABLE}") from None
    remove_checkpoint(target)  # run.json is written: the run is over, nothing is left to resume
    return FolderRun(outcome, target, report_path, record_path)
