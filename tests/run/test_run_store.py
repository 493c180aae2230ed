"""One store for every run folder: a run started from the command line keeps the same folder a served one
does (request, status, events, outputs, a lease while it runs) in the one runs folder, so a server lists
it, even one started before it; server paths never reach a client in an error."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from deepcritical.config import Settings
from deepcritical.run.execute import run_to_folder
from deepcritical.run.request import RunRequest, runs_folder
from deepcritical.run.store import RunStore, without_paths
from deepcritical.service.manager import RunManager
from helpers.web_fakes import KINDS, ScriptedRuns, offline_client

QUESTION = "Does metformin lower dementia risk?"


def settings_for(tmp_path: Path) -> Settings:
    values = {"DEMO_MODE": True, "DEEPCRITICAL_HOME": str(tmp_path / "home")}
    return Settings(_env_file=None, **values).demo_preset()  # type: ignore[arg-type]


async def test_a_command_line_run_keeps_its_folder_in_the_shared_runs_folder(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    request = RunRequest(question=QUESTION, max_iterations=1)
    done = await run_to_folder(
        QUESTION, settings, request=request, client_factory=offline_client, run_source=ScriptedRuns()
    )
    assert done.folder.parent == runs_folder(settings) == tmp_path / "home" / "runs"
    store = RunStore(done.folder)
    assert store.request() == request
    status = store.status()
    assert status is not None
    assert (status.run_id, status.status) == (done.outcome.run_id, "finished")
    assert status.summary is not None
    assert status.started_at is not None
    assert status.ended_at is not None
    assert [event.kind for event in store.events] == KINDS
    assert [event.id for event in store.events] == list(range(1, len(KINDS) + 1))
    assert store.lease() is None  # ended: nobody owns it any more
    assert {"report.md", "run.json"} <= set(store.outputs())
    assert not {"request.json", "status.json", "events.jsonl"} & set(store.outputs())


async def test_a_server_lists_a_command_line_run_started_after_it_and_follows_it(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    script = ScriptedRuns(hold=True)
    async with RunManager(settings, client_factory=offline_client, run_source=ScriptedRuns()) as server:
        assert server.all_runs() == []
        run_id = "research-20260101-000000-abcdef"
        cli = asyncio.create_task(
            run_to_folder(QUESTION, settings, run_id=run_id, client_factory=offline_client, run_source=script)
        )
        await script.reached_hold(run_id).wait()
        (listed,) = server.all_runs()
        assert (listed.run_id, listed.status) == (run_id, "running")  # its owner is alive: not interrupted
        script.release.set()
        done = await cli
        following = [event.kind async for event in server.follow(run_id)]
        assert server.get(run_id).status == "finished"
    assert following == KINDS
    assert done.folder == settings.home / "runs" / run_id


async def test_a_command_line_run_that_fails_records_why(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    done = await run_to_folder(
        QUESTION,
        settings,
        client_factory=offline_client,
        run_source=ScriptedRuns(fail_with="no source answered any search"),
    )
    status = json.loads((done.folder / "status.json").read_text(encoding="utf-8"))
    assert (status["status"], status["error"]) == ("failed", "no source answered any search")


def test_server_paths_are_named_not_shown(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    runs = tmp_path / "elsewhere" / "runs"
    message = f"cannot write {settings.home / 'chroma'} nor {runs / 'research-x'}: disk full"
    cleaned = without_paths(message, settings, runs)
    assert cleaned == "cannot write $DEEPCRITICAL_HOME/chroma nor the runs folder/research-x: disk full"
    assert str(tmp_path) not in (cleaned or "")


def test_each_stored_event_carries_its_one_line_which_mcp_shows_as_is(tmp_path: Path) -> None:
    from deepcritical.events import QueriesPlanned
    from deepcritical.mcp.results import progress_line

    store = RunStore(tmp_path / "run")
    (tmp_path / "run").mkdir()
    planned = store.append(QueriesPlanned(iteration=1, queries=["metformin\ndementia", "statins"]).model_dump())
    queued = store.append({"kind": "queued", "position": 2})
    ended = store.append({"kind": "run_ended", "status": "failed", "error": "no source answered"})
    assert planned.data["line"] == "queries: metformin dementia; statins"  # one line, whatever the query held
    assert queued.data["line"] == "waiting in the queue, position 2"
    assert ended.data["line"] == "run ended: failed (no source answered)"
    # The folder keeps the lines; MCP reads them from the stored event, rewording nothing.
    on_disk = [
        json.loads(line)["data"]["line"] for line in (tmp_path / "run" / "events.jsonl").read_text().splitlines()
    ]
    assert on_disk == [planned.data["line"], queued.data["line"], ended.data["line"]]
    assert progress_line(planned) == planned.data["line"]
    unknown = store.append({"kind": "something_new"})
    assert unknown.data["line"] == "something_new"
