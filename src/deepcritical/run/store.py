"""A run's folder, and ``RunStore``, the only writer of it: ``request.json`` (the run's request, written
as the run starts, so ``research --resume`` needs nothing else), ``status.json`` (a ``RunInfo``, replaced
whole so a reader never sees half of it), ``events.jsonl`` (every progress event, numbered from 1, the
numbers being the SSE event ids; a Redis stream only mirrors it), ``lease.json`` (who owns the run while it
is queued or running), ``checkpoint.json`` (after every stage), ``RESUME.txt`` (the command that continues
the run, until it ended) and, once it finished, the outputs
(``report.md``, ``run.json`` and the exports). Readable by anything that has the folder: the command
line, the page, MCP, a later server. Every run, wherever it was started, keeps one."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import structlog
from pydantic import BaseModel, Field, ValidationError

from deepcritical.config import Settings
from deepcritical.errors import ConfigError
from deepcritical.models import SourceName
from deepcritical.options import ReaderName
from deepcritical.outputs import Verdict
from deepcritical.reading.frame import QuestionFrame, frame_question
from deepcritical.run.checkpoint import (
    CHECKPOINT_FILE,
    Checkpoint,
    CheckpointSink,
    folder_sink,
    has_checkpoint,
    one_error,
    read_checkpoint,
    remove_checkpoint,
)
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.run.progress import event_line
from deepcritical.run.record import write_outputs
from deepcritical.run.request import REQUEST_FILE, RunPlan, RunRequest
from deepcritical.text import one_line

logger = structlog.get_logger(__name__)

RunStatus = Literal["queued", "running", "finished", "failed", "cancelled", "interrupted"]
ENDED: frozenset[RunStatus] = frozenset({"finished", "failed", "cancelled", "interrupted"})
RUN_ID = re.compile(r"^research-\d{8}-\d{6}-[0-9a-f]{6}$")
# The store's own files in a run folder; every other file there is an output to download.
STATUS_FILE, EVENTS_FILE, LEASE_FILE = "status.json", "events.jsonl", "lease.json"
# What to run when the run did not end (killed, its machine lost): written with the request as the run starts,
# removed with the checkpoint once its outputs are written, so a folder without a report always says it.
RESUME_FILE = "RESUME.txt"
OWN_FILES = frozenset({STATUS_FILE, EVENTS_FILE, LEASE_FILE, REQUEST_FILE, CHECKPOINT_FILE, RESUME_FILE})
# The owner of a queued or running run rewrites its lease this often; a lease not rewritten for
# LEASE_STALE_SECONDS belongs to an owner that is gone (killed, its machine lost).
LEASE_BEAT_SECONDS = 10.0
LEASE_STALE_SECONDS = 60.0


def resume_note(folder: Path) -> str:
    """What ``RESUME.txt`` says: the command that continues the run in ``folder`` if it did not end."""
    return (
        "This run has not ended yet: it is running, or it was stopped (killed, interrupted, its machine lost)\n"
        "before its report was written. If it was stopped, continue it where it stopped (from its request\n"
        "when it was stopped before its first checkpoint) with:\n\n"
        f"    deepcritical research --resume {shlex.quote(str(folder.resolve()))}\n"
    )


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
    frame: QuestionFrame | None = Field(default=None, description="The question's PICO, read when it was asked")
    status: RunStatus
    demo: bool
    max_iterations: int
    sources: list[SourceName]
    # A status.json from before the choice has none: its run was read by the linear reader, the only one then.
    reader: ReaderName = Field(default="linear", description="How each study's result was read")
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
            frame=frame_question(plan.request.question),
            status=status,
            demo=plan.settings.demo_mode,
            max_iterations=plan.settings.max_iterations,
            sources=list(plan.settings.sources),
            reader=plan.settings.reader,
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


class RunStore:
    """One run's folder, and the only writer of it (see the module docstring). ``redact`` is applied to
    everything written that can hold outside text or a configured secret (the status, the events)."""

    def __init__(self, folder: Path, redact: Callable[[Any], Any] = lambda data: data) -> None:
        self.folder = folder
        self._redact = redact
        self._events: list[StoredEvent] | None = None  # None until read from disk (a run of an earlier start)

    @classmethod
    def found_in(
        cls, runs_dir: Path, redact: Callable[[Any], Any] = lambda data: data
    ) -> list[tuple[RunStore, RunInfo]]:
        """Every readable run folder under ``runs_dir`` with its record, oldest first."""
        found: list[tuple[RunStore, RunInfo]] = []
        for status_path in runs_dir.glob(f"*/{STATUS_FILE}"):
            try:
                info = RunInfo.model_validate_json(status_path.read_bytes())
            except (OSError, ValidationError) as error:
                logger.warning("run_folder_unreadable", folder=str(status_path.parent), error=one_line(str(error)))
                continue
            if info.run_id != status_path.parent.name or not RUN_ID.match(info.run_id):
                continue
            found.append((cls(status_path.parent, redact), info))
        return sorted(found, key=lambda pair: (pair[1].created_at, pair[1].run_id))

    @classmethod
    def create(cls, folder: Path, redact: Callable[[Any], Any] = lambda data: data) -> RunStore:
        """A new run's folder (it must not exist yet)."""
        folder.mkdir(parents=True)
        store = cls(folder, redact)
        store._events = []
        return store

    # The request and the record

    def write_request(self, request: RunRequest) -> None:
        """Record the run's request as the run starts: a run killed at any point is resumed from it."""
        self.folder.mkdir(parents=True, exist_ok=True)
        _write_whole(self.folder / REQUEST_FILE, request.model_dump_json(indent=2) + "\n", strict=True)
        _write_whole(self.folder / RESUME_FILE, resume_note(self.folder), strict=True)

    def request(self) -> RunRequest | None:
        """The run's request; None when the folder has none (a run of a version that did not record it)."""
        try:
            return RunRequest.model_validate_json((self.folder / REQUEST_FILE).read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValidationError) as error:  # damaged or edited by hand: the file's one line
            raise ConfigError(f"{REQUEST_FILE} of the run cannot be read ({one_error(error)})") from None

    def status(self) -> RunInfo | None:
        """The run's record as the folder has it now; None when it has none (yet)."""
        try:
            return RunInfo.model_validate_json((self.folder / STATUS_FILE).read_bytes())
        except (OSError, ValidationError):
            return None

    def end(self, info: RunInfo, status: RunStatus, error: str | None, summary: RunSummary | None) -> StoredEvent:
        """Record the run's end: its record (``info`` updated in place and saved) and its last event."""
        info.status, info.error, info.summary, info.ended_at = status, error, summary, now_text()
        self.save(info)
        return self.append(RunEnded(status=status, error=error, summary=summary).model_dump(mode="json"))

    # Checkpoints and outputs

    def checkpoint_sink(self) -> CheckpointSink:
        """Writes each of the run's checkpoints into the folder."""
        return folder_sink(self.folder)

    def has_checkpoint(self) -> bool:
        return has_checkpoint(self.folder)

    def checkpoint(self) -> Checkpoint | None:
        """The run's last checkpoint; None when it saved none."""
        return read_checkpoint(self.folder) if has_checkpoint(self.folder) else None

    def write_outputs(self, outcome: ResearchOutcome, files: Mapping[str, str] | None = None) -> tuple[Path, Path]:
        """Write the report, the run record, the exports and ``files`` (an addendum's); the checkpoint goes
        (nothing is left to resume)."""
        paths = write_outputs(outcome, self.folder, files)
        remove_checkpoint(self.folder)
        (self.folder / RESUME_FILE).unlink(missing_ok=True)
        return paths

    # Events

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
        """Number the event and add it to ``events.jsonl``, with its line (``line``: the one wording the page
        and MCP show)."""
        events = self.events
        stored = StoredEvent(
            id=len(events) + 1, data=self._redact({**data, "line": data.get("line") or event_line(data)})
        )
        # Small appends to a local file: written synchronously so the file order is the event order. A folder
        # that cannot be written loses the file, never the event: followers (SSE, MCP) still get it, to the end.
        try:
            with (self.folder / EVENTS_FILE).open("a", encoding="utf-8") as handle:
                handle.write(stored.model_dump_json() + "\n")
        except OSError as error:
            logger.warning("run_event_not_written", folder=str(self.folder), error=str(error))
        events.append(stored)
        return stored

    # The status record and the lease

    def save(self, info: RunInfo, redact: Callable[[Any], Any] | None = None) -> None:
        """Replace ``status.json`` whole, so a reader never sees half of it. A folder that cannot be written
        keeps the record in memory only (a restart lists the run as interrupted)."""
        data = (redact or self._redact)(info.model_dump(mode="json"))
        _write_whole(self.folder / STATUS_FILE, json.dumps(data, indent=2) + "\n")

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
        return sorted(name for name in names if name not in OWN_FILES and not name.startswith("."))


def without_paths(message: str | None, settings: Settings, *folders: Path) -> str | None:
    """A message for clients: the server's own directories (its home, its runs folder) named by what sets
    them, never by their path, which would tell a client how the server's machine is laid out."""
    if not message:
        return message
    named = [(folder, "the runs folder") for folder in folders] + [(settings.home, "$DEEPCRITICAL_HOME")]
    for folder, name in sorted(named, key=lambda pair: -len(str(pair[0]))):  # the longest path first
        for spelled in dict.fromkeys((str(folder.resolve()), str(folder))):
            message = message.replace(spelled, name)
    return message


def _write_whole(target: Path, text: str, *, strict: bool = False) -> None:
    """Replace ``target`` by a complete new copy (a partial file renamed over it). Not ``strict``: a folder
    that cannot be written loses the file, not the run (logged)."""
    partial = target.with_name(f".{target.name}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, target)
    except OSError as error:
        if strict:
            raise
        logger.warning("run_file_not_written", file=str(target), error=str(error))
