"""``deepcritical serve``: refuses to listen beyond loopback without a token, before binding anything; a busy
port is one line and exit 2; forwarded headers are never trusted."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from helpers.servers import free_port, stop

pytestmark = pytest.mark.slow  # every test here runs the command in a child process

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


def test_serve_on_a_busy_port_exits_2_in_one_line_without_claiming_to_serve(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = serve("--demo", "--port", str(port), home=tmp_path)
    assert result.returncode == 2
    assert "DeepCritical on http" not in result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: --port {port}: the port is in use on 127.0.0.1")


def test_a_forwarded_for_header_does_not_make_a_new_client(tmp_path: Path) -> None:
    """uvicorn trusts X-Forwarded-For from 127.0.0.1 by default: five addresses made five more runs after a
    429. ``serve`` trusts no forwarded header, so the limit holds per peer."""
    port = free_port()
    environment = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "DEEPCRITICAL_HOME": str(tmp_path)}
    environment |= {"PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "DEEPCRITICAL_RUNS_PER_MINUTE": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "deepcritical", "serve", "--demo", "--port", str(port)],
        env=environment,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        assert process.stderr is not None
        for line in process.stderr:  # the success line comes once the socket listens
            if line.startswith("DeepCritical on http"):
                break
        else:
            raise AssertionError(f"serve ended with {process.wait()} before it listened")
        with httpx2.Client(base_url=base, timeout=30) as client:
            first = client.post("/api/runs", json={"question": "Do statins reduce mortality in sepsis?"})
            assert first.status_code == 202, first.text
            client.delete(f"/api/runs/{first.json()['run_id']}")
            for address in ("10.0.0.1", "10.0.0.2", "203.0.113.7"):
                forwarded = client.post(
                    "/api/runs",
                    json={"question": "Do statins reduce mortality in sepsis?"},
                    headers={"X-Forwarded-For": address, "X-Real-IP": address, "Forwarded": f"for={address}"},
                )
                assert forwarded.status_code == 429, forwarded.text
                assert "from 127.0.0.1" in forwarded.json()["error"]
    finally:
        stop(process)
