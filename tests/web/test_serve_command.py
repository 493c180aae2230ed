"""``deepcritical serve`` refuses to listen beyond loopback without a token, before binding anything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A documentation address (TEST-NET-1) that is on no interface here: had the check gone, binding would fail
# rather than the test's server listen on every interface.
UNREACHABLE_HOST = "192.0.2.1"


def serve(*args: str, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "DEEPCRITICAL_HOME": str(home)}
    environment |= {"PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1"} | env
    return subprocess.run(
        [sys.executable, "-m", "deepcritical", "serve", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )


def test_serve_beyond_loopback_without_a_token_is_refused_in_one_line(tmp_path: Path) -> None:
    result = serve("--host", UNREACHABLE_HOST, "--demo", home=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: --host {UNREACHABLE_HOST}: listening beyond loopback needs")
    assert "DEEPCRITICAL_API_TOKEN" in lines[0]


def test_a_short_token_is_refused_without_echoing_it(tmp_path: Path) -> None:
    result = serve("--demo", home=tmp_path, DEEPCRITICAL_API_TOKEN="short-secret")
    assert result.returncode == 2
    assert "DEEPCRITICAL_API_TOKEN" in result.stderr
    assert "short-secret" not in result.stderr
