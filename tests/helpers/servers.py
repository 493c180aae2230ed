"""The one server starter of the suite: a real server (``redis-server``, ``chroma run``, uvicorn, the scripted
model) as a child process on 127.0.0.1 and a free port, waited for until it answers, stopped by its pid.
The fixtures over it live in tests/conftest.py."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

START_DEADLINE = 60.0  # seconds; generous on a loaded two-core machine
STOP_DEADLINE = 20.0


def free_port() -> int:
    """A port nothing listens on now (the OS picks it; a server started right after takes it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stop(process: subprocess.Popen[Any], *, readers: Sequence[threading.Thread] = ()) -> None:
    """SIGTERM by pid, then SIGKILL if it has not ended within ``STOP_DEADLINE``; then, once the ``readers`` of
    its pipes have seen their end, its pipes are closed (an open one is a ResourceWarning, an error here)."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=STOP_DEADLINE)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=STOP_DEADLINE)
    for reader in readers:
        reader.join(timeout=STOP_DEADLINE)
    close_pipes(process)


def kill(process: subprocess.Popen[Any]) -> None:
    """SIGKILL by pid, as a crash would end it; asserts that the signal is what ended it."""
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=STOP_DEADLINE)
    close_pipes(process)
    assert process.returncode == -signal.SIGKILL


def close_pipes(process: subprocess.Popen[Any]) -> None:
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()


@contextmanager
def started(
    command: Sequence[str],
    *,
    answers: Callable[[], bool],
    log_path: Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` running, once ``answers()`` is true; a failure with the server's log if it exits first or
    does not answer within ``START_DEADLINE``. Stopped by pid when the block ends."""
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=cwd, env=env)
    try:
        deadline = time.monotonic() + START_DEADLINE
        while not answers():
            if time.monotonic() > deadline:
                pytest.fail(f"{command[0]} did not answer within {START_DEADLINE}s: {log_path.read_text()}")
            # Waiting on the process doubles as the poll interval and notices an early exit.
            try:
                process.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                continue
            pytest.fail(f"{command[0]} exited with {process.returncode}: {log_path.read_text()}")
        yield process
    finally:
        stop(process)


def redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """A real ``redis-server`` saving nothing to disk; its URL. Skips when Redis is not installed."""
    executable = shutil.which("redis-server")
    if executable is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    port = free_port()
    command = [executable, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
    with started(command, answers=lambda: redis_answers(port), log_path=folder / "redis.log", cwd=folder):
        yield f"redis://127.0.0.1:{port}/0"


def chroma_answers(port: int) -> bool:
    try:
        httpx2.get(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1.0).raise_for_status()
    except httpx2.HTTPError:
        return False
    return True


@contextmanager
def chroma_server(folder: Path) -> Iterator[tuple[str, int]]:
    """A real ``chroma run`` keeping its data in ``folder/chroma``; its host and port."""
    executable = Path(sys.executable).parent / "chroma"
    if not executable.exists():
        pytest.fail(f"the `chroma` console script is missing at {executable}: install chromadb into this venv")
    port = free_port()
    command = [str(executable), "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(folder / "chroma")]
    environment = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    with started(command, answers=lambda: chroma_answers(port), log_path=folder / "chroma.log", env=environment):
        yield "127.0.0.1", port
