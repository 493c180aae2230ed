"""Checkpoints: what a run has done so far, written atomically to its folder after every stage, so a run
killed at any point (SIGKILL, a lost machine, a stopped server) continues where it stopped.

``checkpoint.json`` holds the run's state (iteration, queries run, searches, assessments, plans, agent
statistics, errors), its collected evidence (whole items, so the resumed run needs nothing from the store
it had not already written there), the budgets it has spent (seconds left for the loop and the report, the
model usage counted against the request limit) and, once the loop has ended, why it stopped; after the
report stage, the checked report too. The file is replaced in one ``os.replace`` of a synced temporary
file, so a reader sees the previous checkpoint or the new one, never half of one.

Stages, in order: ``search`` (after each search step; the Brain's turn may go on), ``plan`` (the
iteration's planning turn is over), ``judge`` (the iteration's judgement is in), ``report`` (the report is
written). A run resumed after ``search`` or ``plan`` goes on to that iteration's judgement. It never sends
a finished search again: its queries are in the restored state, and the search stage refuses a query
already run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, TypeAdapter, ValidationError, model_validator
from pydantic_ai.usage import RunUsage

from deepcritical.agents.deps import ResearchDeps
from deepcritical.errors import ConfigError, ResearchError
from deepcritical.models import Evidence
from deepcritical.outputs import CitationAudit, FallbackReason, ResearchReport, StopReason
from deepcritical.run.outcome import CheckpointStage, Resumption
from deepcritical.run.report import CheckedReport
from deepcritical.stages.state import RunState

CHECKPOINT_FILE = "checkpoint.json"
CHECKPOINT_VERSION = 1
# Tests only: after the named checkpoint is written (or, for ``start``, once the run's request and record
# are, before any stage), the run writes ``held`` beside it and waits until ``release`` appears (or it is
# killed), so a test stops a run at a known point without timing anything.
HOLD_VARIABLE = "DEEPCRITICAL_TEST_HOLD_AFTER"
HOLD_POLL_SECONDS = 0.05

_STATE = TypeAdapter(RunState)
_USAGE = TypeAdapter(RunUsage)


class SavedReport(BaseModel):
    """The checked report, once the report stage is over (``run.report.CheckedReport``)."""

    report: ResearchReport
    audit: CitationAudit
    fallback: FallbackReason | None = None
    crash: str | None = None
    pool: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, checked: CheckedReport) -> SavedReport:
        return cls(
            report=checked.report,
            audit=checked.audit,
            fallback=checked.fallback,
            crash=checked.crash,
            pool=list(checked.pool),
        )

    def checked(self) -> CheckedReport:
        return CheckedReport(self.report, self.audit, self.fallback, self.crash, list(self.pool))


class Checkpoint(BaseModel):
    checkpoint_version: int = CHECKPOINT_VERSION
    run_id: str
    question: str
    started_at: str
    written_at: str
    stage: CheckpointStage
    iteration: int
    elapsed_seconds: float = Field(description="Wall-clock seconds the run had taken, over all its attempts")
    loop_seconds_left: float
    report_seconds_left: float
    stop: StopReason | None = Field(default=None, description="Set once the research loop has ended")
    loop_error: str | None = None
    state: dict[str, Any]
    usage: dict[str, Any]
    evidence: list[Evidence]
    recalled_ids: list[str] = Field(default_factory=list)
    report: SavedReport | None = None
    resumptions: list[Resumption] = Field(default_factory=list)

    @model_validator(mode="after")
    def _state_and_usage_readable(self) -> Checkpoint:
        # Checked when the file is read, not when a resumed run restores them: a hand-edited or damaged
        # ``state`` or ``usage`` is the file's one-line error, not a traceback from the middle of a run.
        for name, read in (("state", self.run_state), ("usage", self.run_usage)):
            try:
                read()
            except (ValidationError, TypeError, ValueError) as error:
                raise ValueError(f"{name}: {one_error(error)}") from None
        return self

    @property
    def loop_over(self) -> bool:
        return self.stop is not None

    def run_state(self) -> RunState:
        return _STATE.validate_python(self.state)

    def run_usage(self) -> RunUsage:
        return _USAGE.validate_python(self.usage)


def capture(
    deps: ResearchDeps,
    *,
    run_id: str,
    started_at: datetime,
    elapsed: float,
    stage: CheckpointStage,
    stop: StopReason | None = None,
    loop_error: str | None = None,
    report: CheckedReport | None = None,
    resumptions: list[Resumption] | None = None,
) -> Checkpoint:
    """The run as it stands after ``stage``."""
    state, budget, evidence = deps.state, deps.budget, deps.evidence
    return Checkpoint(
        run_id=run_id,
        question=state.question,
        started_at=started_at.isoformat(),
        written_at=datetime.now(UTC).isoformat(),
        stage=stage,
        iteration=state.iteration,
        elapsed_seconds=round(elapsed, 3),
        loop_seconds_left=max(budget.remaining(), 0.0),
        report_seconds_left=max(budget.remaining(report=True), 0.0),
        stop=stop,
        loop_error=loop_error,
        state=_STATE.dump_python(state, mode="json"),
        usage=_USAGE.dump_python(budget.usage, mode="json"),
        evidence=list(evidence),
        recalled_ids=evidence.recalled_ids,
        report=SavedReport.of(report) if report is not None else None,
        resumptions=list(resumptions or []),
    )


async def restore(deps: ResearchDeps, checkpoint: Checkpoint) -> None:
    """Put the checkpoint's state, evidence and spent budgets into a fresh run's deps. The deadlines
    keep the seconds that were left: time spent while the run was dead does not count against it."""
    saved = checkpoint.run_state()
    for name in saved.__dataclass_fields__:
        setattr(deps.state, name, getattr(saved, name))
    await deps.evidence.restore(checkpoint.evidence, recalled_ids=checkpoint.recalled_ids)
    budget = deps.budget
    now = budget.clock()
    budget.deadline = now + checkpoint.loop_seconds_left
    budget.report_deadline = now + checkpoint.report_seconds_left
    budget.usage = checkpoint.run_usage()


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step: a synced temporary file in the same directory, renamed
    over it, then the directory synced, so a crash leaves the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def write_checkpoint(folder: Path, checkpoint: Checkpoint) -> Path:
    path = folder / CHECKPOINT_FILE
    write_atomic(path, checkpoint.model_dump_json(indent=1) + "\n")
    return path


def read_checkpoint(folder: Path) -> Checkpoint:
    """The run's last checkpoint; a ConfigError naming the problem when there is none to resume."""
    path = folder / CHECKPOINT_FILE
    if not path.is_file():
        if not folder.is_dir():
            raise ConfigError(f"--resume {folder}: no such folder (give the --out folder of the run to continue)")
        if (folder / "run.json").is_file():
            raise ConfigError(f"--resume {folder}: the run there has finished (run.json); there is nothing to resume")
        raise ConfigError(
            f"--resume {folder}: nothing there records a run (no request.json nor {CHECKPOINT_FILE}); "
            f"start it again: research QUESTION --out {folder}"
        )
    try:
        checkpoint = Checkpoint.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError) as error:
        raise ConfigError(f"--resume {folder}: {CHECKPOINT_FILE} cannot be read ({one_error(error)})") from error
    if checkpoint.checkpoint_version != CHECKPOINT_VERSION:
        raise ConfigError(
            f"--resume {folder}: {CHECKPOINT_FILE} has version {checkpoint.checkpoint_version}; "
            f"this version reads {CHECKPOINT_VERSION}"
        )
    return checkpoint


