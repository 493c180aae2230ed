"""A run's folder as the run manager keeps it: ``status.json`` (a ``RunInfo``, replaced whole so a reader
never sees half of it), ``events.jsonl`` (every progress event, numbered from 1, the numbers being the SSE
event ids) and, once it finished, what ``write_outputs`` wrote (``report.md``, ``run.json`` and the
exports). Readable by anything that has the folder: the page, MCP, a later server."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import structlog
from pydantic import BaseModel, Field, ValidationError

from deepcritical.models import SourceName
from deepcritical.outputs import Verdict
from deepcritical.reading.frame import QuestionFrame
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.text import one_line

logger = structlog.get_logger(__name__)

RunStatus = Literal["queued", "running", "finished", "failed", "cancelled", "interrupted"]
ENDED: frozenset[RunStatus] = frozenset({"finished", "failed", "cancelled", "interrupted"})
RUN_ID = re.compile(r"^research-\d{8}-\d{6}-[0-9a-f]{6}$")
# The manager's own files in a run folder; every other file there is an output to download.
STATUS_FILE, EVENTS_FILE = "status.json", "events.jsonl"


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
    """A run's ``status.json``."""

    run_id: str
    question: str
    frame: QuestionFrame | None = Field(default=None, description="The question's PICO, read when it was asked")
    status: RunStatus
    demo: bool
    max_iterations: int
    sources: list[SourceName]
    created_at: str
    started_at: str | None = None
    ended_at: str | None = None
    error: str | None = None
    summary: RunSummary | None = None


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

    def outputs(self) -> list[str]:
        """The run's outputs, by name (``report.md``, ``run.json`` and any other export)."""
        if not self.folder.is_dir():
            return []
        names = (path.name for path in self.folder.iterdir() if path.is_file())
        return sorted(name for name in names if name not in (STATUS_FILE, EVENTS_FILE) and not name.startswith("."))
