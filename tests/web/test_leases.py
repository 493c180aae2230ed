"""Two run managers on one runs folder (``serve`` and ``deepcritical mcp``): a run is marked interrupted only
when its owner is gone (its process dead on this machine, or its lease not renewed for too long), never
while the process that runs it is alive."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from deepcritical.config import Settings
from deepcritical.run import store as folders
from deepcritical.run.request import RunRequest
from deepcritical.run.store import RunStore
from deepcritical.service.entries import RunEndedError
from deepcritical.service.manager import RunManager
from helpers.web_fakes import ScriptedRuns, offline_client

QUESTION = "Does metformin lower dementia risk?"


def settings_for(home: Path) -> Settings:
    return Settings(_env_file=None, DEMO_MODE=True, DEEPCRITICAL_HOME=str(home)).demo_preset()  # type: ignore[call-arg]


def manager(settings: Settings, script: ScriptedRuns, **options: object) -> RunManager:
    return RunManager(settings, client_factory=offline_client, run_source=script, **options)  # type: ignore[arg-type]


def status_of(settings: Settings, run_id: str) -> str:
    return str(json.loads((settings.home / "runs" / run_id / "status.json").read_text(encoding="utf-8"))["status"])


def dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


async def test_a_second_manager_leaves_a_live_servers_running_run_alone(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "home")
    script = ScriptedRuns(hold=True)
    async with manager(settings, script) as serve:
        run_id = serve.create(RunRequest(question=QUESTION)).run_id
        await script.reached_hold(run_id).wait()
        async with manager(settings, ScriptedRuns()) as mcp:  # ``deepcritical mcp`` on the same runs folder
            assert mcp.get(run_id).status == "running"
            assert status_of(settings, run_id) == "running"
            with pytest.raises(RunEndedError, match="another process"):
                await mcp.cancel(run_id)
            script.release.set()
            assert (await serve.wait(run_id)).status == "finished"
            assert mcp.get(run_id).status == "finished"  # the owner's record, as the folder has it now
            kinds = [event.kind async for event in mcp.follow(run_id)]
            assert kinds[0] == "run_started"
            assert kinds[-1] == "run_ended"
    assert status_of(settings, run_id) == "finished"
    assert RunStore(settings.home / "runs" / run_id).lease() is None  # an ended run holds no lease


@pytest.mark.parametrize(
    ("owner", "interrupted"),
    [
        ("dead process on this machine", True),
        ("live process on this machine, fresh lease", False),
        ("another machine, fresh lease", False),
        ("another machine, stale lease", True),
    ],
)
async def test_a_run_is_interrupted_only_when_its_owner_is_gone(tmp_path: Path, owner: str, interrupted: bool) -> None:
    settings = settings_for(tmp_path / "home")
    now = 1_800_000_000.0
    script = ScriptedRuns(hold=True)
    async with manager(settings, script) as first:
        run_id = first.create(RunRequest(question=QUESTION)).run_id
        await script.reached_hold(run_id).wait()
        journal = RunStore(settings.home / "runs" / run_id)
        lease = journal.lease()
        assert lease is not None
        host, pid, beat_at = socket.gethostname(), lease.pid, now
        if owner.startswith("dead"):
            pid = dead_pid()
        elif owner.startswith("another"):
            host = "elsewhere.invalid"
        if owner.endswith("stale lease"):
            beat_at = now - folders.LEASE_STALE_SECONDS - 1
        journal.take_lease(folders.Lease(pid=pid, host=host, token="someone-else", beat_at=beat_at))
        async with manager(settings, ScriptedRuns(), clock=lambda: now) as second:
            assert (second.get(run_id).status == "interrupted") is interrupted
        script.release.set()


async def test_a_lease_is_renewed_by_its_owner_and_goes_stale_without_it(tmp_path: Path) -> None:
    beats = iter([100.0, 150.0])
    settings = settings_for(tmp_path / "home")
    script = ScriptedRuns(hold=True)
    async with manager(settings, script, clock=lambda: next(beats)) as runs:
        run_id = runs.create(RunRequest(question=QUESTION)).run_id  # the lease taken at 100
        journal = RunStore(settings.home / "runs" / run_id)
        taken = journal.lease()
        runs.renew_leases()  # and renewed at 150
        renewed = journal.lease()
        script.release.set()
        await runs.wait(run_id)
    assert taken is not None
    assert renewed is not None
    assert (taken.beat_at, renewed.beat_at) == (100.0, 150.0)
    assert not renewed.owner_gone(150.0 + folders.LEASE_STALE_SECONDS)
    assert renewed.owner_gone(150.0 + folders.LEASE_STALE_SECONDS + 1)
