"""Text a client gives must be text: a lone surrogate (``"\\ud800"`` in a JSON body) or a byte that is not UTF-8
in an argument is refused at the door in one line (API, MCP, command line); a run that cannot be recorded never
joins the run list, and a run the list cannot send is left out rather than failing the list for everyone."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from deepcritical.run.request import RunRequest
from deepcritical.run.store import RunStore
from deepcritical.service.manager import RunManager
from helpers.commands import PASSED_THROUGH
from helpers.web_fakes import ScriptedRuns, app_for, connected, offline_client, serving, settings_in, text_of

SURROGATE_QUESTION = '{"question": "Does vitamin D \\ud800 prevent depression?"}'
QUESTION = "Does vitamin D supplementation prevent depression?"


async def test_a_lone_surrogate_is_refused_and_the_run_list_stays_readable(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        headers = {"Content-Type": "application/json"}
        for route, body, field in [
            ("/api/runs", SURROGATE_QUESTION, "question"),
            ("/api/runs", '{"question": "' + QUESTION + '", "model": "openai:\\udcff"}', "model"),
            ("/api/runs", '{"question": "' + QUESTION + '", "sources": ["pubmed\\ud800"]}', "sources"),
            ("/api/watches", SURROGATE_QUESTION, "question"),
            ("/api/watches", '{"question": "' + QUESTION + '", "every": "7d\\ud800"}', "every"),
        ]:
            refused = await client.post(route, content=body, headers=headers)
            assert refused.status_code == 422, (route, body, refused.text)
            assert refused.json()["field"] == field
            assert "UTF-8" in refused.json()["error"], (route, body, refused.text)
        listed = await client.get("/api/runs")
        assert listed.status_code == 200
        assert listed.json() == []
        assert (await client.get("/api/watches")).status_code == 200


async def test_a_run_that_cannot_be_recorded_never_joins_the_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(self: RunStore, request: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    async with RunManager(settings_in(tmp_path), client_factory=offline_client, run_source=ScriptedRuns()) as manager:
        monkeypatch.setattr(RunStore, "write_request", full_disk)
        with pytest.raises(OSError, match="No space left"):
            manager.create(RunRequest(question=QUESTION))
        assert manager.all_runs() == []
        assert list((tmp_path / "runs").iterdir()) == []  # no half-written folder for the next start to find


async def test_a_run_the_list_cannot_send_is_left_out_and_logged(tmp_path: Path) -> None:
    async with RunManager(settings_in(tmp_path), client_factory=offline_client, run_source=ScriptedRuns()) as manager:
        kept = manager.create(RunRequest(question=QUESTION))
        broken = manager.create(RunRequest(question="Does aspirin prevent stroke?"))
        entry = manager._runs[broken.run_id]  # a record with text no JSON encoder takes, however it got there
        entry.info = entry.info.model_copy(update={"question": "Does aspirin \ud800 prevent stroke?"})
        with capture_logs() as logs:
            listed = manager.all_runs()
    assert [info.run_id for info in listed] == [kept.run_id]
    assert [entry["run"] for entry in logs if entry["event"] == "run_not_listed"] == [broken.run_id]


async def test_an_mcp_argument_that_is_not_text_is_a_one_line_tool_error(tmp_path: Path) -> None:
    async with connected(tmp_path) as client:
        for tool, arguments in [
            ("research", {"question": "Does vitamin D \ud800 prevent depression?"}),
            ("search_literature", {"query": "vitamin D \udcff"}),
            ("watch_add", {"question": "Does vitamin D \ud800 prevent depression?"}),
            ("research", {"question": QUESTION, "sources": ["pubmed\ud800"]}),
        ]:
            result = await client.call_tool(tool, arguments)
            assert result.is_error, tool
            assert "UTF-8" in text_of(result)
            assert "\n" not in text_of(result)
        listed = text_of(await client.call_tool("watch_list", {}))
        assert '"watches":[]' in listed.replace(" ", "")


@pytest.mark.parametrize("argument", [b"Does vitamin D \xff prevent depression?", b"caf\xe9 au lait"])
def test_an_argument_that_is_not_utf8_gets_one_line_and_exit_2(tmp_path: Path, argument: bytes) -> None:
    environment = {key: value for key, value in os.environ.items() if key in PASSED_THROUGH}
    environment |= {"DEEPCRITICAL_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    result = subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"deepcritical", b"research", argument, b"--demo"],
        capture_output=True,
        env=environment,
        timeout=120,
        check=False,
    )
    stderr = result.stderr.decode("utf-8")
    assert result.returncode == 2, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: argument 2 (")
    assert "not valid UTF-8" in lines[0]
    assert not (tmp_path / "home" / "runs").exists()
