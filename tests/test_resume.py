"""Checkpoints and resume: a run checkpoints after every stage, a run resumed from any checkpoint sends no
finished search again, carries its budgets over and ends with the same kind of report; checkpoints are
written atomically; and ``deepcritical research --resume`` finishes a run killed with SIGKILL."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx2
import pytest
from pydantic_ai.models.function import FunctionModel

from deepcritical.agents.models import AgentModels
from deepcritical.config import Settings
from deepcritical.demo.models import demo_models
from deepcritical.errors import ConfigError, DiskFullError, ResearchError
from deepcritical.models import Evidence
from deepcritical.run import checkpoint as checkpoint_module
from deepcritical.run import store as store_module
from deepcritical.run.checkpoint import (
    CHECKPOINT_FILE,
    HOLD_VARIABLE,
    Checkpoint,
    read_checkpoint,
    write_atomic,
    write_checkpoint,
)
from deepcritical.run.events import RunFinished
from deepcritical.run.execute import run_to_folder
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.run.setup import assemble
from helpers.commands import environment, error_lines, run_cli, wait_for
from helpers.research_fakes import (
    CORPUS,
    QUESTION,
    FakeClock,
    FakeEngine,
    FakeHandler,
    FakeStore,
    assert_cited,
    demo_settings,
    insufficient,
    overlap,
)

pytestmark = pytest.mark.usefixtures("plain_logs")
QUESTION_ASKED = "Can metformin be repurposed for Alzheimer's disease?"


def judged_models() -> AgentModels:
    brain, _judge, report = demo_models()
    return AgentModels(brain=brain, judge=FunctionModel(insufficient), report=report, name="test")


async def research(
    settings: Settings,
    store: FakeStore,
    handler: FakeHandler,
    *,
    resume: Checkpoint | None = None,
    clock: FakeClock | None = None,
) -> tuple[ResearchOutcome, list[Checkpoint]]:
    saved: list[Checkpoint] = []

    async def sink(checkpoint: Checkpoint) -> None:
        saved.append(checkpoint)

    async with httpx2.AsyncClient() as client:
        parts = assemble(
            settings,
            client,
            models=judged_models(),
            store=store,
            handler=handler,
            research_engine=FakeEngine(),
            clock=clock or FakeClock(),
        )
        orchestrator = Orchestrator(parts)
        outcome = None
        async for event in orchestrator.run(QUESTION, checkpoint=sink, resume=resume):
            if isinstance(event, RunFinished):
                outcome = event.outcome
    assert outcome is not None
    return outcome, saved


async def test_a_run_checkpoints_after_every_stage_in_order() -> None:
    settings = demo_settings(DEEPCRITICAL_MAX_ITERATIONS=2)
    outcome, saved = await research(settings, FakeStore(), FakeHandler())
    stages = [(checkpoint.stage, checkpoint.iteration) for checkpoint in saved]
    # Each iteration: its search steps, the end of its planning turn, its judgement; then the loop's end, the report.
    assert ("plan", 1) in stages
    assert ("judge", 1) in stages
    assert ("plan", 2) in stages
    assert stages.index(("search", 1)) < stages.index(("plan", 1)) < stages.index(("judge", 1))
    assert stages[-2:] == [("judge", 2), ("report", 2)]
    assert saved[-1].stop == outcome.stop_reason == "max_iterations"
    assert saved[-1].report is not None
    assert [item.id for item in saved[-1].evidence] == [item.id for item in outcome.evidence]
    assert not outcome.resumed


@pytest.mark.parametrize(
    ("stage", "iteration", "loop_over"),
    [
        ("search", 1, False),
        ("plan", 1, False),
        ("judge", 1, False),
        ("search", 2, False),
        ("judge", 2, True),
        ("report", 2, True),
    ],
)
async def test_a_run_resumed_from_any_checkpoint_sends_no_finished_search_again(
    stage: str, iteration: int, loop_over: bool
) -> None:
    settings = demo_settings(DEEPCRITICAL_MAX_ITERATIONS=2)
    store = FakeStore()
    whole, saved = await research(settings, store, FakeHandler())
    chosen = next(c for c in saved if (c.stage, c.iteration, c.loop_over) == (stage, iteration, loop_over))
    checkpoint = Checkpoint.model_validate_json(chosen.model_dump_json())  # as read back from the file
    handler = FakeHandler()
    resumed, _ = await research(settings, store, handler, resume=checkpoint)

    done = {query.lower() for query in checkpoint.run_state().queries_run}
    assert not done & {query.lower() for query in handler.queries}, "a finished search was sent again"
    assert resumed.resumed
    assert [(r.stage, r.iteration) for r in resumed.resumptions] == [(checkpoint.stage, checkpoint.iteration)]
    assert resumed.run_id == checkpoint.run_id
    assert resumed.started_at == checkpoint.started_at
    # Nothing collected before the kill is lost, and the resumed run is the same kind of run.
    assert {item.id for item in checkpoint.evidence} <= {item.id for item in resumed.evidence}
    assert resumed.stop_reason == whole.stop_reason
    assert resumed.iterations == whole.iterations
    assert resumed.llm_usage.requests >= checkpoint.run_usage().requests
    assert resumed.report.key_findings
    assert_cited(resumed)


async def test_budgets_carry_over_a_resumed_run_with_no_time_left_searches_nothing() -> None:
    settings = demo_settings(DEEPCRITICAL_MAX_ITERATIONS=3)
    store = FakeStore()
    _, saved = await research(settings, store, FakeHandler())
    after_first_judgement = next(c for c in saved if c.stage == "judge" and c.stop is None)
    spent = after_first_judgement.model_copy(update={"loop_seconds_left": 0.0})
    handler = FakeHandler()
    resumed, _ = await research(settings, store, handler, resume=spent)
    assert handler.queries == []
    assert resumed.stop_reason == "time_budget"
    assert resumed.report.key_findings  # the report still has its own share of the time


async def test_the_request_budget_spent_before_the_kill_counts_after_it() -> None:
    settings = demo_settings(DEEPCRITICAL_MAX_ITERATIONS=3, DEEPCRITICAL_MAX_LLM_REQUESTS=8)
    store = FakeStore()
    whole, saved = await research(settings, store, FakeHandler())
    first = next(c for c in saved if c.stage == "judge")
    resumed, _ = await research(settings, store, FakeHandler(), resume=first)
    assert resumed.llm_usage.requests == whole.llm_usage.requests


def test_an_atomic_write_that_fails_leaves_the_previous_file_whole(tmp_path: Path, monkeypatch: Any) -> None:
    path = tmp_path / CHECKPOINT_FILE
    write_atomic(path, '{"old": true}\n')

    def broken_disk(_descriptor: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_disk)
    with pytest.raises(OSError, match="No space"):
        write_atomic(path, '{"new": true}\n' * 1000)
    assert path.read_text(encoding="utf-8") == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == [CHECKPOINT_FILE]  # no temporary file left behind


async def test_a_checkpoint_file_round_trips(tmp_path: Path) -> None:
    _, saved = await research(demo_settings(DEEPCRITICAL_MAX_ITERATIONS=1), FakeStore(), FakeHandler())
    write_checkpoint(tmp_path, saved[-1])
    assert read_checkpoint(tmp_path) == saved[-1]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({}, "nothing there records a run (no request.json nor checkpoint.json)"),
        (None, "no such folder"),
        ({"run.json": "{}"}, "has finished"),
        ({CHECKPOINT_FILE: '{"stage": "plan"}'}, "cannot be read"),
    ],
)
def test_resume_refuses_a_folder_it_cannot_continue_in_one_line(
    tmp_path: Path, files: dict[str, str] | None, expected: str
) -> None:
    folder = tmp_path / "run"
    if files is not None:
        folder.mkdir()
    for name, text in (files or {}).items():
        (folder / name).write_text(text, encoding="utf-8")
    result = run_cli("research", "--resume", str(folder), "--demo", home=tmp_path / "home")
    assert result.returncode == 2
    lines = error_lines(result.stderr)
    assert len(lines) == 1
    assert expected in lines[0]
    assert "--resume" in lines[0]


def test_resume_with_a_question_too_is_refused(tmp_path: Path) -> None:
    result = run_cli("research", "a question", "--resume", str(tmp_path), "--demo", home=tmp_path / "home")
    assert result.returncode == 2
    assert "not both" in result.stderr


def killed_at(tmp_path: Path, hold: str) -> Path:
    """A demo run of ``QUESTION_ASKED`` started from the command line and killed with SIGKILL at ``hold``;
    its folder."""
    home, out, question = tmp_path / "home", tmp_path / "out", QUESTION_ASKED
    process = subprocess.Popen(
        [sys.executable, "-m", "deepcritical", "research", question, "--demo", "--quiet", "--out", str(out)],
        env=environment(home, {HOLD_VARIABLE: hold}),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(out / "held", process)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.communicate()
    assert process.returncode == -signal.SIGKILL
    assert not (out / "run.json").exists()
    return out


@pytest.mark.model
@pytest.mark.parametrize("hold", ["search:1", "judge:1"])
def test_a_run_killed_with_sigkill_is_finished_by_resume(tmp_path: Path, hold: str) -> None:
    home, out = tmp_path / "home", killed_at(tmp_path, hold)
    question = QUESTION_ASKED
    before = read_checkpoint(out)
    assert f"{before.stage}:{before.iteration}" == hold

    result = run_cli("research", "--resume", str(out), "--demo", "--quiet", home=home)
    assert result.returncode == 0, result.stderr[-2000:]
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert record["resumed"] is True
    assert [(r["stage"], r["iteration"]) for r in record["resumptions"]] == [(before.stage, before.iteration)]
    assert record["run_id"] == before.run_id
    assert record["question"] == question
    # Every search the killed run finished is in the record once, first, and was not sent again.
    searched = [query for step in record["searches"] for query in step["queries"]]
    assert searched[: len(before.run_state().queries_run)] == before.run_state().queries_run
    assert len(searched) == len({query.lower() for query in searched})
    # Nothing the killed run collected is lost: each item is there, itself or merged into a better record.
    kept = {key for item in record["evidence"] for key in Evidence.model_validate(item).identity_keys}
    assert all(item.identity_keys & kept for item in before.evidence)
    assert record["report"]["key_findings"]
    assert (out / "report.md").read_text(encoding="utf-8").startswith("#")
    assert not (out / CHECKPOINT_FILE).exists()  # finished: nothing left to resume


@pytest.mark.model
@pytest.mark.parametrize("hold", ["start", "search:1"])
def test_resume_alone_finishes_a_demo_run_killed_at_any_point(tmp_path: Path, hold: str) -> None:
    """Before its first checkpoint ("no checkpoint.json there") or after one (demo mode forgotten: "needs an
    API key"), ``research --resume OUT`` with nothing else finishes the run: its folder recorded the request
    as the run started."""
    out = killed_at(tmp_path, hold)
    assert (out / CHECKPOINT_FILE).exists() is (hold != "start")
    started = json.loads((out / "status.json").read_text(encoding="utf-8"))
    assert started["status"] == "running"
    # The killed run's folder says what to run, and that is what finishes it.
    said = (out / "RESUME.txt").read_text(encoding="utf-8").splitlines()[-1].split()
    assert said == ["deepcritical", "research", "--resume", str(out.resolve())]

    result = run_cli(*said[1:], "--quiet", home=tmp_path / "home")
    assert result.returncode == 0, result.stderr[-2000:]
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert record["demo"] is True
    assert record["run_id"] == started["run_id"]
    assert record["resumed"] is (hold != "start")
    assert record["report"]["key_findings"]
    status = json.loads((out / "status.json").read_text(encoding="utf-8"))
    assert status["status"] == "finished"
    assert not (out / "lease.json").exists()
    assert not (out / "RESUME.txt").exists()  # ended: nothing left to resume, nor said


class FillingDisk:
    """A checkpoint writer on a disk that fills after ``room`` checkpoints (ENOSPC), until space is freed."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.full = False

    def __call__(self, folder: Path, checkpoint: Checkpoint) -> Path:
        if self.full or self.room == 0:
            self.full = True
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= 1
        return write_checkpoint(folder, checkpoint)


@pytest.mark.parametrize("room", [1, 4])
async def test_a_disk_that_fills_mid_run_stops_it_in_one_line_and_resume_finishes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, room: int
) -> None:
    """A full disk mid-run was a 90-line traceback and no report: now one line, the last checkpoint whole,
    and the same folder resumed once there is space again."""
    settings = demo_settings(DEEPCRITICAL_MAX_ITERATIONS=2, DEEPCRITICAL_HOME=str(tmp_path / "home"))
    store = FakeStore()

    def source(run_settings: Settings, client: httpx2.AsyncClient) -> Orchestrator:
        parts = assemble(
            run_settings,
            client,
            models=judged_models(),
            store=store,
            handler=FakeHandler(),
            research_engine=FakeEngine(),
        )
        return Orchestrator(parts)

    disk = FillingDisk(room)
    monkeypatch.setattr(checkpoint_module, "write_checkpoint", disk)
    folder = tmp_path / "out"
    with pytest.raises(ResearchError) as stopped:
        await run_to_folder(QUESTION, settings, folder=folder, run_source=source)
    message = str(stopped.value)
    assert "\n" not in message
    assert message.startswith("the run stopped: cannot write its checkpoint (No space left on device)")
    assert "resume the run (--resume)" in message
    assert not (folder / "run.json").exists()
    kept = read_checkpoint(folder)  # the checkpoint before the disk filled, whole
    assert [name for name in os.listdir(folder) if name.endswith(".tmp")] == []

    monkeypatch.setattr(checkpoint_module, "write_checkpoint", write_checkpoint)  # space is back
    done = await run_to_folder("", settings, folder=folder, run_source=source, resume=True)
    assert done.outcome.error is None
    assert done.outcome.run_id == kept.run_id
    assert done.outcome.resumed
    assert (folder / "report.md").read_text(encoding="utf-8").startswith("#")
    assert not (folder / CHECKPOINT_FILE).exists()


