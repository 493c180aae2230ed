"""The MCP watch tools: add a watch, list it, read what its runs changed; bad input is a one-line tool error."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from deepcritical.service.watches import WatchRun
from deepcritical.service.watches_sqlite import WatchStore
from helpers.web_fakes import connected, text_of

QUESTION = "Does vitamin D supplementation prevent or treat depression?"


async def test_a_watch_added_by_a_model_is_listed_and_its_changes_read(tmp_path: Path) -> None:
    async with connected(tmp_path) as client:
        added = await client.call_tool("watch_add", {"question": QUESTION, "every": "2w"})
        assert not added.is_error, text_of(added)
        watch = json.loads(text_of(added))
        assert (watch["question"], watch["every"], watch["verdict"]) == (QUESTION, "14d", None)  # shown in days
        at = datetime(2026, 7, 1, 12, tzinfo=UTC)
        summary = ["new: a trial (randomised controlled trial, level 2; reads favourable)"]
        run = WatchRun(run_at=at, folder="/f", verdict="yes", confidence=0.6, counted=7, changed=True, summary=summary)
        WatchStore.at_home(tmp_path).record_run(watch["id"], run, next_due=at)
        listed = json.loads(text_of(await client.call_tool("watch_list", {})))
        assert [(item["id"], item["verdict"]) for item in listed["watches"]] == [(watch["id"], "yes")]
        history = json.loads(text_of(await client.call_tool("watch_changes", {"watch_id": watch["id"]})))
        assert [(run["counted_studies"], run["changes"]) for run in history["runs"]] == [(7, summary)]
        assert [run["verdict_text"] for run in history["runs"]] == ["yes (confidence 0.60)"]
        assert listed["watches"][0]["verdict_text"] == "yes (confidence 0.60)"


async def test_bad_watch_input_is_a_one_line_tool_error(tmp_path: Path) -> None:
    async with connected(tmp_path) as client:
        for tool, arguments, message in [
            ("watch_add", {"question": "  "}, "the question is empty"),
            ("watch_add", {"question": QUESTION, "every": "10m"}, "at most once an hour"),
            ("watch_add", {"question": QUESTION, "every": "99999999999999d"}, "too long: at most"),
            ("watch_changes", {"watch_id": "w-00000000"}, "no watch has the id"),
        ]:
            result = await client.call_tool(tool, arguments)
            assert result.is_error, tool
            assert message in text_of(result)
            assert "\n" not in text_of(result)


async def test_over_http_no_error_or_result_names_a_path_of_the_server(tmp_path: Path) -> None:
    home = tmp_path / "srv-home"
    library = tmp_path / "srv-library"
    library.mkdir()
    async with connected(home, over_http=True, library_folder=library) as client:
        added = json.loads(text_of(await client.call_tool("watch_add", {"question": QUESTION})))
        at = datetime(2026, 7, 1, 12, tzinfo=UTC)
        folder = home / "watches" / added["id"] / "runs" / "watch-1"
        run = WatchRun(run_at=at, folder=str(folder), verdict="yes", confidence=0.6, counted=7, changed=True)
        WatchStore.at_home(home).record_run(added["id"], run, next_due=at)
        history = text_of(await client.call_tool("watch_changes", {"watch_id": added["id"]}))
        assert json.loads(history)["runs"][0]["folder"] == f"watches/{added['id']}/runs/watch-1"
        missing = text_of(await client.call_tool("library_add", {"paths": ["gone.pdf"]}))
        assert "gone.pdf" in missing
        (home / "watches.sqlite").unlink()
        (home / "watches.sqlite").mkdir()  # a database that cannot be opened: its error names the file
    async with connected(home, over_http=True) as client:
        broken = await client.call_tool("watch_list", {})
        assert broken.is_error
        assert "watches database" in text_of(broken)
        for text in (history, missing, text_of(broken)):
            assert str(tmp_path) not in text, text
