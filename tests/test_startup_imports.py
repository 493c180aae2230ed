"""A command pays only for what it uses: ``--help`` and ``--version`` load no settings model, store,
model runtime or network client, and a research run loads Redis, the rate limiter's buckets and the
HTML and PDF parsers only when it uses them. Checked in a fresh interpreter, as a user starts it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

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
