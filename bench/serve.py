r"""How fast ``deepcritical serve`` answers after it starts, and concurrent demo runs through its HTTP API.

    python bench/serve.py [--starts 5] [--runs 4] [--max-concurrent 2] [--batches 2]

First ``--starts`` fresh servers (``serve --demo`` on a free loopback port, a fresh DEEPCRITICAL_HOME each),
each polled every 20 ms from its start. Printed, as the median and the maximum over the starts:

- first answer: from the start to the first answer to ``GET /`` (the page), the time a user waits to see it;
- CPU at first answer: the server's CPU seconds (user + system, from /proc) at that moment;
- loaded: from the start to the first answer to ``GET /api/info``, which needs the whole app (the run manager,
  the store, the models' runtime): a run cannot start before.

The load average is printed before and after: on a shared machine wall time is noisy, CPU time much less so.
``--starts 0`` leaves this part out; ``--batches 0`` leaves the runs out.

Starts ``deepcritical serve --demo`` on a free loopback port (a temporary DEEPCRITICAL_HOME), then, per
batch, starts ``--runs`` runs at once with ``POST /api/runs`` and follows each one's Server-Sent Events
(``GET /api/runs/{id}/events``) over a real socket. It prints, per batch, the median and the maximum of:

- first event: from the POST to the first event on the stream (``queued`` for a run that waits);
- started: from the POST to ``run_started`` (waiting in the queue included);
- report: from the POST to ``run_ended`` with status ``finished``;

and every run's first-event latency (the target: at most 0.2 s each), and the server's resident memory (now
and at its peak, from /proc). The first batch is cold: the server's first runs load the embedding model and
embed every text. The model cache (built ONNX graph, vectors) is an empty temporary folder unless
``--model-cache`` names one, so a cold batch is cold whatever ran before on the machine. With more runs
than ``--max-concurrent``, the rest wait in the queue.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import httpx2

DEFAULT_QUESTION = "Can metformin be repurposed for Alzheimer's disease?"
STARTUP_SECONDS = 120


@dataclass
class Timing:
    first_event: float
    started: float
    report: float
    status: str


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def memory_mib(pid: int) -> tuple[float, float]:
    """Resident memory now and at its peak (VmRSS, VmHWM), in MiB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def cpu_seconds(pid: int) -> float:
    """The process's user + system CPU seconds so far (/proc/PID/stat, fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_answer(url: str, process: subprocess.Popen[bytes], start: float) -> float:
    """Seconds from ``start`` to the first HTTP answer of ``url`` (any status), polled every 20 ms."""
    while time.perf_counter() - start < STARTUP_SECONDS:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode} before answering")
        try:
            with urllib.request.urlopen(url, timeout=STARTUP_SECONDS) as response:
                response.read()
            return time.perf_counter() - start
        except urllib.error.HTTPError:
            return time.perf_counter() - start
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.02)
    raise SystemExit(f"{url} did not answer in {STARTUP_SECONDS} s")


def one_start(environment: dict[str, str]) -> tuple[float, float, float]:
    """First answer to the page, the server's CPU seconds then, and the time until the whole app answers."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as home:
        env = {**environment, "DEEPCRITICAL_HOME": home}
        command = [sys.executable, "-m", "deepcritical", "serve", "--demo", "--port", str(port)]
        start = time.perf_counter()
        process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
        try:
            page = first_answer(f"{base}/", process, start)
            cpu = cpu_seconds(process.pid)
            loaded = first_answer(f"{base}/api/info", process, start)
        finally:
            process.terminate()
            process.wait(timeout=60)
    return page, cpu, loaded


