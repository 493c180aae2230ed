"""A command pays only for what it uses: ``--help`` and ``--version`` load no settings model, store,
model runtime or network client, and a research run loads Redis, the rate limiter's buckets and the
HTML and PDF parsers only when it uses them. Checked in a fresh interpreter, as a user starts it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test here runs the command in a child process

# Each of these costs tenths of a CPU second to import on this project's 2-core machine.
HEAVY = (
    "pydantic_settings",
    "pydantic",
    "chromadb",
    "numpy",
    "onnxruntime",
    "structlog",
    "pydantic_ai",
    "httpx2",
    "redis",
    "pyrate_limiter",
    "trafilatura",
    "pypdfium2",
)
LOADED = """
import json, sys
sys.argv = ["deepcritical", *{args!r}]
from deepcritical.cli.app import main

try:
    main()
except SystemExit:
    pass
print(json.dumps([name for name in {heavy!r} if name in sys.modules]))
"""


def loaded_by(*args: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", LOADED.format(args=list(args), heavy=HEAVY)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return list(json.loads(result.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("args", [("--help",), ("--version",)])
def test_help_and_version_load_none_of_the_heavy_modules(args: tuple[str, ...]) -> None:
    assert loaded_by(*args) == []


@pytest.mark.parametrize("args", [("library", "--help"), ("eval", "--help"), ("research", "--help")])
def test_a_commands_help_loads_no_settings_model_nor_store(args: tuple[str, ...]) -> None:
    # Typer itself builds some options' parsers with pydantic (its ``_adapters``): only that one is allowed.
    assert loaded_by(*args) in ([], ["pydantic"])


def test_the_research_command_loads_redis_and_the_parsers_only_when_used() -> None:
    script = (
        "import json, sys\n"
        "from deepcritical.cli.research import run_research\n"
        f"print(json.dumps([name for name in {HEAVY!r} if name in sys.modules]))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    loaded = set(json.loads(result.stdout.strip().splitlines()[-1]))
    assert loaded.isdisjoint({"redis", "pyrate_limiter", "trafilatura", "pypdfium2"})
    assert {"chromadb", "pydantic_ai"} <= loaded  # a run uses these: the check above is not vacuous


REFUSED = """
import json, sys
sys.argv = ["deepcritical", *{args!r}]
from deepcritical.cli.app import main
try:
    main()
except SystemExit as exit:
    code = exit.code
print(json.dumps([code, [name for name in {heavy!r} if name in sys.modules]]))
"""


@pytest.mark.parametrize(
    ("question", "message"),
    [
        ("", "error: the question is empty"),
        ("\x1b[31m\x07", "error: the question is empty"),
        ("Does aspirin prevent stroke? " * 80, "error: the question is 2,319 characters long; the limit is 2,000"),
        ("Does it work?", "error: the question has no searchable words"),
        ("Wie wirkt Metformin bei Alzheimer?", "error: the question reads as a language other than English"),
        ("Does \udcff aspirin work?", "error: argument 2 (Does \\udcff aspirin work?) is not valid UTF-8 text"),
    ],
)
def test_a_refused_question_is_refused_before_anything_heavy_loads(question: str, message: str) -> None:
    # Not timed here (a shared machine's wall time is noise): bench/refusal_timing.py times it. What makes it
    # fast is that the question is checked before the run's modules, the settings and the preflight load.
    args = ["research", question, "--demo", "--out", "/nonexistent/never-made"]
    result = subprocess.run(
        [sys.executable, "-c", REFUSED.format(args=args, heavy=HEAVY)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    code, loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert code == 2
    assert result.stderr.startswith(message), result.stderr
    # Not even pydantic, which Typer uses to coerce each option (``cli.app.main`` reads the question first).
    assert loaded == []


def test_out_dash_is_refused_rather_than_written_as_a_folder_named_dash(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "deepcritical", "research", "Do statins prevent dementia?", "--demo", "--out", "-"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: --out -: a run writes a folder")
    assert list(tmp_path.iterdir()) == []
