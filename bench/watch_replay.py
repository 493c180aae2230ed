r"""A demo watch run at three dates of the demo clock, as ``watch run`` does it: what a re-run asks for
and carries forward, what it finds changed, and what it costs, against the baseline run.

    python bench/watch_replay.py [--repeat 3]

T0 = 2026-03-01 (the baseline), T1 = 2026-07-01 (a new trial entered PubMed on 2026-05-12 and a held
trial was retracted on 2026-06-02), T2 = 2026-07-09 (nothing new). For each run: wall and CPU seconds
(the median of ``--repeat`` fresh homes; the first run of a process also loads the embedding model, so a
warm-up watch runs first, unmeasured), the items the sources returned (``found``, summed over the run's
searches: a re-run's dated sources return only what appeared since), the items carried forward, the
items the run holds, and the changes it reports (new, retracted, verdict)."""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from deepcritical.config import load_settings
from deepcritical.logs import configure_logging
from deepcritical.service.watch_run import read_outcome, run_watch_once, watch_clock
from deepcritical.service.watches import WatchOptions, WatchStore

QUESTION = "Does vitamin D supplementation prevent or treat depression?"
DATES = {"T0": date(2026, 3, 1), "T1": date(2026, 7, 1), "T2": date(2026, 7, 9)}


async def replay(home: Path) -> dict[str, dict[str, float]]:
    base = load_settings(demo_mode=True, home=home)
    store = WatchStore.at_home(home)
    at = {name: base.with_values(demo_today=day) for name, day in DATES.items()}
    watch = store.add(QUESTION, every="7d", options=WatchOptions(demo=True), now=watch_clock(at["T0"]))
    figures: dict[str, dict[str, float]] = {}
    held = 0
    for name, settings in at.items():
        wall, cpu = time.perf_counter(), time.process_time()
        outcome = await run_watch_once(store.get(watch.id), settings, store)
        record = read_outcome(outcome.folder)
        assert record is not None
        changes = outcome.changes
        figures[name] = {
            "seconds": time.perf_counter() - wall,
            "cpu": time.process_time() - cpu,
            "found": sum(step.found for step in record.searches),
            "carried": held,
            "holds": len(record.evidence),
            "new": len(changes.new_studies),
            "retracted": len(changes.newly_retracted),
            "verdict_changed": float(changes.verdict_changed),
            "alert": float(outcome.alerted),
        }
        held = len(record.evidence)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    configure_logging(verbose=False)
    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        asyncio.run(replay(Path(scratch) / "warm-up"))  # loads the embedding model once, unmeasured
        for index in range(args.repeat):
            runs.append(asyncio.run(replay(Path(scratch) / f"home-{index}")))
    load, python = os.getloadavg()[0], sys.version.split()[0]
    print(f"demo watch replay, median of {args.repeat}; load average {load:.2f}; python {python}")
    columns = ("seconds", "cpu", "found", "carried", "holds", "new", "retracted", "verdict_changed", "alert")
    print(f"{'run':4} " + " ".join(f"{column:>15}" for column in columns))
    for name in DATES:
        values = [statistics.median(run[name][column] for run in runs) for column in columns]
        print(f"{name:4} " + " ".join(f"{value:>15.2f}" for value in values))


if __name__ == "__main__":
    main()
