r"""What a demo run costs with each result reader: the CLI's wall and CPU time, cold and warm, and how many
sentences a run reads through the transformer.

    python bench/reader_demo_cost.py [--question "..."] [--all] [--rounds 3] [--readers linear transformer]

Timing: for each reader, a fresh DEEPCRITICAL_HOME; ``deepcritical research QUESTION --demo --reader R`` run as a
subprocess once cold (the store is empty), then ``--rounds`` times warm in the same home (the library holds the
evidence, its vectors are known), the readers' runs interleaved so that the shared machine's load falls on both
alike. Wall time is the whole command (Python's start and imports included); CPU time is the child's user +
system seconds, steadier than wall time on a machine shared with other work. The ONNX graphs come from the user's
model cache (built by an earlier run). The rule of issue 39: the transformer becomes the default when its warm run
stays within 1 s of the linear one's.

Counting (``--count``): the same question run in this process twice with the transformer reader, the encoder's
entry points wrapped to count the texts asked for (``RememberingClassifier`` / ``RememberingRanker``: before a run
remembers what it read) and the texts actually run through the encoders, and their wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

DEMO_QUESTIONS = (
    "Do statins reduce mortality in sepsis?",
    "Do SGLT2 inhibitors improve outcomes in heart failure?",
    "Does vitamin D supplementation prevent or treat depression?",
    "Can metformin be repurposed for Alzheimer's disease?",
    "Does vitamin D supplementation prevent fractures in older adults?",
)
CLI = Path(sys.executable).with_name("deepcritical")


def timed_run(question: str, reader: str, home: Path, out: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one ``deepcritical research --demo`` command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [str(CLI), "research", question, "--demo", "--reader", reader, "--out", str(out), "--quiet"]
    subprocess.run(command, env={**os.environ, "DEEPCRITICAL_HOME": str(home)}, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def timing(question: str, readers: Sequence[str], rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="reader-cost-", ignore_cleanup_errors=True) as folder:
        root = Path(folder)
        cold = {reader: timed_run(question, reader, root / reader, root / f"{reader}-out") for reader in readers}
        warm: dict[str, list[tuple[float, float]]] = {reader: [] for reader in readers}
        for number in range(rounds):
            for reader in readers if number % 2 == 0 else list(reversed(readers)):
                warm[reader].append(timed_run(question, reader, root / reader, root / f"{reader}-out{number}"))
    print(f"question: {question}")
    header = f"{'reader':<12}{'cold wall':>11}{'cold CPU':>10}{'warm wall (median)':>20}{'warm CPU (median)':>19}"
    print(f"{header}  warm walls")
    for reader in readers:
        walls = [wall for wall, _ in warm[reader]]
        cpus = [cpu for _, cpu in warm[reader]]
        print(
            f"{reader:<12}{cold[reader][0]:>10.2f}s{cold[reader][1]:>9.2f}s{statistics.median(walls):>19.2f}s"
            f"{statistics.median(cpus):>18.2f}s  {' '.join(f'{wall:.2f}' for wall in walls)}"
        )
    if len(readers) == 2:
        first, second = readers
        wall_gap = statistics.median(w for w, _ in warm[second]) - statistics.median(w for w, _ in warm[first])
        cpu_gap = statistics.median(c for _, c in warm[second]) - statistics.median(c for _, c in warm[first])
        print(f"warm {second} - {first}: wall {wall_gap:+.2f} s, CPU {cpu_gap:+.2f} s")


def counted(method: Callable[..., Any], counts: Counter[str], seconds: Counter[str], name: str) -> Callable[..., Any]:
    def wrapper(self: Any, texts: Sequence[Any], *rest: Any) -> Any:
        counts[name] += len(texts)
        started = time.perf_counter()
        result = method(self, texts, *rest)
        seconds[name] += time.perf_counter() - started
        return result

    return wrapper


def counting(question: str) -> None:
    from deepcritical.config import load_settings
    from deepcritical.reading import results, transformer_classifier, transformer_ranker
    from deepcritical.run.orchestrator import Orchestrator
    from deepcritical.run.setup import assemble, http_client

    counts: Counter[str] = Counter()
    seconds: Counter[str] = Counter()
    wrapped = (
        (results.RememberingClassifier, "probabilities", "classifier: asked"),
        (transformer_ranker.RememberingRanker, "scores", "re-ranker: asked"),
        (transformer_classifier.TransformerClassifier, "probabilities", "classifier: run through the encoder"),
        (transformer_ranker.TransformerRanker, "unit_scores", "re-ranker: run through the encoder"),
    )
    for owner, method, name in wrapped:
        setattr(owner, method, counted(getattr(owner, method), counts, seconds, name))

    async def run(home: Path) -> float:
        settings = load_settings(demo_mode=True, home=home, reader="transformer")
        started = time.perf_counter()
        async with http_client(settings) as client:
            await Orchestrator(assemble(settings, client)).research(question)
        return time.perf_counter() - started

    logging.disable(logging.CRITICAL)
    print(f"question: {question}")
    with tempfile.TemporaryDirectory(prefix="reader-count-", ignore_cleanup_errors=True) as home:
        for number in range(2):
            counts.clear()
            seconds.clear()
            wall = asyncio.run(run(Path(home)))
            print(f"run {number + 1} ({'cold' if number == 0 else 'warm'}): {wall:.2f} s in the run")
            for _, _, name in wrapped:
                print(f"  {name:<40}{counts[name]:>5} texts {seconds[name]:>7.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--question", default=DEMO_QUESTIONS[0])
    parser.add_argument("--all", action="store_true", help="the five demo questions")
    parser.add_argument("--rounds", type=int, default=3, help="warm runs per reader")
    parser.add_argument("--readers", nargs="+", default=["linear", "transformer"])
    parser.add_argument("--count", action="store_true", help="count the texts read instead of timing")
    args = parser.parse_args()
    for question in DEMO_QUESTIONS if args.all else (args.question,):
        if args.count:
            counting(question)
        else:
            timing(question, args.readers, args.rounds)


if __name__ == "__main__":
    main()
