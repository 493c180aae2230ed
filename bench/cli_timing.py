r"""Wall time of the ``deepcritical`` command as a user runs it: start-up, a cold and a warm demo run.

    python bench/cli_timing.py [--repeat 3] [--command PATH]
    python bench/cli_timing.py --readers linear,transformer --question "Do statins reduce mortality in sepsis?"

Each figure is the median of ``--repeat`` runs of a fresh process (``subprocess``, wall clock from
start to exit), so it includes the interpreter, the imports, loading the embedding model and the run:

- ``--help``: start-up and the CLI's imports only;
- cold demo run: ``research QUESTION --demo`` in a fresh, empty ``DEEPCRITICAL_HOME`` and
  ``DEEPCRITICAL_MODEL_CACHE`` each time (no evidence store, no built graph, no cached vectors);
- warm demo run: the same in one home and model cache that an unmeasured run has already used (the store
  exists, the library holds the evidence, anything cached at first use is there; the OS file cache is warm).

The unmeasured run goes first, so that every measured process finds the code's compiled bytecode (a user's
install has it); ``PYTHONDONTWRITEBYTECODE`` is not passed on.

``--readers`` times warm demo runs only, one per result reader (``--reader``) in turn, each reader in a warm
home of its own, and prints the verdict each gave (phases/16_result_reader.md, round 4: the run's reader).

The command defaults to the ``deepcritical`` script beside this interpreter; ``PYTHONPATH`` is passed on,
so ``PYTHONPATH=$PWD/src`` times a work tree's code with a shared virtualenv. The load average is printed
with the figures, and each process's CPU seconds (user + system) beside its wall time: on a shared
machine wall time is noisy, CPU time much less so.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUESTION = "Can metformin be repurposed for Alzheimer's disease?"


KINDS = ("--help", "cold demo run", "warm demo run")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], home: Path, out: Path, pythonpath: str | None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one process."""
    env = {**os.environ, "DEEPCRITICAL_HOME": str(home), "DEEPCRITICAL_MODEL_CACHE": str(home / "model-cache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    cpu, started = children_cpu(), time.perf_counter()
    result = subprocess.run(command, env=env, cwd=out, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"{' '.join(command[:2])} exited {result.returncode}: {result.stderr.strip()[-500:]}")
    return elapsed, children_cpu() - cpu


def line(name: str, figures: list[tuple[float, float]]) -> str:
    times, cpus = [wall for wall, _ in figures], [cpu for _, cpu in figures]
    return (
        f"{name:<16} median {statistics.median(times):6.2f} s   ({', '.join(f'{v:.2f}' for v in times)});"
        f"   CPU median {statistics.median(cpus):6.2f} s   ({', '.join(f'{v:.2f}' for v in cpus)})"
    )


def time_readers(research: list[str], readers: list[str], repeat: int) -> None:
    """Warm demo runs with each reader, alternating: the median wall and CPU seconds, and each run's verdict."""
    figures: dict[str, list[tuple[float, float]]] = {reader: [] for reader in readers}
    verdicts: dict[str, set[str]] = {reader: set() for reader in readers}
    with tempfile.TemporaryDirectory(prefix="deepcritical-reader-bench-") as scratch:
        root = Path(scratch)
        for reader in readers:  # prepares each warm home (its store, its built graphs); not counted
            timed([*research, "--reader", reader], root / f"warm-{reader}", root, os.environ.get("PYTHONPATH"))
        for _ in range(repeat):
            for reader in readers:
                command = [*research, "--reader", reader]
                figures[reader].append(timed(command, root / f"warm-{reader}", root, os.environ.get("PYTHONPATH")))
                verdict = json.loads((root / "out" / "run.json").read_text(encoding="utf-8"))["verdict"]
                verdicts[reader].add(f"{verdict['label']} {verdict['confidence']:.2f}")
    print(f"question: {research[2]}; load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for reader in readers:
        print(line(f"warm, {reader}", figures[reader]) + f";   verdict {', '.join(sorted(verdicts[reader]))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--command", default=str(Path(sys.executable).with_name("deepcritical")))
    parser.add_argument(
        "--before",
        metavar="SRC",
        help="also time the code in SRC (as PYTHONPATH, e.g. an extracted older commit's src), alternating "
        "with this one, and print the ratios of the CPU medians",
    )
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("--readers", help="comma-separated result readers: time warm demo runs with each, alternating")
    args = parser.parse_args()
    research = [args.command, "research", args.question, "--demo", "--out", "out"]
    if args.readers:
        time_readers(research, args.readers.split(","), args.repeat)
        return
    variants: dict[str, str | None] = {"after": os.environ.get("PYTHONPATH")}
    if args.before:
        variants = {"before": args.before, **variants}
    figures: dict[str, dict[str, list[tuple[float, float]]]] = {v: {k: [] for k in KINDS} for v in variants}
    with tempfile.TemporaryDirectory(prefix="deepcritical-cli-bench-") as scratch:
        root = Path(scratch)
        for variant, path in variants.items():  # prepares the warm home and writes the bytecode; not counted
            timed(research, root / f"warm-{variant}", root, path)
        for number in range(args.repeat):  # the variants alternate, so a change in the machine's load hits both
            for variant, path in variants.items():
                kinds = figures[variant]
                kinds["--help"].append(timed([args.command, "--help"], root / "help-home", root, path))
                kinds["cold demo run"].append(timed(research, root / f"cold-{variant}-{number}", root, path))
                kinds["warm demo run"].append(timed(research, root / f"warm-{variant}", root, path))
    print(f"command: {args.command}; load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for variant in variants:
        if len(variants) > 1:
            print(f"{variant} ({variants[variant] or 'the installed code'}):")
        for kind in KINDS:
            print(line(kind, figures[variant][kind]))
    if len(variants) > 1:
        for kind in KINDS:
            before, after = (statistics.median(cpu for _, cpu in figures[v][kind]) for v in ("before", "after"))
            print(f"CPU before / after, {kind}: {before:.2f} / {after:.2f} = {before / after:.2f}x")


if __name__ == "__main__":
    main()
