r"""The five demo questions' verdicts with each result reader (``--reader``), on the product's own path.

    python bench/demo_verdicts.py [--readers linear,transformer]

Each question is run in demo mode (``Orchestrator``, a fresh DEEPCRITICAL_HOME per reader) and its verdict
printed: label, confidence, the evidence it rests on, and whether it is the label the demo corpus states
(``tests/reading/test_demo_verdicts.py``'s). The readers' runs share one process, as a server's would: each
reads with its own (``appraisal.reader_choice``). Figures: phases/16_result_reader.md, round 4: the run's reader.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from deepcritical.config import load_settings
from deepcritical.logs import configure_logging
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.setup import assemble, http_client

# The demo's questions and the answer each one's corpus states (as the test expects them).
EXPECTED = {
    "Do statins reduce mortality in sepsis?": "no",
    "Do SGLT2 inhibitors improve outcomes in heart failure?": "yes",
    "Does vitamin D supplementation prevent or treat depression?": "maybe",
    "Can metformin be repurposed for Alzheimer's disease?": "maybe",
    "Does vitamin D supplementation prevent fractures in older adults?": "insufficient",
}


async def verdicts(reader: str, home: Path) -> None:
    settings = load_settings(demo_mode=True, home=home, reader=reader)
    async with http_client(settings) as client:
        for question, expected in EXPECTED.items():
            started = time.perf_counter()
            outcome = await Orchestrator(assemble(settings, client)).research(question)
            seconds = time.perf_counter() - started
            verdict = outcome.verdict
            assert verdict is not None
            mark = "as expected" if verdict.label == expected else f"EXPECTED {expected}"
            print(
                f"{reader:<12} {verdict.label:<13} {verdict.confidence:.2f}  {mark:<14} {seconds:5.1f} s  "
                f"{question}  rests on {', '.join(verdict.evidence_ids) or '-'}"
            )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--readers", default="linear,transformer")
    args = parser.parse_args()
    configure_logging(verbose=False)
    # A store may still be closing its files as the directory goes: what is left is the OS's to clean.
    with tempfile.TemporaryDirectory(prefix="deepcritical-demo-verdicts-", ignore_cleanup_errors=True) as scratch:
        for reader in args.readers.split(","):
            await verdicts(reader, Path(scratch) / reader)


if __name__ == "__main__":
    asyncio.run(main())
