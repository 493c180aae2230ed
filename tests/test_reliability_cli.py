"""The command line on a shared machine, as a user runs it (real subprocesses, demo mode, temporary
homes): concurrent runs on one home, hostile and oversized questions, quiet failures, the store
directory checked at start, and ``deepcritical library``."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from deepcritical.config import Settings
from deepcritical.demo.records import load_corpus
from deepcritical.evidence import chroma
from deepcritical.models import Citation, Evidence
from deepcritical.text import MAX_QUESTION_CHARS
from helpers.commands import environment, error_lines, run_cli

pytestmark = pytest.mark.slow  # every test here runs the command in a child process

CONTROLS = {chr(code) for code in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0)]}


@pytest.mark.model
def test_five_runs_with_different_questions_on_one_home_all_succeed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    questions = [topic.question for topic in load_corpus().topics]
    assert len(questions) == 5
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "deepcritical", "research", question, "--demo", "--quiet", "--out", f"out-{n}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment(home),
            cwd=tmp_path,
        )
        for n, question in enumerate(questions)
    ]
    results = [run.communicate(timeout=900) for run in runs]
    assert [run.returncode for run in runs] == [0] * 5, [stderr[-2000:] for _, stderr in results]
    for n, question in enumerate(questions):
        record = json.loads((tmp_path / f"out-{n}" / "run.json").read_text(encoding="utf-8"))
        assert record["question"] == question
        assert record["evidence"], f"run {n} collected nothing"


@pytest.mark.model
def test_a_hostile_question_reaches_neither_the_report_nor_the_terminal_raw(tmp_path: Path) -> None:
    # Every control character a command line can carry (NUL cannot be in an argument at all).
    question = "\x1b[2J\x1b]0;pwned\x07Can \x1b[31mmetformin\x1b[0m be repurposed\x08\x7f\x9b for Alzheimer's disease?"
    result = run_cli("research", question, "--demo", "--out", str(tmp_path / "out"), home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    record = json.loads((tmp_path / "out" / "run.json").read_text(encoding="utf-8"))
    for text in (report, result.stdout, result.stderr, record["question"]):
        assert not set(text) & CONTROLS, repr(text[:300])
    assert record["question"] == "Can metformin be repurposed for Alzheimer's disease?"


def test_a_question_over_the_limit_is_refused_in_one_line(tmp_path: Path) -> None:
    result = run_cli("research", "why " * 5000, "--demo", home=tmp_path / "home")
    assert result.returncode == 2
    [line] = error_lines(result.stderr)
    assert line == f"error: the question is 19,999 characters long; the limit is {MAX_QUESTION_CHARS:,}: shorten it"
    # At the limit once its control characters are gone: it passes, and the next check (--out) speaks.
    result = run_cli("research", "x" * MAX_QUESTION_CHARS + "\x1b\x07", "--demo", "--out", "/dev/null/x", home=tmp_path)
    assert result.returncode == 2
    [line] = error_lines(result.stderr)
    assert "--out /dev/null/x" in line


CRASHING_RUN = """
import sys
from deepcritical.run import orchestrator

async def crash(self, deps, *_rest):
    raise RuntimeError("injected failure in the research loop")

orchestrator.Orchestrator._loop = crash
from deepcritical.cli.app import main
sys.argv = ["deepcritical", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize("verbose", [False, True])
def test_a_failed_run_prints_one_line_and_tracebacks_only_when_verbose(tmp_path: Path, verbose: bool) -> None:
    args = ["research", "Do statins help?", "--demo", "--quiet", "--out", str(tmp_path / "out")]
    result = subprocess.run(
        [sys.executable, "-c", CRASHING_RUN, *args, *(["--verbose"] if verbose else [])],
        capture_output=True,
        text=True,
        env=environment(tmp_path / "home"),
        timeout=600,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    lines = error_lines(result.stderr)
    assert lines[-1].startswith("error: the run failed (RuntimeError: injected failure in the research loop")
    if verbose:
        assert "Traceback" in result.stderr
    else:
        assert lines == lines[-1:], result.stderr


def test_a_store_directory_that_cannot_be_written_stops_the_run_at_start(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "chroma-demo").write_text("a file where the store directory should be")  # root can write anywhere else
    result = run_cli("research", "Do statins help?", "--demo", home=home)
    assert result.returncode == 2, result.stderr
    [line] = error_lines(result.stderr)
    assert line.startswith(
        f"error: DEEPCRITICAL_HOME: the evidence store directory {home / 'chroma-demo'}: cannot write"
    )


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"DEEPCRITICAL_RETENTION": "soon"}, "DEEPCRITICAL_RETENTION"),
        ({"DEEPCRITICAL_RETENTION": "5m"}, "DEEPCRITICAL_RETENTION"),
        ({"REDIS_URL": "http://127.0.0.1:6379"}, "REDIS_URL"),
        ({"NCBI_EUTILS_URL": "not a url"}, "NCBI_EUTILS_URL"),
    ],
)
def test_new_settings_are_checked_at_start(tmp_path: Path, env: dict[str, str], variable: str) -> None:
    result = run_cli("search", "statins", "--demo", "--no-store", home=tmp_path / "home", env=env)
    assert result.returncode == 2
    [line] = error_lines(result.stderr)
    assert variable in line


