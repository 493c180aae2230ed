r"""How fast the command says no, and how fast its servers answer (issue 40, item 4).

    python bench/refusal_timing.py [--repeat 5] [--command PATH] [--no-serve]

Each figure is over ``--repeat`` fresh processes (``subprocess``; wall clock from start to what is timed),
printed as the median and the maximum, with the process's CPU seconds (user + system) for the refusals:

- each refusal of ``research QUESTION --demo``: an empty question, one of control characters only (empty
  once they are removed), one over the length limit, one with no searchable word, a German one; each should
  exit 2 (the exit codes are printed: older code answers the German one), and the time is to the process's exit;
- ``mcp --demo`` over stdio: from the start to the answer to ``initialize``;
- ``serve --demo``: from the start to the first HTTP answer of ``GET /`` (the page; polled every 20 ms). The
  app behind it loads after the server listens: bench/serve.py also times when ``/api/info`` answers.

Each process gets a fresh temporary ``DEEPCRITICAL_HOME``. One unmeasured refusal goes first, so every
measured process finds the compiled bytecode (a user's install has it). ``PYTHONPATH`` is passed on, so
``PYTHONPATH=$PWD/src`` times a work tree's code with a shared virtualenv. The load average is printed: on
a shared machine wall time is noisy, CPU time much less so.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REFUSALS = {
    "empty": "",
    "control characters only": "\x1b[31m\x07\x08",
    "over the length limit": "Does aspirin prevent stroke? " * 80,
    "no searchable word": "Does it work?",
    "German": "Wie wirkt Metformin bei Alzheimer?",
}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


def environment(home: str) -> dict[str, str]:
    return {**os.environ, "DEEPCRITICAL_HOME": home}


def refusal(command: list[str], question: str) -> tuple[float, float, int]:
    """Wall and CPU seconds of one ``research`` that should be refused, and its exit code (2 when refused; the
    figures of code that answers instead are printed with its exit code, for a comparison)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as home:
        start = time.perf_counter()
        done = subprocess.run(
            [*command, "research", question, "--demo"], env=environment(home), capture_output=True, text=True
        )
        wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.returncode


def mcp_initialize(command: list[str]) -> float:
    with tempfile.TemporaryDirectory() as home:
        start = time.perf_counter()
        process = subprocess.Popen(
            [*command, "mcp", "--demo"],
            env=environment(home),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        process.stdin.flush()
        answer = process.stdout.readline()
        elapsed = time.perf_counter() - start
        process.stdin.close()
        process.wait(timeout=120)
    if b'"result"' not in answer:
        raise SystemExit(f"mcp did not answer initialize: {answer[:300]!r}")
    return elapsed


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve_ready(command: list[str]) -> float:
    port = free_port()
    with tempfile.TemporaryDirectory() as home:
        start = time.perf_counter()
        process = subprocess.Popen(
            [*command, "serve", "--demo", "--port", str(port)],
            env=environment(home),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while True:
                if process.poll() is not None:
                    raise SystemExit(f"serve exited with {process.returncode} before answering")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
                        response.read()
                    return time.perf_counter() - start
                except (urllib.error.URLError, ConnectionError):
                    time.sleep(0.02)
        finally:
            process.terminate()
            process.wait(timeout=60)


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} s, max {max(values):.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--command", default=str(Path(sys.executable).with_name("deepcritical")))
    parser.add_argument("--no-serve", action="store_true", help="Leave out serve's start-up (the slowest part).")
    args = parser.parse_args()
    command = [args.command]
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs); {args.repeat} runs each")
    refusal(command, "")  # unmeasured: compiles the bytecode
    for name, question in REFUSALS.items():
        timings = [refusal(command, question) for _ in range(args.repeat)]
        walls, cpus = [wall for wall, _, _ in timings], [cpu for _, cpu, _ in timings]
        codes = sorted({code for _, _, code in timings})
        print(f"refusal, {name}: wall {summary(walls)}; CPU median {statistics.median(cpus):.2f} s; exit {codes}")
    print(f"mcp --demo, answer to initialize: {summary([mcp_initialize(command) for _ in range(args.repeat)])}")
    if not args.no_serve:
        ready = summary([serve_ready(command) for _ in range(args.repeat)])
        print(f"serve --demo, first answer to GET /: {ready}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
