r"""A warm demo run's cost against the number of collections in the store: the scaling curve.

    python bench/store_scaling.py [--sizes 0,10,100,300,1000] [--runs 2]

One process, one temporary DEEPCRITICAL_HOME: a cold demo run fills the library (not counted), then for
each size the store is topped up with closed run collections of earlier runs (young enough for the
30-day retention to keep them; 20 items of 384 dimensions each, like a small run) and ``--runs`` warm demo
runs are timed in-process (the product's ``Orchestrator`` over a real ``EvidenceStore``). Printed per
size: the median wall and CPU seconds of a warm run and of opening its store, and the ratio of each to
the empty store's, measured in this one process, so the ratio holds on a loaded machine where the
seconds do not.

Also printed: one forced retention pass (``library.prune`` at the default 30 days) at the largest size,
the cost a run pays when the pass is due. ``PYTHONPATH=OTHER/src`` times another work tree's code.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import numpy as np

import deepcritical
from deepcritical.config import load_settings
from deepcritical.evidence import EmbeddingService, chroma, library
from deepcritical.logs import configure_logging
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.setup import assemble, http_client

QUESTION = "Can metformin be repurposed for Alzheimer's disease?"
ITEMS_PER_RUN = 20
DIMENSION = 384  # the default model's (all-MiniLM-L6-v2)


def add_old_runs(home: Path, start: int, stop: int) -> None:
    """Run collections ``start``..``stop - 1`` as finished runs leave them (opened, filled, closed, by the
    product's own calls)."""
    settings = load_settings(demo_mode=True, home=home)
    model = EmbeddingService.for_settings(settings).model_name  # its name only: nothing is loaded
    connection = chroma.connect(settings)
    rng = np.random.default_rng(start)
    try:
        for number in range(start, stop):
            name = f"run-research-old-{number:05d}"
            chroma.open_collection(connection, name, model, run=True)
            with connection.session(touches=(name,), writes=True) as session:
                vectors = rng.standard_normal((ITEMS_PER_RUN, DIMENSION)).astype(np.float32)
                session.collection(name).upsert(
                    ids=[f"pmid:{number}{k}" for k in range(ITEMS_PER_RUN)],
                    embeddings=vectors,
                    documents=[f"finding {number}-{k}" for k in range(ITEMS_PER_RUN)],
                )
            chroma.close_run_collection(connection, name)
    finally:
        connection.close()


async def warm_run(home: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and store-opening seconds of one demo run."""
    settings = load_settings(demo_mode=True, home=home)
    started, cpu = time.perf_counter(), time.process_time()
    async with http_client(settings) as client:
        outcome = await Orchestrator(assemble(settings, client)).research(QUESTION)
    if outcome.error is not None or not outcome.evidence:
        raise SystemExit(f"the demo run failed: {outcome.stop_reason}: {outcome.error}")
    return time.perf_counter() - started, time.process_time() - cpu, outcome.timings.get("store_open", 0.0)


def forced_pass(home: Path) -> float:
    connection = chroma.connect(load_settings(demo_mode=True, home=home))
    try:
        cpu = time.process_time()
        library.prune(connection, timedelta(days=30))
        return time.process_time() - cpu
    finally:
        connection.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="0,10,100,300,1000", help="other collections, ascending")
    parser.add_argument("--runs", type=int, default=2, help="warm runs per size")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    configure_logging()
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    print(f"code: {Path(deepcritical.__file__).parent}")
    rows: list[tuple[int, float, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="deepcritical-scaling-", ignore_cleanup_errors=True) as scratch:
        home = Path(scratch)
        await warm_run(home)  # cold: loads the model, fills the library; not counted
        made = 0
        for size in sizes:
            add_old_runs(home, made, size)
            made = max(made, size)
            runs = [await warm_run(home) for _ in range(args.runs)]
            rows.append(
                (
                    size,
                    statistics.median(run[0] for run in runs),
                    statistics.median(run[1] for run in runs),
                    statistics.median(run[2] for run in runs),
                )
            )
        pass_cpu = forced_pass(home)
    base = rows[0]
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; warm runs per size: {args.runs}")
    print(f"{'collections':>11} {'wall s':>8} {'CPU s':>8} {'open s':>8} {'wall x':>8} {'CPU x':>8}")
    for size, wall, cpu, opened in rows:
        print(f"{size:>11} {wall:>8.2f} {cpu:>8.2f} {opened:>8.3f} {wall / base[1]:>8.2f} {cpu / base[2]:>8.2f}")
    print(f"forced retention pass over {made} old runs: {pass_cpu:.3f} CPU s")


if __name__ == "__main__":
    asyncio.run(main())
