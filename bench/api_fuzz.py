"""Schemathesis over the HTTP API: how many generated requests got a server error (5xx).

    python bench/api_fuzz.py --max-examples 100 --seed 41

Starts ``deepcritical serve --demo`` on a free loopback port with an API token (a fresh DEEPCRITICAL_HOME in a
temporary folder, at most 2 new runs a minute so that accepted runs do not take the machine), points
Schemathesis at its OpenAPI schema with ``Authorization: Bearer TOKEN``, every phase but the stateful one
(examples, coverage, fuzzing; positive and negative inputs), the one check ``not_a_server_error``, and prints
the number of requests sent, the number answered 5xx and each failing operation. Stops the server by its
pid. Touches no network but loopback: the demo's sources and model are local stand-ins.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_up(url: str, token: str, server: subprocess.Popen[bytes]) -> None:
    request = urllib.request.Request(f"{url}/api/info", headers={"Authorization": f"Bearer {token}"})
    for _ in range(300):
        if server.poll() is not None:
            raise SystemExit(f"the server stopped (exit {server.returncode}) before it answered")
        try:
            with urllib.request.urlopen(request, timeout=2) as answer:  # loopback: this script's own server
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not answer in 60 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=100, help="cases per operation and phase")
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--report", type=Path, help="keep Schemathesis's event stream (NDJSON) here")
    args = parser.parse_args()
    schemathesis = Path(sys.executable).with_name("schemathesis")
    token = secrets.token_hex(16)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="api-fuzz-") as folder:
        home, report = Path(folder, "home"), args.report or Path(folder, "events.ndjson")
        environment = dict(os.environ) | {
            "DEEPCRITICAL_HOME": str(home),
            "DEEPCRITICAL_API_TOKEN": token,
            "DEEPCRITICAL_RUNS_PER_MINUTE": "2",
            "NO_COLOR": "1",
        }
        with Path(folder, "server.log").open("wb") as log:
            server = subprocess.Popen(
                [sys.executable, "-m", "deepcritical", "serve", "--demo", "--port", str(port)],
                env=environment,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            try:
                wait_until_up(url, token, server)
                started = time.perf_counter()
                command = [
                    str(schemathesis), "run", f"{url}/openapi.json",
                    "--header", f"Authorization: Bearer {token}",
                    "--max-examples", str(args.max_examples), "--seed", str(args.seed),
                    "--checks", "not_a_server_error", "--phases", "examples,coverage,fuzzing",
                    "--workers", "1", "--generation-database", "none",
                    "--report", "ndjson", "--report-ndjson-path", str(report),
                ]  # fmt: skip
                quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
                subprocess.run(command, env=environment, check=False, **quiet)
                seconds = time.perf_counter() - started
            finally:
                server.send_signal(signal.SIGINT)
                try:
                    server.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    server.kill()
        sent, errors, failing = count(report)
        server_log = Path(folder, "server.log").read_text(encoding="utf-8", errors="replace")
    print(f"requests sent:        {sent}")
    print(f"server errors (5xx):  {errors}")
    print(f"seconds:              {seconds:.0f}")
    for operation, number in failing.most_common():
        print(f"  {number:5d}  {operation}")
    if errors:
        crashed = [line for line in server_log.splitlines() if "request_failed" in line or "Error" in line]
        print("server log (errors):", *crashed[:20], sep="\n  ")


def count(report: Path) -> tuple[int, int, Counter[str]]:
    """Requests sent and 5xx answers, from Schemathesis's event stream (one JSON object a line): each finished
    scenario's recorder holds its interactions, a request and its response each."""
    sent = errors = 0
    failing: Counter[str] = Counter()
    for line in report.read_text(encoding="utf-8").splitlines():
        finished = json.loads(line).get("ScenarioFinished")
        if not isinstance(finished, dict):
            continue
        recorder = finished.get("recorder") or {}
        for interaction in (recorder.get("interactions") or {}).values():
            response = interaction.get("response") or {}
            sent += 1
            if isinstance(response.get("status_code"), int) and response["status_code"] >= 500:
                errors += 1
                failing[str(recorder.get("label", "?"))] += 1
    return sent, errors, failing


if __name__ == "__main__":
    main()
