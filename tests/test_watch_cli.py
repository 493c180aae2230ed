"""``deepcritical watch`` as a user runs it from the README: a real subprocess, the demo, the demo clock."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers.commands import run_cli

pytestmark = pytest.mark.slow  # every test here runs the command in a child process

QUESTION = "Does vitamin D supplementation prevent or treat depression?"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("watch", "add", "   "), "the question is empty"),
        (("watch", "add", "?????"), "the question has no searchable words"),
        (("watch", "add", QUESTION, "--every", "7x"), "--every '7x'"),
        (("watch", "add", QUESTION, "--every", "30m"), "at most once an hour"),
        (("watch", "add", QUESTION, "--every", "99999999999999d"), "--every '99999999999999d': too long"),
        (("watch", "add", QUESTION, "--every", "999999999d"), "at least once in ten years"),
        (("watch", "add", QUESTION, "--sources", ",".join(["pubmed"] * 9)), "sources: List should have at most"),
        (("watch", "add", QUESTION, "--webhook", "ftp://example.org/hook"), "--webhook"),
        (("watch", "add", QUESTION, "--webhook", "http://169.254.169.254/latest"), "--webhook http://169.254.169.254"),
        (("watch", "add", QUESTION, "--webhook", "http://127.0.0.1:6379/"), "a loopback, private"),
        (("watch", "add", QUESTION, "--sources", "pubmed,nowhere"), "DEEPCRITICAL_SOURCES"),
        (("watch", "show", "w-unknown"), "no watch has the id 'w-unknown' (see `deepcritical watch list`)"),
        (("watch", "remove", "w-unknown"), "no watch has the id 'w-unknown'"),
        (("watch", "run", "w-unknown"), "no watch has the id 'w-unknown'"),
        (("watch", "run"), "give a watch id or --due"),
    ],
)
def test_bad_watch_input_gets_one_line_and_exit_2(tmp_path: Path, args: tuple[str, ...], expected: str) -> None:
    result = run_cli(*args, home=tmp_path / "home")
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:")
    assert expected in lines[0]


@pytest.mark.model
def test_the_readme_demo_watch_run_twice_shows_the_new_trial_and_the_retraction(tmp_path: Path) -> None:
    home = tmp_path / "home"
    early, late = {"DEEPCRITICAL_DEMO_TODAY": "2026-03-01"}, {"DEEPCRITICAL_DEMO_TODAY": "2026-07-01"}
    added = run_cli("watch", "add", QUESTION, "--demo", "--every", "7d", home=home, env=early)
    assert added.returncode == 0, added.stderr
    watch_id = re.search(r"w-[0-9a-f]{8}", added.stdout)
    assert watch_id is not None
    first = run_cli("watch", "run", "--due", home=home, env=early)
    assert first.returncode == 0, first.stderr
    assert "first run" in first.stdout
    assert "no watch is due" in run_cli("watch", "run", "--due", home=home, env=early).stdout
    second = run_cli("watch", "run", "--due", home=home, env=late)
    assert second.returncode == 0, second.stderr
    assert "new: [DEMO] Prenatal vitamin D3" in second.stdout
    assert "retracted since: [DEMO] Adjunctive high-dose vitamin D3" in second.stdout
    shown = run_cli("watch", "show", watch_id[0], home=home).stdout
    assert shown.count("2026-03-01") == 1
    assert "2026-07-01" in shown
    assert "every 7d" in shown
    listed = run_cli("watch", "list", home=home).stdout
    assert watch_id[0] in listed
    assert "2026-07-08" in listed  # next due: a week after the last run
    assert run_cli("watch", "remove", watch_id[0], home=home).returncode == 0
    assert "no watches yet" in run_cli("watch", "list", home=home).stdout


def test_a_damaged_watch_is_named_and_the_others_listed(tmp_path: Path) -> None:
    import sqlite3

    home = tmp_path / "home"
    assert run_cli("watch", "add", QUESTION, "--demo", home=home).returncode == 0
    assert run_cli("watch", "add", "Does aspirin reduce stroke?", "--demo", home=home).returncode == 0
    with sqlite3.connect(home / "watches.sqlite") as connection:
        connection.execute("UPDATE watches SET options = '{not json' WHERE question LIKE '%aspirin%'")
    listed = run_cli("watch", "list", home=home)
    assert listed.returncode == 0, listed.stderr
    assert "vitamin D" in listed.stdout
    assert "Traceback" not in listed.stderr
    warnings = [line for line in listed.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1
    assert "cannot be read" in warnings[0]
    assert "deepcritical watch remove" in warnings[0]
