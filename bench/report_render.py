"""The page's report on each demo topic's report: written from the report's document by report/html.py (what
the page shows), with the Markdown writer and report.json's size beside it.

    python bench/report_render.py [--repeat 50]

Each demo topic is run once offline (the demo's stand-ins); every renderer then runs ``--repeat`` times on
its report and the median is printed, in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from deepcritical.config import load_settings
from deepcritical.demo.records import load_corpus
from deepcritical.report.document import ReportDocument
from deepcritical.report.html import to_html
from deepcritical.report.markdown_writer import to_markdown
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.run.setup import assemble, http_client


async def outcomes(home: Path) -> list[ResearchOutcome]:
    done = []
    for topic in load_corpus().topics:
        settings = load_settings(demo_mode=True, home=home)
        async with http_client(settings) as client:
            done.append(await Orchestrator(assemble(settings, client)).research(topic.question))
    return done


def median_ms(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    runs = asyncio.run(outcomes(Path(tempfile.mkdtemp(prefix="report-render-"))))
    print(f"{'topic':<60} {'report.md':>9} {'json':>7} {'md':>6} {'html':>6} {'json+html':>9}")
    for outcome in runs:
        document = outcome.document
        assert document is not None
        stored = document.model_dump_json()
        row = [
            median_ms(lambda d=document: to_markdown(d), args.repeat),
            median_ms(lambda d=document: to_html(d), args.repeat),
            median_ms(lambda s=stored: to_html(ReportDocument.model_validate_json(s)), args.repeat),
        ]
        sizes = f"{len(outcome.markdown.encode()):>9,} {len(stored.encode()):>7,}"
        print(
            f"{outcome.question[:60]:<60} {sizes} "
            + " ".join(f"{value:>6.2f}" for value in row[:2])
            + f" {row[2]:>9.2f}"
        )
    print("bytes: report.md and report.json; ms (median): Markdown writer, HTML writer, report.json read and")
    print("written as HTML (what the page's request does).")


if __name__ == "__main__":
    main()
