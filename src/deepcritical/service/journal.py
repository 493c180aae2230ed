"""A run's folder as the run manager keeps it: ``status.json`` (a ``RunInfo``, replaced whole so a reader
never sees half of it), ``events.jsonl`` (every progress event, numbered from 1, the numbers being the SSE
event ids) and, once it finished, what ``write_outputs`` wrote (``report.md``, ``run.json`` and the
exports). Readable by anything that has the folder: the page, MCP, a later server."""

from __future__ import annotations

import json
import os
import re
import socket
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import structlog
from pydantic import BaseModel, ValidationError

from deepcritical.models import SourceName
from deepcritical.outputs import Verdict
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.run.request import RunPlan
from deepcritical.text import one_line

logger = structlog.get_logger(__name__)

RunStatus = Literal["queued", "running", "finished", "failed", "cancelled", "interrupted"]
ENDED: frozenset[RunStatus] = frozenset({"finished", "failed", "cancelled", "interrupted"})
RUN_ID = re.compile(r"^research-\d{8}-\d{6}-[0-9a-f]{6}$")
# The manager's own files in a run folder; every other file there is an output to download.
STATUS_FILE, EVENTS_FILE, LEASE_FILE = "status.json", "events.jsonl", "lease.json"
# The owner of a queued or running run rewrites its lease this often; a lease not rewritten for
# LEASE_STALE_SECONDS belongs to an owner that is gone (killed, its machine lost).
LEASE_BEAT_SECONDS = 10.0
LEASE_STALE_SECONDS = 60.0


class RunSummary(BaseModel):
    """What a finished run amounted to, small enough to list and to send as an event."""

    stop_reason: str
    iterations: int
    evidence: int
    references: int
    sources: dict[str, int]
    degraded: bool
    report_fallback: bool
    llm_requests: int
    seconds: float
    verdict: Verdict | None = None

    @classmethod
    def of(cls, outcome: ResearchOutcome) -> RunSummary:
        return cls(
            stop_reason=outcome.stop_reason,
            iterations=outcome.iterations,
            evidence=len(outcome.evidence),
            references=len(outcome.report.references),
            sources=outcome.sources,
            degraded=outcome.degraded,
            report_fallback=outcome.report_fallback,
            llm_requests=outcome.llm_usage.requests,
            seconds=outcome.timings.get("total", 0.0),
            verdict=outcome.verdict,
        )


class RunInfo(BaseModel):
    """A run's ``status.json``: built by ``of`` alone, from the run's plan."""

    run_id: str
    question: str
    status: RunStatus
    demo: bool
    max_iterations: int
    sources: list[SourceName]
    created_at: str
    started_at: str | None = None
    ended_at: str | None = None
    error: str | None = None
    summary: RunSummary | None = None

    @classmethod
    def of(cls, plan: RunPlan, status: RunStatus = "queued") -> RunInfo:
        """The record of a run of ``plan``, created now."""
        return cls(
            run_id=plan.run_id,
            question=plan.request.question,
            status=status,
            demo=plan.settings.demo_mode,
            max_iterations=plan.settings.max_iterations,
            sources=list(plan.settings.sources),
            created_at=now_text(),
        )


def now_text() -> str:
    """The time now, as the records write it (UTC, to the second)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine (signal 0 checks, sends nothing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


class Lease(BaseModel):
    """Who owns a queued or running run (``lease.json``): the owning process (its id, its machine and a token
    drawn when it started, so a reused process id is not taken for the owner) and when it last said so."""

    pid: int
    host: str
    token: str
    beat_at: float  # seconds since the epoch

    @classmethod
    def of_this_process(cls, token: str, now: float) -> Lease:
        return cls(pid=os.getpid(), host=socket.gethostname(), token=token, beat_at=now)

    def owner_gone(self, now: float, *, alive: Callable[[int], bool] = process_alive) -> bool:
        """The owner is gone when its process is dead on this machine, or its heartbeat is too old."""
        if self.host == socket.gethostname() and not alive(self.pid):
            return True
        return now - self.beat_at > LEASE_STALE_SECONDS


def new_owner_token() -> str:
    return uuid.uuid4().hex


class RunQueued(BaseModel):
    """The run waits for a free slot; ``position`` 1 starts next."""

    kind: Literal["queued"] = "queued"
    position: int


class RunEnded(BaseModel):
    """The last event of every run, whatever ended it."""

    kind: Literal["run_ended"] = "run_ended"
    status: RunStatus
    error: str | None = None
    summary: RunSummary | None = None


class StoredEvent(BaseModel):
    """One line of ``events.jsonl``: the event's number (its SSE id) and the event as JSON."""

    id: int
    data: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.data.get("kind", "message"))


