r"""Wall time of the ``deepcritical`` command as a user runs it: start-up, a cold and a warm demo run.

    python bench/cli_timing.py [--repeat 3] [--command PATH]

Each figure is the median of ``--repeat`` runs of a fresh process (``subprocess``, wall clock from
start to exit), so it includes the interpreter, the imports, loading the embedding model and the run:

- ``--help``: start-up and the CLI's imports only;
- cold demo run: ``research QUESTION --demo`` in a fresh, empty ``DEEPCRITICAL_HOME`` each time (no
  evidence store, no cached model files);
- warm demo run: the same in one home that an unmeasured run has already used (the store exists, the
  library holds the evidence, anything cached at first use is there; the OS file cache is warm).

The command defaults to the ``deepcritical`` script beside this interpreter; ``PYTHONPATH`` is passed on,
so ``PYTHONPATH=$PWD/src`` times a work tree's code with a shared virtualenv. The load average is printed
with the figures, and each process's CPU seconds (user + system) beside its wall time: on a shared
machine wall time is noisy, CPU time much less so.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUESTION = "Can metformin be repurposed for Alzheimer's disease?"


CPU_SECONDS: list[float] = []  # user + system seconds of each timed process, in order


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], home: Path, out: Path) -> float:
    env = {**os.environ, "DEEPCRITICAL_HOME": str(home)}
    cpu, started = children_cpu(), time.perf_counter()
    result = subprocess.run(command, env=env, cwd=out, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    CPU_SECONDS.append(children_cpu() - cpu)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command[:2])} exited {result.returncode}: {result.stderr.strip()[-500:]}")
    return elapsed


def line(name: str, times: list[float], cpus: list[float]) -> str:
    shown = ", ".join(f"{value:.2f}" for value in times)
    return (
        f"{name:<16} median {statistics.median(times):6.2f} s   ({shown});"
        f"   CPU median {statistics.median(cpus):6.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--command", default=str(Path(sys.executable).with_name("deepcritical")))
    args = parser.parse_args()
    research = [args.command, "research", QUESTION, "--demo", "--out", "out"]
    with tempfile.TemporaryDirectory(prefix="deepcritical-cli-bench-") as scratch:
        root = Path(scratch)
        helps = [timed([args.command, "--help"], root / "help-home", root) for _ in range(args.repeat)]
        colds = [timed(research, root / f"cold-{number}", root) for number in range(args.repeat)]
        warm_home = root / "warm"
        timed(research, warm_home, root)  # prepares the home; not counted
        warms = [timed(research, warm_home, root) for _ in range(args.repeat)]
    print(f"command: {args.command}; load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    n = args.repeat
    print(line("--help", helps, CPU_SECONDS[:n]))
    print(line("cold demo run", colds, CPU_SECONDS[n : 2 * n]))
    print(line("warm demo run", warms, CPU_SECONDS[2 * n + 1 :]))


if __name__ == "__main__":
    main()
