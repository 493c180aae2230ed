r"""Demo questions through the HTTP API: in-process runs against the team deployment's job queue, and the
time a run takes to finish elsewhere after its worker is killed with SIGKILL.

    python bench/queue_throughput.py [--questions 20] [--modes inprocess,1,2] [--no-kill]

Each mode starts a real ``deepcritical serve --demo`` on a free loopback port with a fresh
DEEPCRITICAL_HOME; ``inprocess`` runs one run at a time in the server (DEEPCRITICAL_MAX_CONCURRENT_RUNS=1,
the capacity of one worker); ``1`` and ``2`` start a real ``redis-server`` and that many
``deepcritical worker --demo`` processes (one run at a time each) and the server enqueues. All
``--questions`` runs are POSTed at once and each one's Server-Sent Events followed to ``run_ended``.
Prints per mode: time to the last report, p50 and p95 of POST to report, runs per minute, failures.

The kill measure (two workers): a worker holds the run after its first search (the test-only hold), is
killed with SIGKILL, and the time from the kill to ``run_ended`` (finished by the other worker from the
checkpoint) is printed, with what bounds it: the heartbeat (DEEPCRITICAL_QUEUE_HEARTBEAT, here 10 s), the
sweep interval and the sweep's wait for a live holder.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and its name would hide the standard
# library's ``queue`` (which asyncio's helpers import): the folder goes before anything else is imported.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import httpx2  # noqa: E402

from deepcritical.service.queue import ABORT_WAIT_SECONDS, SWEEP_SECONDS  # noqa: E402

QUESTIONS = [
    "Can metformin be repurposed for Alzheimer's disease?",
    "Do statins reduce mortality in sepsis?",
    "Does aspirin prevent colorectal cancer?",
    "Can SGLT2 inhibitors help heart failure?",
    "Does vitamin D supplementation prevent fractures?",
]
STARTUP_SECONDS = 180
HEARTBEAT = "10"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def environment(home: Path, extra: dict[str, str]) -> dict[str, str]:
    keep = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "VIRTUAL_ENV", "HF_HOME", "PYTHONPATH"}
    base = {key: value for key, value in os.environ.items() if key in keep}
    return base | {"DEEPCRITICAL_HOME": str(home), "NO_COLOR": "1", "DEEPCRITICAL_RUNS_PER_MINUTE": "1000"} | extra


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Deployment:
    """A server, and for a queued mode a redis-server and ``workers`` worker processes."""

    def __init__(self, workers: int | None, root: Path) -> None:
        self.workers, self.root, self.home = workers, root, root / "home"
        self.processes: list[subprocess.Popen[bytes]] = []
        self.env: dict[str, str] = {"DEEPCRITICAL_MAX_CONCURRENT_RUNS": "1"}
        self.port = free_port()
        self.worker_processes: list[subprocess.Popen[bytes]] = []

    def spawn(self, args: list[str], extra: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        log = (self.root / f"process-{len(self.processes)}.log").open("wb")
        process = subprocess.Popen(
            args, env=environment(self.home, self.env | (extra or {})), stdout=log, stderr=subprocess.STDOUT
        )
        self.processes.append(process)
        return process

    def start_worker(self, extra: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        worker = self.spawn([sys.executable, "-m", "deepcritical", "worker", "--demo"], extra)
        self.worker_processes.append(worker)
        return worker

    async def start(self) -> None:
        if self.workers is not None:
            redis_port = free_port()
            self.spawn(["redis-server", "--bind", "127.0.0.1", "--port", str(redis_port), "--save", ""])
            self.env |= {"DEEPCRITICAL_QUEUE_URL": f"redis://127.0.0.1:{redis_port}/0"}
            self.env |= {"DEEPCRITICAL_QUEUE_HEARTBEAT": HEARTBEAT}
            await asyncio.sleep(0.5)
            for _ in range(self.workers):
                self.start_worker()
        self.spawn([sys.executable, "-m", "deepcritical", "serve", "--demo", "--port", str(self.port)])
        deadline = time.monotonic() + STARTUP_SECONDS
        async with httpx2.AsyncClient(base_url=self.base) as client:
            while True:
                try:
                    (await client.get("/api/info")).raise_for_status()
                    return
                except httpx2.HTTPError:
                    if time.monotonic() > deadline:
                        raise SystemExit("the server did not start") from None
                    await asyncio.sleep(0.2)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        for process in reversed(self.processes):
            stop(process)


async def one_run(client: httpx2.AsyncClient, question: str) -> tuple[float, str]:
    posted = time.monotonic()
    response = await client.post("/api/runs", json={"question": question, "max_iterations": 2})
    response.raise_for_status()
    run_id = response.json()["run_id"]
    async with client.stream("GET", f"/api/runs/{run_id}/events", timeout=None) as stream:
        async for line in stream.aiter_lines():
            if line.startswith("data:") and '"run_ended"' in line:
                ended = json.loads(line[5:])
                if ended["status"] != "finished":
                    print(f"  {run_id}: {ended['status']}: {ended.get('error')}", file=sys.stderr)
                return time.monotonic() - posted, str(ended["status"])
    return time.monotonic() - posted, "no end"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def measure(mode: str, questions: int) -> None:
    workers = None if mode == "inprocess" else int(mode)
    with tempfile.TemporaryDirectory() as root:
        deployment = Deployment(workers, Path(root))
        try:
            await deployment.start()
            started = time.monotonic()
            async with httpx2.AsyncClient(base_url=deployment.base, timeout=60) as client:
                asked = [QUESTIONS[n % len(QUESTIONS)] for n in range(questions)]
                results = await asyncio.gather(*(one_run(client, question) for question in asked))
            total = time.monotonic() - started
        finally:
            deployment.stop()
    seconds = [elapsed for elapsed, _ in results]
    failed = sum(status != "finished" for _, status in results)
    label = "in-process (1 at a time)" if workers is None else f"{workers} worker(s), 1 run each"
    print(
        f"{label:26} {questions} runs: last report {total:6.1f} s, p50 {statistics.median(seconds):6.1f} s, "
        f"p95 {percentile(seconds, 0.95):6.1f} s, {questions / total * 60:5.1f} runs/min, {failed} not finished"
    )


async def kill_to_finish() -> None:
    with tempfile.TemporaryDirectory() as root:
        deployment = Deployment(0, Path(root))
        try:
            await deployment.start()
            doomed = deployment.start_worker({"DEEPCRITICAL_TEST_HOLD_AFTER": "search:1"})
            async with httpx2.AsyncClient(base_url=deployment.base, timeout=60) as client:
                response = await client.post("/api/runs", json={"question": QUESTIONS[0], "max_iterations": 2})
                run_id = response.json()["run_id"]
                held = deployment.home / "runs" / run_id / "held"
                deadline = time.monotonic() + STARTUP_SECONDS
                while not held.exists():
                    if time.monotonic() > deadline:  # the run ended (or failed) before its hold
                        raise SystemExit(f"the run never reached its hold; see {deployment.root}")
                    await asyncio.sleep(0.05)
                deployment.start_worker()
                await asyncio.sleep(5)  # the survivor is up and idle, as in a running deployment
                os.kill(doomed.pid, signal.SIGKILL)
                killed = time.monotonic()
                status = "no end"
                async with client.stream("GET", f"/api/runs/{run_id}/events", timeout=None) as stream:
                    async for line in stream.aiter_lines():
                        if line.startswith("data:") and '"run_ended"' in line:
                            status = str(json.loads(line[5:])["status"])
                            break
                elapsed = time.monotonic() - killed
        finally:
            deployment.stop()
    print(
        f"SIGKILL to report on the other worker: {elapsed:.1f} s ({status}; heartbeat {HEARTBEAT} s, sweep "
        f"{SWEEP_SECONDS} s, abort wait {ABORT_WAIT_SECONDS:g} s: queued again within "
        f"{int(HEARTBEAT) + SWEEP_SECONDS + ABORT_WAIT_SECONDS + 1:g} s of the kill, then the rest of the run)"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--modes", default="inprocess,1,2")
    parser.add_argument("--no-kill", action="store_true")
    options = parser.parse_args()
    for mode in options.modes.split(","):
        await measure(mode.strip(), options.questions)
    if not options.no_kill:
        await kill_to_finish()


if __name__ == "__main__":
    asyncio.run(main())
