r"""Wall time per stage of a demo research run, end to end.

    python bench/research_run.py [--question "..."] [--runs 2]

Each run is the product's own path: ``Orchestrator`` in demo mode (deterministic FunctionModels, the
demo transports behind the real sources) over a real ``EvidenceStore`` in a temporary DEEPCRITICAL_HOME
with the real embedding model (``DEEPCRITICAL_EMBEDDING_BACKEND`` picks its backend). The first run is
cold (it loads the embedding model, building its ONNX graph into the temporary home, which lands in
"embedding + de-duplication"); later runs in the same process and home are warm: the library already
holds the evidence they find again, so its vectors are reused rather than embedded. Stages:

- search: the sources answering the queries (demo transports: parsing, BM25 over the demo corpus);
- embedding + de-duplication: embedding new evidence, semantic de-duplication, storing, related recall;
- planning: the Brain's turns besides the searches they run (model calls, term context);
- judging: selecting at most K items (hybrid retrieval + MMR) and the Judge;
- report: the Report agent, citation check and rendering;
- total: from start to the finished outcome (includes opening the store).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import time
from pathlib import Path

from deepcritical.config import load_settings
from deepcritical.evidence import EmbeddingService
from deepcritical.logs import configure_logging
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.run.setup import assemble, http_client

DEFAULT_QUESTION = "Can metformin be repurposed for Alzheimer's disease?"
STAGES = (
    ("search", "search"),
    ("embedding_dedup", "embedding + de-duplication"),
    ("planning", "planning (Brain)"),
    ("judge", "judging"),
    ("report", "report"),
    ("store_open", "opening the store"),
    ("total", "total"),
)


Row = tuple[str, ResearchOutcome, float, float]


async def one_run(question: str, home: Path) -> tuple[ResearchOutcome, float, float]:
    settings = load_settings(demo_mode=True, home=home)
    started, cpu = time.perf_counter(), time.process_time()
    async with http_client(settings) as client:
        outcome = await Orchestrator(assemble(settings, client)).research(question)
    return outcome, time.perf_counter() - started, time.process_time() - cpu


def table(rows: list[Row]) -> str:
    header = f"{'stage':<30}" + "".join(f"{row[0]:>12}" for row in rows)
    lines = [header, "-" * len(header)]
    for key, name in STAGES:
        lines.append(f"{name:<30}" + "".join(f"{row[1].timings.get(key, 0.0):>11.3f}s" for row in rows))
    lines.append(f"{'wall clock (outside the run)':<30}" + "".join(f"{row[2]:>11.3f}s" for row in rows))
    # CPU seconds of the process (both cores count): steadier than wall time on a shared machine.
    lines.append(f"{'CPU time of the process':<30}" + "".join(f"{row[3]:>11.3f}s" for row in rows))
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--question", default=DEFAULT_QUESTION)
    parser.add_argument("--runs", type=int, default=2, help="runs in one process; the first is cold")
    args = parser.parse_args()
    configure_logging()
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    rows = []
    # ignore_cleanup_errors: a run may still be closing a file of the home (the store, the rate limit)
    # as the folder is removed; what is left is in the system temporary folder.
    with tempfile.TemporaryDirectory(prefix="deepcritical-bench-", ignore_cleanup_errors=True) as home:
        for number in range(args.runs):
            outcome, wall, cpu = await one_run(args.question, Path(home))
            rows.append(("cold" if number == 0 else f"warm {number}", outcome, wall, cpu))
    first = rows[0][1]
    print(f"question: {args.question}")
    print(
        f"stop reason: {first.stop_reason}; iterations: {first.iterations}; evidence: {len(first.evidence)} "
        f"from {', '.join(f'{name} {count}' for name, count in first.sources.items())}; "
        f"findings: {len(first.report.key_findings)} + {len(first.report.contrary_evidence)} contrary; "
        f"LLM requests: {first.llm_usage.requests}"
    )
    print(f"embedding backend: {EmbeddingService.for_settings(load_settings(demo_mode=True)).backend}")
    print(table(rows))


if __name__ == "__main__":
    asyncio.run(main())
