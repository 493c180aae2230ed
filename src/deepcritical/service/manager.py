"""Runs started from the page, the API or MCP: queued, run at most ``max_concurrent_runs`` at a time,
and recorded in a runs folder (``run.store``) so that a run outlives the browser that started it and a
restarted server still lists it. Each run goes through ``run.execute.run_to_folder``, like a run from the
command line. Each queued or running run's folder holds a lease naming its owner (process, machine, start
token) that the owner renews; a run whose owner is gone (its process dead, or its lease not renewed for
``LEASE_STALE_SECONDS``) is marked ``interrupted`` at the next start, never silently lost. A run another
live process owns (``serve`` and ``deepcritical mcp`` on one runs folder) is listed as that process has it.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from pathlib import Path

import structlog
from pydantic_core import PydanticSerializationError

from deepcritical.config import Settings
from deepcritical.errors import ConfigError, DeepCriticalError
from deepcritical.evidence.resources import Resources
from deepcritical.models import SourceName
from deepcritical.run import setup
from deepcritical.run.checkpoint import has_checkpoint
from deepcritical.run.execute import ClientFactory, RunSourceFactory, run_to_folder
from deepcritical.run.request import RunPlan, RunRequest, RunRequestError, checked_sources
from deepcritical.run.store import (
    LEASE_BEAT_SECONDS,
    RUN_ID,
    STATUS_FILE,
    Lease,
    RunInfo,
    RunQueued,
    RunStatus,
    RunStore,
    RunSummary,
    StoredEvent,
    new_owner_token,
    now_text,
    without_paths,
)
from deepcritical.service.entries import (
    STOPPED,
    QueueFullError,
    RunEndedError,
    RunEntry,
    RunNotFoundError,
)
from deepcritical.service.run_events import foreign_events, own_events
from deepcritical.text import one_line

logger = structlog.get_logger(__name__)

# Beyond this many waiting runs a new one is refused rather than left to wait for hours.
MAX_QUEUED_RUNS = 20


def _listable(info: RunInfo) -> bool:
    """Whether a run's record can be sent to a client; one that cannot (text that is not UTF-8) is left out of
    the list, and logged, rather than failing the list for every client."""
    try:
        info.model_dump_json()
    except PydanticSerializationError:
        logger.warning("run_not_listed", run=info.run_id[:64], reason="its record cannot be written as JSON")
        return False
    return True


class RunManager:
    """Starts, queues, cancels and records runs. Use as ``async with RunManager(...) as manager``: entering
    reads the runs folder (marking runs a stopped server left unfinished as interrupted); leaving
    interrupts the runs still going."""

    def __init__(
        self,
        settings: Settings,
        *,
        runs_dir: Path | None = None,
        client_factory: ClientFactory = setup.http_client,
        run_source: RunSourceFactory | None = None,
        max_queued: int = MAX_QUEUED_RUNS,
        clock: Callable[[], float] = time.time,
        resources: Resources | None = None,
    ) -> None:
        self.settings = settings
        # The process's redactor, embedding service and store connection (its own, closed on leaving, unless given)
        self.resources = resources or Resources(settings)
        self._owns_resources = resources is None
        self.runs_dir = runs_dir if runs_dir is not None else settings.home / "runs"
        self.max_concurrent = settings.max_concurrent_runs
        self.max_queued = max_queued
        self._client_factory = client_factory
        self._run_source = run_source
        self._redact = self.resources.redactor
        self._runs: dict[str, RunEntry] = {}  # oldest first
        self._queue: deque[str] = deque()
        self._running: set[str] = set()
        self._clock = clock
        self._token = new_owner_token()  # this manager's runs' leases carry it
        self._heartbeat: asyncio.Task[None] | None = None

    async def __aenter__(self) -> RunManager:
        self.open()
        self._heartbeat = asyncio.create_task(self._beat(), name="run leases")
        if self.settings.chroma_host is None:
            # Chroma's embedded clients share one System per directory, created on the first client and
            # stopped when the last one closes, with no lock around either: runs opening and closing their
            # stores at the same moment can break each other. A client held for the server's whole life
            # creates the System once, before any run, and keeps it from ever being stopped under a run: the
            # process's connection, which every run's store uses.
            await asyncio.to_thread(self.resources.connection)
        return self

    async def __aexit__(self, *_: object) -> None:
        try:
            await self.close()
        finally:
            if self._heartbeat is not None:
                self._heartbeat.cancel()
                await asyncio.gather(self._heartbeat, return_exceptions=True)
            if self._owns_resources:
                await asyncio.to_thread(self.resources.close)

    # Starting and stopping

    def open(self) -> None:
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        self._discover()

    def _discover(self) -> None:
        """Take up the runs in the folder this manager does not know yet: at start every run there, later
        those another process started (a command-line run, another server's)."""
        for store, info in RunStore.found_in(self.runs_dir, self._redact.value):
            if info.run_id in self._runs:
                continue
            run = RunEntry(info=info, store=store)
            self._runs[info.run_id] = run
            if run.ended:
                continue
            lease = store.lease()
            if lease is not None and not lease.owner_gone(self._clock()):
                run.foreign = True  # another live process (a server, ``deepcritical mcp``, the CLI) runs it
                continue
            if lease is not None:
                store.drop_lease(lease.token)
            self._end(run, "interrupted", STOPPED["interrupted"])  # its owner stopped, or was killed

    def renew_leases(self) -> None:
        """Say again that this process owns its queued and running runs."""
        for run in list(self._runs.values()):
            if not run.ended and not run.foreign:
                self._lease(run)

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(LEASE_BEAT_SECONDS)
            self.renew_leases()

    def _lease(self, run: RunEntry) -> None:
        run.store.take_lease(Lease.of_this_process(self._token, self._clock()))

    async def close(self) -> None:
        """Interrupt every run still queued or running, and record it as interrupted."""
        while self._queue:
            self._end(self._runs[self._queue.popleft()], "interrupted", STOPPED["interrupted"])
        tasks = []
        for run_id in list(self._running):
            run = self._runs[run_id]
            if run.task is not None:
                run.stop_as = "interrupted"
                run.task.cancel()
                tasks.append(run.task)
        await asyncio.gather(*tasks, return_exceptions=True)

    # Requests

    def accept(self, request: RunRequest) -> RunPlan:
        """The plan of ``request`` as this server runs it; a RunRequestError naming the field when a value is
        outside what this server allows (or its settings would not validate)."""
        request = request.within(self.settings)
        try:
            return request.plan(self.settings)
        except ConfigError as error:
            raise RunRequestError("request", str(error)) from error

    def check_sources(self, sources: Sequence[str] | None) -> list[SourceName]:
        """The sources to search: all enabled ones for None, else the named ones if this server enables them."""
        return checked_sources(None if sources is None else list(sources), self.settings)

    def create(self, request: RunRequest, *, plan: RunPlan | None = None) -> RunInfo:
        """Queue a run of ``request`` and return its record; it starts at once when a slot is free. ``plan``: what
        ``accept`` already made of this request (building a plan's settings again costs several ms on the event
        loop, per run)."""
        plan = plan or self.accept(request)
        if len(self._queue) >= self.max_queued:
            raise QueueFullError(f"{len(self._queue)} runs are waiting already; try again later")
        while plan.run_id in self._runs:  # two runs in one second share the time part; the random part differs
            plan = self.accept(request)
        plan = replace(plan, folder=self.runs_dir / plan.run_id)
        info = RunInfo.of(plan)
        run = RunEntry(info=info, store=RunStore.create(plan.folder, self._redact.value), plan=plan)
        try:
            self._lease(run)
            run.store.save(run.info)
            run.store.write_request(plan.request)
        except BaseException:
            # A run that cannot be recorded is not a run: it never joins the list (which every client reads),
            # and its folder, half written, goes.
            shutil.rmtree(plan.folder, ignore_errors=True)
            raise
        self._runs[plan.run_id] = run
        self._queue.append(plan.run_id)
        self._dispatch()
        return info

    def get(self, run_id: str) -> RunInfo:
        return self._run(run_id).info

    def all_runs(self) -> list[RunInfo]:
        """Every run, newest first."""
        self._discover()
        runs = sorted(self._runs.values(), key=lambda run: (run.info.created_at, run.info.run_id), reverse=True)
        return [info for run in runs if _listable(info := self._run(run.info.run_id).info)]

    def position(self, run_id: str) -> int | None:
        """1 for the next queued run to start; None when the run is not waiting."""
        return self._run(run_id).position

    def files(self, run_id: str) -> list[str]:
        """The run's outputs, by name (``report.md``, ``run.json`` and any other export)."""
        return self._run(run_id).store.outputs()

    def file(self, run_id: str, name: str) -> Path:
        """One output of the run; RunNotFoundError when the run has no such file."""
        if name not in self.files(run_id):
            raise RunNotFoundError(f"run {run_id} has no file {name!r}")
        return self._run(run_id).store.folder / name

    async def cancel(self, run_id: str) -> RunInfo:
        """Stop a queued or running run; it is recorded as cancelled."""
        run = self._run(run_id)
        if run.ended:
            raise RunEndedError(f"run {run_id} has ended already ({run.info.status})")
        if run.foreign:
            raise RunEndedError(f"run {run_id} is run by another process (a server on this runs folder); stop it there")
        if run_id in self._queue:
            self._queue.remove(run_id)
            self._end(run, "cancelled", STOPPED["cancelled"])
            self._dispatch()
        elif run.task is not None:
            run.stop_as = "cancelled"
            run.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await run.task
        return run.info

    def resume(self, run_id: str) -> RunInfo:
        """Queue an interrupted run again; it continues from its last checkpoint (no finished search is
        sent again, its budgets carry over), or, stopped before its first, starts over from the request its
        folder recorded. RunEndedError when the run is not interrupted."""
        run = self._run(run_id)
        if run.info.status != "interrupted":
            raise RunEndedError(f"run {run_id} is {run.info.status}; only an interrupted run can be resumed")
        try:
            if not has_checkpoint(run.store.folder) and run.store.request() is None:  # a folder of an older version
                raise RunEndedError(f"run {run_id} stopped before its first checkpoint; start it again instead")
            run.store.checkpoint()  # a damaged checkpoint or request is said now, in one line, not mid-run
            self._plan_of(run)
        except ConfigError as error:
            # The checkpoint's reader words it for the command line ("--resume FOLDER: ..."): the reason alone.
            reason = without_paths(
                str(error).removeprefix(f"--resume {run.store.folder}: "), self.settings, self.runs_dir
            )
            raise RunEndedError(f"run {run_id} cannot be resumed: {reason}") from None
        if len(self._queue) >= self.max_queued:
            raise QueueFullError(f"{len(self._queue)} runs are waiting already; try again later")
        run.info.status, run.info.error, run.info.ended_at, run.info.summary = "queued", None, None, None
        run.resume, run.stop_as = True, "cancelled"
        self._lease(run)
        run.store.save(run.info)
        self._queue.append(run_id)
        self._dispatch()
        return run.info

    async def follow(self, run_id: str, after: int = 0) -> AsyncIterator[StoredEvent]:
        """The run's events numbered above ``after``, as they come, until its last (``run_ended``)."""
        run = self._run(run_id)
        if run.foreign:
            events = foreign_events(run.store.folder, after, lambda: self._run(run_id).ended)
        else:
            events = own_events(run, after)
        async for stored in events:
            yield stored

    async def wait(self, run_id: str) -> RunInfo:
        """The run's record once it has ended."""
        async for _ in self.follow(run_id, after=len(self._run(run_id).store.events)):
            pass
        return self.get(run_id)

    # Internals

    def _run(self, run_id: str) -> RunEntry:
        if RUN_ID.match(run_id) and run_id not in self._runs:
            self._discover()
        run = self._runs.get(run_id) if RUN_ID.match(run_id) else None
        if run is None:
            raise RunNotFoundError(f"no run has the id {run_id!r}")
        if run.foreign and not run.ended:  # its owner changes the record: read it as the folder has it now
            with contextlib.suppress(OSError, ValueError):
                run.info = RunInfo.model_validate_json((run.store.folder / STATUS_FILE).read_bytes())
        return run

    def _plan_of(self, run: RunEntry) -> RunPlan:
        """The run's plan; a run of an earlier start is planned again from its record."""
        if run.plan is None:
            recorded = run.store.request()
            info = run.info  # a run of a version that recorded no request: its question and two options
            request = recorded or RunRequest(
                question=info.question, max_iterations=info.max_iterations, sources=list(info.sources)
            )
            run.plan = request.plan(self.settings, run_id=run.info.run_id, folder=run.store.folder)
        return run.plan

    def _dispatch(self) -> None:
        """Start waiting runs while slots are free, then tell each waiting run its new place."""
        while self._queue and len(self._running) < self.max_concurrent:
            run = self._runs[self._queue.popleft()]
            run.position = None
            run.info.status, run.info.started_at = "running", now_text()
            run.store.save(run.info)
            self._running.add(run.info.run_id)
            run.task = asyncio.create_task(self._execute(run), name=f"run {run.info.run_id}")
        for position, run_id in enumerate(self._queue, start=1):
            run = self._runs[run_id]
            if run.position != position:
                run.position = position
                run.store.append(RunQueued(position=position).model_dump(mode="json"))  # the store redacts it
                run.notify()

    async def _execute(self, run: RunEntry) -> None:
        info = run.info
        settings = self._plan_of(run).settings

        try:
            done = await run_to_folder(
                info.question,
                settings,
                run_id=info.run_id,
                store=run.store,  # the run's events go into its folder; followers are told of each
                on_stored=lambda _stored: run.notify(),
                request=self._plan_of(run).request,
                client_factory=self._client_factory,
                run_source=self._run_source,
                resume=run.resume,
                resources=self.resources,
            )
            outcome = done.outcome
            self._end(run, "failed" if outcome.error else "finished", outcome.error, RunSummary.of(outcome))
        except asyncio.CancelledError:
            self._end(run, run.stop_as, STOPPED[run.stop_as])
        except DeepCriticalError as error:
            self._end(run, "failed", self._redact(one_line(str(error))))
        except OSError as error:  # the run's folder cannot be written: the reason, not the server's path
            logger.warning("run_folder_unwritable", run_id=info.run_id, error=str(error))
            self._end(run, "failed", f"cannot write the run's folder ({error.strerror or type(error).__name__})")
        except Exception as error:  # a crash fails this run only; the server and the other runs go on
            logger.exception("run_crashed", run_id=info.run_id)
            self._end(run, "failed", self._redact(one_line(f"{type(error).__name__}: {error}")))
        finally:
            self._running.discard(info.run_id)
            self._dispatch()

    def _end(self, run: RunEntry, status: RunStatus, error: str | None, summary: RunSummary | None = None) -> None:
        if run.ended:
            return
        run.position = None
        run.store.end(run.info, status, without_paths(error, self.settings, self.runs_dir), summary)
        run.store.drop_lease(self._token)
        run.notify()