async def test_a_report_that_cannot_be_written_keeps_the_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = demo_settings(DEEPCRITICAL_MAX_ITERATIONS=1, DEEPCRITICAL_HOME=str(tmp_path / "home"))

    def source(run_settings: Settings, client: httpx2.AsyncClient) -> Orchestrator:
        parts = assemble(
            run_settings,
            client,
            models=judged_models(),
            store=FakeStore(),
            handler=FakeHandler(),
            research_engine=FakeEngine(),
        )
        return Orchestrator(parts)

    def full_disk(outcome: ResearchOutcome, folder: Path, files: object = None) -> tuple[Path, Path]:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(store_module, "write_outputs", full_disk)
    folder = tmp_path / "out"
    with pytest.raises(ResearchError, match=r"No space left on device; the last checkpoint is kept") as stopped:
        await run_to_folder(QUESTION, settings, folder=folder, run_source=source)
    assert "\n" not in str(stopped.value)
    assert read_checkpoint(folder).stage == "report"


class FillingStore(FakeStore):
    """An evidence store on a disk that fills after ``room`` writes: the real store's ``DiskFullError``."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    async def add(self, evidence: Sequence[Evidence]) -> int:
        if self.room == 0:
            raise DiskFullError("add failed in the store: no space left on its disk")
        self.room -= 1
        return await super().add(evidence)


@pytest.mark.parametrize("room", [0, 1])
async def test_a_disk_that_fills_at_the_store_keeps_the_checkpoint_and_resume_finishes_it(
    tmp_path: Path, room: int
) -> None:
    """The probe's four of ten fill levels: the store's write failed first, the run ended as an ordinary
    failure and its checkpoint was deleted, so --resume had nothing to resume. Now it stops as a checkpoint
    write does: one line, the checkpoint kept (none yet when the first write failed: the run resumes from its
    request), and the same folder finished once there is space."""
    settings = demo_settings(DEEPCRITICAL_MAX_ITERATIONS=3, DEEPCRITICAL_HOME=str(tmp_path / "home"))
    store = FillingStore(room)
    # Each query finds one more item than the one before: every search step has something new to store.
    handler = FakeHandler(
        answer=lambda query: [item for item in CORPUS if overlap(query, item)][: len(handler.queries)]
    )

    def source(run_settings: Settings, client: httpx2.AsyncClient) -> Orchestrator:
        parts = assemble(
            run_settings, client, models=judged_models(), store=store, handler=handler, research_engine=FakeEngine()
        )
        return Orchestrator(parts)

    folder = tmp_path / "out"
    with pytest.raises(ResearchError) as stopped:
        await run_to_folder(QUESTION, settings, folder=folder, run_source=source)
    message = str(stopped.value)
    assert "\n" not in message
    assert message.startswith("the run stopped: cannot write the evidence store (no space left)")
    assert "resume the run (--resume)" in message
    assert not (folder / "run.json").exists()
    kept = read_checkpoint(folder).run_id if room else json.loads((folder / "status.json").read_text())["run_id"]

    store.room = 1000  # space is back
    done = await run_to_folder("", settings, folder=folder, run_source=source, resume=True)
    assert done.outcome.error is None
    assert done.outcome.run_id == kept
    assert done.outcome.evidence
    assert not (folder / CHECKPOINT_FILE).exists()


async def test_the_store_names_a_full_disk_whatever_wraps_it(tmp_path: Path) -> None:
    import sqlite3

    from deepcritical.evidence.store_calls import disk_full

    assert disk_full(sqlite3.OperationalError("database or disk is full"))
    assert disk_full(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    wrapped = RuntimeError("Error executing plan: Internal error")
    wrapped.__cause__ = OSError(errno.EDQUOT, "Disk quota exceeded")
    assert disk_full(wrapped)
    assert not disk_full(ValueError("collection not found"))


def a_checkpoint(**changes: Any) -> dict[str, Any]:
    """A checkpoint as a run writes it after its first search (nothing collected), with ``changes``."""
    from pydantic import TypeAdapter
    from pydantic_ai.usage import RunUsage

    from deepcritical.stages.state import RunState

    return {
        "run_id": "research-20260101-000000-abcdef",
        "question": QUESTION,
        "started_at": "2026-01-01T00:00:00+00:00",
        "written_at": "2026-01-01T00:00:05+00:00",
        "stage": "search",
        "iteration": 1,
        "elapsed_seconds": 5.0,
        "loop_seconds_left": 100.0,
        "report_seconds_left": 100.0,
        "state": TypeAdapter(RunState).dump_python(RunState(question=QUESTION), mode="json"),
        "usage": TypeAdapter(RunUsage).dump_python(RunUsage(), mode="json"),
        "evidence": [],
    } | changes


@pytest.mark.slow
@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"state": {"question": QUESTION, "iteration": "many"}}, "state"),
        ({"state": {"searches": 5}}, "state"),
        ({"usage": {"requests": "lots"}}, "usage"),
        ({"usage": []}, "usage"),
    ],
)
def test_a_tampered_checkpoint_state_or_usage_is_one_line_at_resume(
    tmp_path: Path, changes: dict[str, Any], field: str
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / CHECKPOINT_FILE).write_text(json.dumps(a_checkpoint(**changes)), encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"checkpoint.json cannot be read \({field}"):
        read_checkpoint(folder)
    result = run_cli("research", "--resume", str(folder), home=tmp_path / "home")
    assert result.returncode == 2, result.stderr
    lines = error_lines(result.stderr)
    assert len(lines) == 1, result.stderr
    assert f"checkpoint.json cannot be read ({field}" in lines[0]


@pytest.mark.slow
def test_a_request_that_is_not_json_is_one_line_at_resume(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / CHECKPOINT_FILE).write_text(json.dumps(a_checkpoint()), encoding="utf-8")
    (folder / "request.json").write_text("{not json", encoding="utf-8")
    result = run_cli("research", "--resume", str(folder), home=tmp_path / "home")
    assert result.returncode == 2, result.stderr
    lines = error_lines(result.stderr)
    assert len(lines) == 1, result.stderr
    assert f"--resume {folder}: request.json of the run cannot be read" in lines[0]
