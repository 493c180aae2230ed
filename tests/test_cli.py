"""The command line as a user runs it: a real subprocess, demo mode, a temporary store."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from deepcritical.options import DEFAULT_MODEL
from deepcritical.run.checkpoint import HOLD_VARIABLE
from helpers.commands import PASSED_THROUGH, run_cli, wait_for
from helpers.servers import stop

pytestmark = pytest.mark.slow  # every test here runs the command in a child process


@pytest.mark.model
def test_demo_search_json_returns_many_items_from_several_sources(tmp_path: Path) -> None:
    result = run_cli("search", "metformin alzheimer's disease", "--demo", "--json", home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["synthetic_demo_data"] is True
    assert len(payload["evidence"]) >= 10
    sources = {source for item in payload["evidence"] for source in item["found_by"]}
    assert len(sources) >= 3, sources
    assert all(item["citation"]["title"].startswith("[DEMO]") for item in payload["evidence"])
    assert payload["newly_stored"] == len(payload["evidence"])


@pytest.mark.model
def test_demo_research_writes_a_report_whose_citations_resolve(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_cli(
        "research",
        "Can metformin be repurposed for Alzheimer's disease?",
        "--demo",
        "--out",
        str(out),
        home=tmp_path / "home",
    )
    assert result.returncode == 0, result.stderr
    report = (out / "report.md").read_text(encoding="utf-8")
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    collected = {item["id"] for item in record["evidence"]}
    cited = set(re.findall(r"Evidence id: `([^`]+)`", report))
    assert cited, "the report cites nothing"
    assert cited <= collected
    assert "DEMO MODE" in report
    assert len({source for item in record["evidence"] for source in item["found_by"]}) >= 2
    assert "iteration 1/" in result.stderr  # progress was shown


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (("search", "   "), {}, "query is empty"),
        (("research", ""), {}, "question is empty"),
        (("research", "?????", "--demo"), {}, "error: the question has no searchable words"),
        (("research", "the of and?", "--demo"), {}, "error: the question has no searchable words"),
        (("research", "阿司匹林有效吗？", "--demo"), {}, "error: the question's words could not be read as search"),
        (("search", "x", "--sources", "pubmed,scholar"), {}, "invalid configuration: --sources: "),
        (("research", "Does metformin help?", "--sources", "scholar"), {}, "invalid configuration: --sources: "),
        (("search", "x"), {"DEEPCRITICAL_SOURCES": "pubmed,scholar"}, "DEEPCRITICAL_SOURCES"),
        (("search", "x"), {"SEARXNG_TIMEOUT": "-1"}, "SEARXNG_TIMEOUT"),
        (("search", "x"), {"SEARXNG_BASE_URL": "not a url"}, "SEARXNG_BASE_URL"),
        (("research", "Does metformin help?", "--model", "nonsense"), {}, "error: --model must look like"),
        (("research", "Does metformin help?", "--model", "bogus:thing"), {}, "cannot use --model 'bogus:thing'"),
        (("research", "Does metformin help?"), {"DEEPCRITICAL_MODEL": "nonsense"}, "DEEPCRITICAL_MODEL must look"),
        (("research", "Does metformin help?", "--demo", "--out", "/dev/null/report"), {}, "--out /dev/null/report"),
        (
            ("search", "x", "--demo"),
            {"DEEPCRITICAL_EMBEDDING_MODEL": "/nonexistent/model"},
            "DEEPCRITICAL_EMBEDDING_MODEL",
        ),
        (("research", "Does metformin help?", "--demo"), {"DEEPCRITICAL_HOME": "/dev/null/home"}, "DEEPCRITICAL_HOME"),
    ],
)
def test_bad_input_gets_one_line_and_exit_2(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], expected: str
) -> None:
    result = run_cli(*args, home=tmp_path / "home", env=env)
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:")
    assert expected in lines[0]


@pytest.mark.parametrize(
    ("args", "model", "variable"),
    [
        ((), DEFAULT_MODEL, "GOOGLE_API_KEY"),
        (("--model", "openai:gpt-4o"), "openai:gpt-4o", "OPENAI_API_KEY"),
        (("--model", "google-gla:gemini-2.5-flash"), "google:gemini-2.5-flash", "GOOGLE_API_KEY"),
    ],
)
def test_a_live_run_names_its_model_before_saying_its_key_is_missing(
    tmp_path: Path, args: tuple[str, ...], model: str, variable: str
) -> None:
    result = run_cli("research", "Does metformin help?", *args, home=tmp_path / "home")
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 2, result.stderr
    assert lines[0] == f"model {model}"  # the model that would answer, named before the run fails
    assert lines[1].startswith(f"error: the model {model!r} needs an API key: set {variable}")


def test_the_readmes_local_model_line_without_a_server_names_the_base_url_variable(tmp_path: Path) -> None:
    result = run_cli(
        "research", "Does metformin help?", "--demo-sources", "--model", "openai:local", home=tmp_path / "home"
    )
    assert result.returncode == 2
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: the model 'openai:local' needs an API key: set OPENAI_API_KEY; for a local")
    assert "set DEEPCRITICAL_OPENAI_BASE_URL" in last


@pytest.mark.parametrize("command", [(), ("research",), ("search",), ("serve",), ("library",), ("library", "prune")])
def test_help_piped_is_whole_lines_without_placeholders_for_flags(tmp_path: Path, command: tuple[str, ...]) -> None:
    """Help used to be cut at 80 columns with an ellipsis when not in a terminal, and showed ``<bool>``."""
    result = run_cli(*command, "--help", home=tmp_path / "home")
    assert result.returncode == 0
    assert "<bool>" not in result.stdout
    assert "…" not in result.stdout
    assert "│" not in result.stdout  # plain text, no boxes to cut lines in
    if command == ("research",):
        assert "How the model gives structured answers (default DEEPCRITICAL_OUTPUT_MODE)." in result.stdout
        assert "--sources <str>" in result.stdout


def test_search_with_no_source_able_to_answer_says_so_and_exits_1(tmp_path: Path) -> None:
    # SearXNG without a base URL is disabled, so nothing is searched (and nothing touches the network).
    result = run_cli(
        "search", "metformin", "--no-store", home=tmp_path / "home", env={"DEEPCRITICAL_SOURCES": "searxng"}
    )
    assert result.returncode == 1, (result.stdout, result.stderr)
    last = result.stderr.strip().splitlines()[-1]
    assert last == "error: no source could be searched (searxng: SEARXNG_BASE_URL is not set)"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("search",), "Missing argument 'query'"),
        (("search", "x", "--max", "0"), "Invalid value for '--max'"),
        # A question that would be refused is said first (``cli.app.main``): these ask a good one.
        (("research", "Does aspirin prevent stroke?", "--max-iterations", "0"), "Invalid value for '--max-iterations'"),
        (("research", "Does aspirin prevent stroke?", "--reader", "bert"), "Invalid value for '--reader'"),
        (("frobnicate",), "No such command 'frobnicate'"),
    ],
)
def test_usage_errors_are_one_line_too(tmp_path: Path, args: tuple[str, ...], expected: str) -> None:
    result = run_cli(*args, home=tmp_path / "home")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert expected in result.stderr


def test_an_unknown_reader_in_the_environment_is_one_line_naming_the_variable(tmp_path: Path) -> None:
    result = run_cli(
        "research",
        "Do statins reduce mortality?",
        "--demo",
        home=tmp_path / "home",
        env={"DEEPCRITICAL_READER": "bert"},
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: invalid configuration: DEEPCRITICAL_READER: Input should be 'linear' or 'transformer' (got 'bert')"
    )


def test_outside_text_with_emoji_codes_is_shown_as_written(tmp_path: Path) -> None:
    result = run_cli(
        "search",
        "metformin :x: alzheimer",
        "--no-store",
        home=tmp_path / "home",
        env={"DEEPCRITICAL_SOURCES": "searxng"},
    )
    assert "metformin :x: alzheimer" in result.stdout
    assert "\u274c" not in result.stdout + result.stderr


def _sigint_as_at_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def test_ctrl_c_leaves_a_run_that_resume_can_finish(tmp_path: Path) -> None:
    """Ctrl+C once the run started: its folder keeps the request and an ``interrupted`` record (no lease),
    which ``research --resume OUT`` continues; nothing else is left behind."""
    home, out = tmp_path / "home", tmp_path / "reports" / "metformin"
    environment = {key: value for key, value in os.environ.items() if key in PASSED_THROUGH}
    environment |= {"DEEPCRITICAL_HOME": str(home), "NO_COLOR": "1", HOLD_VARIABLE: "start"}
    process = subprocess.Popen(
        [sys.executable, "-m", "deepcritical", "research", "Does metformin help?", "--demo", "--out", str(out)],
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        cwd=tmp_path,
        # Ctrl+C as at a terminal: a test run started in the background of a shell without job control
        # inherits SIGINT ignored, and so would the command (as POSIX wants for background jobs).
        preexec_fn=_sigint_as_at_a_terminal,
    )
    try:
        assert process.stderr is not None
        banner = process.stderr.readline()  # the demo banner: the run has begun, --out exists
        assert "DEMO MODE" in banner, banner
        wait_for(out / "held", process)  # the run recorded its request and holds before any stage
        process.send_signal(signal.SIGINT)
        rest = process.stderr.read()
        assert process.wait(timeout=120) == 130, rest
    finally:
        stop(process)
    status = json.loads((out / "status.json").read_text(encoding="utf-8"))
    assert status["status"] == "interrupted"
    assert json.loads((out / "request.json").read_text(encoding="utf-8"))["demo"] is True
    assert not (out / "lease.json").exists()
    assert "error: interrupted" in rest