def bench_starts(starts: int) -> None:
    print(f"load average before the starts: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    timings = [one_start(dict(os.environ)) for _ in range(starts)]
    print(f"serve --demo, {starts} starts:")
    print("  " + summary("first answer", [page for page, _, _ in timings]))
    print("  " + summary("CPU then", [cpu for _, cpu, _ in timings]))
    print("  " + summary("loaded", [loaded for _, _, loaded in timings]))
    print(f"  first answer of each start: {', '.join(f'{page:.2f}' for page, _, _ in timings)} s")
    print(f"load average after the starts: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


async def wait_until_up(base: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    async with httpx2.AsyncClient(base_url=base) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SystemExit(f"the server exited with {process.returncode}")
            try:
                if (await client.get("/api/info")).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            await asyncio.sleep(0.2)
    raise SystemExit("the server did not start in time")


async def one_run(client: httpx2.AsyncClient, question: str) -> Timing:
    posted = time.perf_counter()
    created = await client.post("/api/runs", json={"question": question})
    created.raise_for_status()
    run_id = created.json()["run_id"]
    first = started = None
    async with client.stream("GET", f"/api/runs/{run_id}/events") as response:
        async for event in httpx2.EventSource(response):
            now = time.perf_counter() - posted
            first = now if first is None else first
            data = json.loads(event.data)
            if data["kind"] == "run_started":
                started = now
            if data["kind"] == "run_ended":
                return Timing(first, started or now, now, data["status"])
    raise SystemExit(f"the event stream of {run_id} ended without run_ended")


def summary(name: str, values: list[float]) -> str:
    return f"{name:<14}median {statistics.median(values):7.2f} s   max {max(values):7.2f} s"


async def bench(runs: int, batches: int, question: str, base: str, pid: int) -> None:
    timeout = httpx2.Timeout(30.0, read=600.0)
    async with httpx2.AsyncClient(base_url=base, timeout=timeout) as client:
        for batch in range(1, batches + 1):
            started = time.perf_counter()
            timings = await asyncio.gather(*(one_run(client, question) for _ in range(runs)))
            wall = time.perf_counter() - started
            rss, peak = memory_mib(pid)
            label = "cold (loads the embedding model)" if batch == 1 else "warm"
            print(f"\nbatch {batch}, {label}: {runs} runs at once, wall clock {wall:.2f} s")
            print(f"  statuses: {', '.join(sorted(timing.status for timing in timings))}")
            print("  " + summary("first event", [timing.first_event for timing in timings]))
            shown = ", ".join(f"{timing.first_event:.2f}" for timing in sorted(timings, key=lambda t: t.first_event))
            print(f"  first event of each run: {shown} s")
            print("  " + summary("started", [timing.started for timing in timings]))
            print("  " + summary("report", [timing.report for timing in timings]))
            print(f"  server memory: {rss:.0f} MiB resident now, {peak:.0f} MiB at peak")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starts", type=int, default=5, help="Fresh servers timed to their first answer.")
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--batches", type=int, default=2)
    parser.add_argument("--max-concurrent", type=int, default=2, help="DEEPCRITICAL_MAX_CONCURRENT_RUNS")
    parser.add_argument("--question", default=DEFAULT_QUESTION)
    parser.add_argument("--model-cache", help="DEEPCRITICAL_MODEL_CACHE (default: an empty temporary folder)")
    args = parser.parse_args()
    if args.starts:
        bench_starts(args.starts)
    if not args.batches:
        return
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as home:
        env = {
            **os.environ,
            "DEEPCRITICAL_HOME": home,
            "DEEPCRITICAL_MODEL_CACHE": args.model_cache or str(Path(home) / "model-cache"),
            "DEEPCRITICAL_MAX_CONCURRENT_RUNS": str(args.max_concurrent),
            "DEEPCRITICAL_RUNS_PER_MINUTE": "1000",
        }
        command = [sys.executable, "-m", "deepcritical", "serve", "--demo", "--port", str(port)]
        process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
        try:
            asyncio.run(wait_until_up(base, process))
            rss, _ = memory_mib(process.pid)
            print(f"server up: {base}, max concurrent runs {args.max_concurrent}, {rss:.0f} MiB resident idle")
            print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            asyncio.run(bench(args.runs, args.batches, args.question, base, process.pid))
        finally:
            process.terminate()
            process.wait(timeout=60)


if __name__ == "__main__":
    main()
