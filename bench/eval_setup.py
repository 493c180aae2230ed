r"""``deepcritical eval pubmedqa`` as a user runs it, twice, in two ``--out`` folders: the first embeds the
pool, the second finds the pool's vectors cached (by content hash, once per user).

    python bench/eval_setup.py [--file ../shared/data/pubmedqa/pqal_dev.json] [--limit 100]

Both runs are the product's command in a fresh process (``--no-llm``: the code planner, judge, report and
verdict, so no model server is needed), with one empty ``DEEPCRITICAL_MODEL_CACHE`` for the two (the
first also builds the ONNX graph there). Printed per run: wall seconds, CPU seconds of the process, and
the set-up and prediction seconds the command records in ``timing.json``; then the second run's ratios
to the first, measured in this one invocation. ``PYTHONPATH=OTHER/src`` times another work tree's code.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pubmedqa" / "pqal_dev.json"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_eval(command: str, data: Path, limit: int, out: Path, env: dict[str, str]) -> dict[str, float]:
    cpu, started = children_cpu(), time.perf_counter()
    result = subprocess.run(
        [command, "eval", "pubmedqa", str(data), "--no-llm", "--limit", str(limit), "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"eval exited {result.returncode}: {result.stderr.strip()[-800:]}")
    timing = json.loads((out / "timing.json").read_text(encoding="utf-8"))
    return {
        "wall": wall,
        "cpu": children_cpu() - cpu,
        "setup": float(timing["setup_seconds"]),
        "predict": float(timing["predict_seconds"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--command", default=str(Path(sys.executable).with_name("deepcritical")))
    args = parser.parse_args()
    if not args.file.is_file():
        sys.exit(f"no PubMedQA file at {args.file} (the shared reference data sits beside the clone)")
    with tempfile.TemporaryDirectory(prefix="deepcritical-eval-bench-") as scratch:
        root = Path(scratch)
        env = {**os.environ, "DEEPCRITICAL_MODEL_CACHE": str(root / "model-cache"), "DEEPCRITICAL_HOME": str(root)}
        first = one_eval(args.command, args.file, args.limit, root / "out-1", env)
        second = one_eval(args.command, args.file, args.limit, root / "out-2", env)
    print(f"code: PYTHONPATH={os.environ.get('PYTHONPATH', '')!r}; items: {args.limit}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'run':<34} {'wall s':>8} {'CPU s':>8} {'set-up s':>9} {'predict s':>10}")
    for name, run in (("first --out (embeds the pool)", first), ("second --out (pool cached)", second)):
        print(f"{name:<34} {run['wall']:>8.1f} {run['cpu']:>8.1f} {run['setup']:>9.1f} {run['predict']:>10.1f}")
    print(
        f"second / first: wall {second['wall'] / first['wall']:.2f}, CPU {second['cpu'] / first['cpu']:.2f}, "
        f"set-up {second['setup'] / first['setup']:.2f}"
    )


if __name__ == "__main__":
    main()
