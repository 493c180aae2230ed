"""Run one question and write its folder: the one path the command line, the run manager (page, API,
MCP) and any later driver (a batch, a queue worker) take.

``run_to_folder`` records the run's request in its folder as it starts, opens the run's HTTP client,
records every event in ``events.jsonl`` and hands it to ``on_event`` as it comes, and writes ``report.md``,
``run.json`` and the reference exports, even when the run failed (``outcome.error``). All of it through the
folder's ``RunStore``. A run started without a store of its caller's (the command line) keeps its own
record too: ``status.json`` from start to end and a lease renewed while it runs, so the page lists it and
no server takes it for a run its owner left. What runs is a ``RunSource``: by default an ``Orchestrator``
on the parts ``run.setup.assemble`` builds; a test or a harness passes its own factory."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import httpx2

from deepcritical.config import Settings
from deepcritical.errors import ResearchError
from deepcritical.evidence.resources import Resources
from deepcritical.run import setup
from deepcritical.run.checkpoint import RESUMABLE, Checkpoint, CheckpointSink, hold_point
from deepcritical.run.events import ProgressEvent, RunFinished
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.outcome import ResearchOutcome, new_run_id
from deepcritical.run.record import Addendum, with_addendum
from deepcritical.run.request import RunPlan, RunRequest, runs_folder
from deepcritical.run.store import (
    LEASE_BEAT_SECONDS,
    Lease,
    RunInfo,
    RunStatus,
    RunStore,
    RunSummary,
    StoredEvent,
    new_owner_token,
    now_text,
)


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
StoredSink = Callable[[StoredEvent], None]
STOPPED_HERE = "the run was stopped before it ended (resume it with research --resume)"


def orchestrator_on(resources: Resources) -> RunSourceFactory:
    """The default run source: the orchestrator on the parts the settings call for and the process's resources."""

    def source(settings: Settings, client: httpx2.AsyncClient) -> RunSource:
        return Orchestrator(setup.assemble(settings, client, resources=resources))

    return source


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
    run_source: RunSourceFactory | None = None,
    resume: bool = False,
    request: RunRequest | None = None,
    store: RunStore | None = None,
    on_stored: StoredSink | None = None,
    addendum: Callable[[ResearchOutcome], Addendum] | None = None,
    resources: Resources | None = None,
) -> FolderRun:
    """Run ``question`` (``request``'s, when given) to the end and write its folder: ``store``'s, else
    ``folder``, else ``<runs folder>/<run_id>``. Every event, the final ``RunFinished`` included, goes to
    ``on_event``; every recorded one (numbered) to ``on_stored``. Raises ResearchError when the run gave no
    outcome or its files could not be written; a run that failed still returns (``outcome.error`` set).
    ``client_factory`` defaults to ``run.setup.http_client``, looked up at call time.

    The run checkpoints into its folder after every stage (``checkpoint.json``, removed once ``run.json``
    is written); ``resume`` continues the run whose folder it is: from its checkpoint (its question and id
    win), or from the start when it was stopped before its first one. ``store`` is given by a caller that
    keeps the run's status and lease itself (the run manager, a worker). ``addendum`` gives what the caller adds
    to the finished run (a watch's "what changed") before its files are written: no file is written twice.
    ``resources`` are the process's (built for this run when not given); ``run_source`` defaults to the
    orchestrator on them."""
    owned = store is None
    resources = resources or Resources(settings, share_connection=False)
    run_source = run_source or orchestrator_on(resources)
    if store is None and folder is not None:
        store = RunStore(folder, resources.redactor.value)
    saved = store.checkpoint() if resume and store is not None else None
    recorded = store.status() if resume and store is not None else None
    run_id = saved.run_id if saved else recorded.run_id if recorded else run_id or new_run_id()
    if store is None:
        store = RunStore(runs_folder(settings) / run_id, resources.redactor.value)
    request = request or (store.request() if resume else None) or RunRequest(question=question)
    if store.request() is None or not resume:
        store.write_request(request)  # as it starts: a run killed at any point resumes from its folder
    keeper = _Keeper(store, RunPlan(request, settings, run_id, store.folder), recorded) if owned else None
    outcome: ResearchOutcome | None = None
    try:
        await hold_point(store.folder, "start")
        async with (client_factory or setup.http_client)(settings) as client:
            source = run_source(settings, client)
            events = source.run(request.question, run_id=run_id, checkpoint=store.checkpoint_sink(), resume=saved)
            async for event in events:
                if isinstance(event, RunFinished):  # the run's end is recorded once its files are written
                    outcome = event.outcome
                else:
                    stored = store.append(event.model_dump(mode="json"))
                    if on_stored is not None:
                        on_stored(stored)
                if on_event is not None:
                    on_event(event)
        if outcome is None:
            raise ResearchError("the run ended without an outcome")
        extra = addendum(outcome) if addendum is not None else Addendum()
        outcome = with_addendum(outcome, extra)
        try:
            report_path, record_path = store.write_outputs(outcome, extra.files)
        except OSError as error:
            raise ResearchError(
                f"cannot write the report to {store.folder}: {error.strerror or error}; {RESUMABLE}"
            ) from None
    except BaseException as error:
        if keeper is not None:
            stopped = isinstance(error, asyncio.CancelledError | KeyboardInterrupt)
            await keeper.end("interrupted" if stopped else "failed", STOPPED_HERE if stopped else str(error))
        raise
    if keeper is not None:
        await keeper.end("failed" if outcome.error else "finished", outcome.error, RunSummary.of(outcome))
    return FolderRun(outcome, store.folder, report_path, record_path)


class _Keeper:
    """The record of a run no manager keeps (a command-line run): running from now, its lease renewed while
    it goes on, its end recorded."""

    def __init__(self, store: RunStore, plan: RunPlan, recorded: RunInfo | None) -> None:
        self.store = store
        self.token = new_owner_token()
        self.info = RunInfo.of(plan, "running") if recorded is None else recorded
        self.info.status, self.info.started_at = "running", now_text()
        self.info.error = self.info.ended_at = self.info.summary = None
        store.take_lease(Lease.of_this_process(self.token, time.time()))
        store.save(self.info)
        self.beat = asyncio.get_running_loop().create_task(self._renew())

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(LEASE_BEAT_SECONDS)
            self.store.take_lease(Lease.of_this_process(self.token, time.time()))

    async def end(self, status: RunStatus, error: str | None, summary: RunSummary | None = None) -> None:
        self.beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.beat
        self.store.end(self.info, status, error, summary)
        self.store.drop_lease(self.token)
