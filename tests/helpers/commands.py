"""The ``deepcritical`` command as a user runs it: a child process with only the machine's basics in its
environment, so a developer's keys, SearXNG, Chroma or Redis cannot reach the program under test (nor let it
touch the network)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

# PYTHONPATH too: the code under test is the checkout's, whatever the virtualenv has installed.
PASSED_THROUGH = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "VIRTUAL_ENV", "HF_HOME", "PYTHONPATH"}
HOLD_DEADLINE = 300.0  # seconds; generous on a loaded two-core machine


def environment(home: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """The machine's basics, ``home`` as DEEPCRITICAL_HOME, no colours, then ``env``."""
    base = {key: value for key, value in os.environ.items() if key in PASSED_THROUGH}
    return base | {"DEEPCRITICAL_HOME": str(home), "NO_COLOR": "1"} | (env or {})


def run_cli(*args: str, home: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m deepcritical ARGS`` run to its end from ``home``'s parent folder."""
    return subprocess.run(
        [sys.executable, "-m", "deepcritical", *args],
        capture_output=True,
        text=True,
        env=environment(home, env),
        cwd=home.parent,
        timeout=600,
        check=False,
    )


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    """Until the run reaches its hold (it writes ``path``); a run that ends first, or never gets there
    (``HOLD_DEADLINE``), fails the test (polled: the hold is a file another process writes)."""
    deadline = time.monotonic() + HOLD_DEADLINE
    while not path.exists():
        if process.poll() is not None:
            pytest.fail(f"the run ended before its hold: {process.stderr.read() if process.stderr else ''}")
        if time.monotonic() > deadline:
            pytest.fail(f"the run did not reach its hold within {HOLD_DEADLINE:.0f} s")
        time.sleep(0.05)