class RunJournal:
    """One run's folder: its record and its numbered events."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._events: list[StoredEvent] | None = None  # None until read from disk (a run of an earlier start)

    @classmethod
    def found_in(cls, runs_dir: Path) -> list[tuple[RunJournal, RunInfo]]:
        """Every readable run folder under ``runs_dir`` with its record, oldest first."""
        found: list[tuple[RunJournal, RunInfo]] = []
        for status_path in runs_dir.glob(f"*/{STATUS_FILE}"):
            try:
                info = RunInfo.model_validate_json(status_path.read_bytes())
            except (OSError, ValidationError) as error:
                logger.warning("run_folder_unreadable", folder=str(status_path.parent), error=one_line(str(error)))
                continue
            if info.run_id != status_path.parent.name or not RUN_ID.match(info.run_id):
                continue
            found.append((cls(status_path.parent), info))
        return sorted(found, key=lambda pair: (pair[1].created_at, pair[1].run_id))

    @classmethod
    def create(cls, folder: Path) -> RunJournal:
        folder.mkdir(parents=True)
        journal = cls(folder)
        journal._events = []
        return journal

    @property
    def events(self) -> list[StoredEvent]:
        if self._events is None:
            path = self.folder / EVENTS_FILE
            lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
            self._events = []
            for line in filter(str.strip, lines):
                try:
                    self._events.append(StoredEvent.model_validate_json(line))
                except ValidationError:  # a line cut short by a crash: the events before it still count
                    logger.warning("run_event_unreadable", folder=str(self.folder))
        return self._events

    def append(self, data: dict[str, Any]) -> StoredEvent:
        events = self.events
        stored = StoredEvent(id=len(events) + 1, data=data)
        # Small appends to a local file: written synchronously so the file order is the event order. A folder
        # that cannot be written loses the file, never the event: followers (SSE, MCP) still get it, to the end.
        try:
            with (self.folder / EVENTS_FILE).open("a", encoding="utf-8") as handle:
                handle.write(stored.model_dump_json() + "\n")
        except OSError as error:
            logger.warning("run_event_not_written", folder=str(self.folder), error=str(error))
        events.append(stored)
        return stored

    def save(self, info: RunInfo, redact: Callable[[Any], Any] = lambda data: data) -> None:
        """Replace ``status.json`` whole, so a reader never sees half of it. A folder that cannot be written
        keeps the record in memory only (a restart lists the run as interrupted)."""
        target = self.folder / STATUS_FILE
        partial = target.with_name(f".{STATUS_FILE}.partial")
        try:
            partial.write_text(json.dumps(redact(info.model_dump(mode="json")), indent=2) + "\n", encoding="utf-8")
            os.replace(partial, target)
        except OSError as error:
            logger.warning("run_status_not_written", folder=str(self.folder), error=str(error))

    def take_lease(self, lease: Lease) -> None:
        """Write (or renew) the run's lease, whole: a reader never sees half of it."""
        _write_whole(self.folder / LEASE_FILE, lease.model_dump_json())

    def lease(self) -> Lease | None:
        """The run's lease; None when it has none (an ended run, or one of a version without leases)."""
        try:
            return Lease.model_validate_json((self.folder / LEASE_FILE).read_bytes())
        except (OSError, ValidationError):
            return None

    def drop_lease(self, token: str) -> None:
        """Remove the lease if this owner (``token``) holds it."""
        held = self.lease()
        if held is not None and held.token == token:
            (self.folder / LEASE_FILE).unlink(missing_ok=True)

    def outputs(self) -> list[str]:
        """The run's outputs, by name (``report.md``, ``run.json`` and any other export)."""
        if not self.folder.is_dir():
            return []
        names = (path.name for path in self.folder.iterdir() if path.is_file())
        own = (STATUS_FILE, EVENTS_FILE, LEASE_FILE)
        return sorted(name for name in names if name not in own and not name.startswith("."))


def _write_whole(target: Path, text: str) -> None:
    """Replace ``target`` by a complete new copy (a partial file renamed over it)."""
    partial = target.with_name(f".{target.name}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, target)
    except OSError as error:
        logger.warning("run_file_not_written", file=str(target), error=str(error))
