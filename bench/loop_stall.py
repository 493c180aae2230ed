r"""How long a demo run's store writes stall the event loop that ``serve`` streams every other run's events on.

    python bench/loop_stall.py [--runs 3] [--concurrent 1]

Chroma's bindings hold the interpreter lock through a write (about 30-70 ms a call here, whatever its
size), so a write in a worker thread still stops the loop. In one process and one temporary home, a cold
demo run (not counted) fills the library; then ``--runs`` warm demo runs go while a ticker task on the
same loop asks to wake every 5 ms and records how late it wakes. Printed per run: Chroma writes
(``Collection.upsert`` calls) and the seconds inside them, and the ticker's lateness (median, 99th
percentile, worst, and the seconds of lateness in ticks over 20 ms: how long the loop was held). With
``--concurrent N`` each measured round is N warm runs at once, as a server runs them.
``PYTHONPATH=OTHER/src`` times another work tree's code.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from chromadb.api.models.Collection import Collection

import deepcritical
from deepcritical.config import load_settings
from deepcritical.logs import configure_logging
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.setup import assemble, http_client

QUESTION = "Can metformin be repurposed for Alzheimer's disease?"
TICK = 0.005
WRITES = {"calls": 0, "seconds": 0.0}


def counted_upsert(original: Any) -> Any:
    def upsert(self: Collection, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            WRITES["calls"] += 1
            WRITES["seconds"] += time.perf_counter() - started

    return upsert


async def ticker(late: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        asked = time.perf_counter()
        await asyncio.sleep(TICK)
        late.append(time.perf_counter() - asked - TICK)


async def demo_run(home: Path) -> None:
    settings = load_settings(demo_mode=True, home=home)
    async with http_client(settings) as client:
        outcome = await Orchestrator(assemble(settings, client)).research(QUESTION)
    if outcome.error is not None or not outcome.evidence:
        raise SystemExit(f"the demo run failed: {outcome.stop_reason}: {outcome.error}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--concurrent", type=int, default=1, help="warm runs at once in each measured round")
    args = parser.parse_args()
    configure_logging()
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    Collection.upsert = counted_upsert(Collection.upsert)  # type: ignore[method-assign]
    print(f"code: {Path(deepcritical.__file__).parent}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="deepcritical-stall-", ignore_cleanup_errors=True) as scratch:
        await demo_run(Path(scratch))  # cold: not counted
        for _ in range(args.runs):
            WRITES.update(calls=0, seconds=0.0)
            late: list[float] = []
            stop = asyncio.Event()
            tick = asyncio.create_task(ticker(late, stop))
            await asyncio.gather(*(demo_run(Path(scratch)) for _ in range(args.concurrent)))
            stop.set()
            await tick
            late.sort()
            held = sum(value for value in late if value > 0.020)
            p50, p99 = statistics.median(late), late[int(0.99 * len(late))]
            rows.append((WRITES["calls"], WRITES["seconds"], p50, p99, late[-1], held))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average: {load}; tick {TICK * 1000:g} ms; {args.concurrent} run(s) at once per round")
    print(
        f"{'round':>8} {'writes':>7} {'in writes s':>12} {'late p50 ms':>12} {'p99 ms':>8} {'worst ms':>9}"
        f" {'held >20ms s':>13}"
    )
    for number, (calls, seconds, p50, p99, worst, held) in enumerate(rows, start=1):
        print(
            f"{number:>8} {calls:>7} {seconds:>12.3f} {p50 * 1000:>12.1f} {p99 * 1000:>8.1f} {worst * 1000:>9.1f}"
            f" {held:>13.2f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