def one_error(error: BaseException) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = first["msg"].removeprefix("Value error, ")  # a validator's own message names its field
        return f"{where}: {message}" if where else message
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def has_checkpoint(folder: Path) -> bool:
    return (folder / CHECKPOINT_FILE).is_file()


def remove_checkpoint(folder: Path) -> None:
    """The run finished and its outputs are written: nothing is left to resume."""
    with contextlib.suppress(FileNotFoundError):
        (folder / CHECKPOINT_FILE).unlink()


CheckpointSink = Callable[[Checkpoint], Awaitable[None]]
# What a run stopped by its disk says: the previous checkpoint stays whole (``write_atomic``).
RESUMABLE = "the last checkpoint is kept: free some space, then resume the run (--resume)"


def folder_sink(folder: Path) -> CheckpointSink:
    """Writes each checkpoint to ``folder`` (off the event loop); honours the test-only hold."""
    hold = os.environ.get(HOLD_VARIABLE, "")

    async def sink(checkpoint: Checkpoint) -> None:
        try:
            await asyncio.to_thread(write_checkpoint, folder, checkpoint)
        except OSError as error:  # a full disk, mostly: the run stops in one line, its last checkpoint whole
            raise ResearchError(
                f"the run stopped: cannot write its checkpoint ({error.strerror or error}); {RESUMABLE}"
            ) from None
        if hold and hold in (checkpoint.stage, f"{checkpoint.stage}:{checkpoint.iteration}"):
            await _held(folder)

    return sink


async def hold_point(folder: Path, name: str) -> None:
    """The test-only hold at a point that is not a checkpoint (``start``)."""
    if os.environ.get(HOLD_VARIABLE, "") == name:
        await _held(folder)


async def _held(folder: Path) -> None:
    (folder / "held").write_text(f"{os.getpid()}\n", encoding="utf-8")
    # Another process releases the hold with a file, which no asyncio.Event can see.
    while not (folder / "release").exists():  # noqa: ASYNC110
        await asyncio.sleep(HOLD_POLL_SECONDS)
    (folder / "held").unlink(missing_ok=True)
    (folder / "release").unlink(missing_ok=True)
