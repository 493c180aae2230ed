"""The page's app served for a real browser: ``uvicorn --factory helpers.hostile_app:create`` (the real app, one
hostile search result mixed into the demo data) on a free loopback port, and headless Chromium's settings."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.servers import stop

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
PASSED_THROUGH = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "VIRTUAL_ENV", "HF_HOME", "HF_HUB_OFFLINE"}
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
STARTUP_SECONDS = 120
RUN_MS = 240_000  # a demo run takes seconds, but CI machines are shared


def environment(home: Path) -> dict[str, str]:
    """The machine's basics only (no developer keys, SearXNG or Chroma server), this checkout's code first."""
    basics = {key: value for key, value in os.environ.items() if key in PASSED_THROUGH}
    paths = os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")])
    return basics | {"DEEPCRITICAL_HOME": str(home), "PYTHONPATH": paths, "NO_COLOR": "1"}


@dataclass
class Server:
    url: str
    home: Path
    log: list[str]


@contextmanager
def served(home: Path) -> Iterator[Server]:
    """``uvicorn --factory helpers.hostile_app:create`` over ``home`` on a socket bound here (port 0: a free one, no
    race), stopped by its pid (``helpers.servers.stop``)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    command = [sys.executable, "-m", "uvicorn", "--factory", "helpers.hostile_app:create"]
    command += ["--fd", str(listener.fileno())]
    process = subprocess.Popen(
        command, env=environment(home), pass_fds=[listener.fileno()], stderr=subprocess.PIPE, text=True
    )
    listener.close()
    log: list[str] = []
    started = threading.Event()

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            log.append(line)
            if "Application startup complete" in line:
                started.set()
        started.set()  # the process ended: let the fixture see it

    drainer = threading.Thread(target=drain, daemon=True)
    drainer.start()
    try:
        if not started.wait(STARTUP_SECONDS) or process.poll() is not None:
            pytest.fail("the server did not start:\n" + "".join(log[-30:]))
        yield Server(url=f"http://127.0.0.1:{port}", home=home, log=log)
    finally:
        stop(process, readers=[drainer])