def stored_home(home: Path) -> None:
    """A home holding the library, one recent run and one run from long ago (vectors are arbitrary)."""
    connection = chroma.connect(_settings(home))
    now = datetime.now(UTC)
    try:
        for name, created in (
            (chroma.LIBRARY_COLLECTION, now),
            ("run-research-recent", now),
            ("run-research-old", now - timedelta(days=90)),
        ):
            metadata = {chroma.MODEL_KEY: "test-model", chroma.CREATED_KEY: created.isoformat()}
            items = [_evidence(n, name) for n in range(3 if name != "run-research-old" else 2)]
            with connection.session(touches=(name,), writes=True) as session:
                collection = session.client.get_or_create_collection(name, metadata=metadata, embedding_function=None)
                chroma.upsert(collection, 100, items, np.eye(len(items), 4, dtype=np.float32) + 0.1)
    finally:
        connection.close()


def _settings(home: Path) -> Settings:
    return Settings(_env_file=None, DEEPCRITICAL_HOME=str(home))  # type: ignore[call-arg]


def _evidence(number: int, where: str) -> Evidence:
    citation = Citation(source="web", title=f"Item {number} of {where}", url=f"https://example.org/{where}/{number}")
    return Evidence(content=f"Finding {number}.", citation=citation)


def test_library_stats_list_prune_and_export(tmp_path: Path) -> None:
    home = tmp_path / "home"
    stored_home(home)

    stats = json.loads(run_cli("library", "stats", "--json", home=home).stdout)
    assert stats["run_collections"] == 2
    assert stats["run_items"] == 5
    assert [(entry["name"], entry["items"]) for entry in stats["libraries"]] == [("library", 3)]
    assert stats["oldest_run"]["name"] == "run-research-old"

    listed = json.loads(run_cli("library", "list", "--json", home=home).stdout)
    assert [entry["name"] for entry in listed] == ["run-research-old", "library", "run-research-recent"]

    exported = run_cli("library", "export", home=home)
    assert exported.returncode == 0, exported.stderr
    items = [Evidence.model_validate_json(line) for line in exported.stdout.splitlines()]
    assert sorted(item.citation.title for item in items) == [f"Item {n} of library" for n in range(3)]
    assert "exported 3 item(s) from library" in exported.stderr

    pruned = run_cli("library", "prune", "--older-than", "30d", home=home)
    assert pruned.returncode == 0, pruned.stderr
    assert "removed run-research-old (2 items" in pruned.stdout
    listed = json.loads(run_cli("library", "list", "--json", home=home).stdout)
    assert [entry["name"] for entry in listed] == ["library", "run-research-recent"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("library", "prune", "--older-than", "soon"), "--older-than"),
        (("library", "prune", "--older-than", "1s"), "--older-than 1s: use at least 1h"),
        (("library", "export", "--run", "no-such-run"), "no collection 'run-no-such-run'"),
        (("library", "export", "--out", "/dev/null/x.jsonl"), "--out /dev/null/x.jsonl"),
    ],
)
def test_library_bad_input_gets_one_line_and_exit_2(tmp_path: Path, args: tuple[str, ...], expected: str) -> None:
    home = tmp_path / "home"
    stored_home(home)
    result = run_cli(*args, home=home)
    assert result.returncode == 2, result.stderr
    [line] = error_lines(result.stderr)
    assert expected in line
