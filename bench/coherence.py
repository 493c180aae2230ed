r"""Contradictions in demo reports, counted the way a reader would find them (issue 15, item 2).

    python bench/coherence.py [--question "..."]
    python bench/coherence.py --from OUT_DIR ...   # measure reports written before (report.md + run.json)

Runs the product's own path (``Orchestrator`` in demo mode, a fresh DEEPCRITICAL_HOME per question) for
each demo topic's question, or the one given, and reads back ``report.md`` and ``run.json``:

- brief words: length of the answer in brief (without the "Counted:" line);
- cells citing fewer items than they count; table total against the "Counted:" line;
- raw ids (pmid:, doi:, url: ...) outside the reference list; citation numbers with no reference;
- retraction or concern warnings for items that do not name the question's key entities;
- queries run without the question's intervention or condition;
- "no systematic review / randomised trial" limitations while the table counts one;
- findings with advice wording ("is required", "should", "further research");
- scores capped (judge rounds; the report's shown assessment).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
from pathlib import Path

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.passages import ADVICE
from deepcritical.appraisal.topic import on_topic, topic_of
from deepcritical.config import load_settings
from deepcritical.demo.records import load_corpus
from deepcritical.logs import configure_logging
from deepcritical.reading.frame import frame_question
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.run.setup import assemble, http_client
from deepcritical.sources.query import query_names

RAW_ID = re.compile(r"\b(?:pmid|pmcid|doi):|\burl:", re.IGNORECASE)
CELL = re.compile(r"^(\d+)(?: \\\[([\d, ]+)\\\])?$")


async def one_run(question: str, home: Path) -> ResearchOutcome:
    settings = load_settings(demo_mode=True, home=home)
    async with http_client(settings) as client:
        return await Orchestrator(assemble(settings, client)).research(question)


def section(markdown: str, title: str) -> str:
    start = markdown.find(f"## {title}\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[start : end if end > 0 else None] if start >= 0 else ""


def measure(outcome: ResearchOutcome) -> dict[str, int]:
    markdown = outcome.markdown
    body = markdown.split("## References")[0]
    references = len(re.findall(r"^\d+\. ", markdown.split("## References")[1], re.MULTILINE))
    brief = section(markdown, "Answer in brief").split("\n\n")[1]
    short_cells = 0
    in_table = 0
    for line in section(markdown, "Strength of evidence").splitlines():
        if line.startswith("| ") and not line.startswith("| Design"):
            for cell in [cell.strip() for cell in line.strip("|").split("|")][2:]:
                match = CELL.match(cell)
                count = int(match.group(1)) if match else 0
                cited = len(match.group(2).split(", ")) if match and match.group(2) else 0
                in_table += count
                short_cells += count != cited
    counted = re.search(r"Counted: (\d+) of", markdown)
    numbers = [int(n) for group in re.findall(r"\\\[([\d, ]+)\\\]", body) for n in group.split(", ")]
    topic = topic_of(outcome.question)
    by_title = {item.citation.title.rstrip(". "): item for item in outcome.evidence}
    warned = re.findall(r"^> - \*\*(?:Retracted|Expression of concern):\*\* (.*?) \(\d{4}", markdown, re.MULTILINE)
    off_topic_warnings = sum(
        1
        for title in warned
        if (item := by_title.get(title.replace("\\", ""))) is not None and not on_topic(EvidenceView.of(item), topic)
    )
    frame = frame_question(outcome.question)
    queries = [query for step in outcome.searches for query in step.queries]
    drifting = sum(1 for query in queries if not all(query_names(term, query) for term in frame.required))
    limitations = section(markdown, "Limitations")
    table = section(markdown, "Strength of evidence")
    untrue = int("No systematic review" in limitations and "| Systematic reviews and meta-analyses |" in table)
    untrue += int("No randomised controlled trial" in limitations and "| Randomised controlled trials |" in table)
    findings = section(markdown, "Key findings") + section(markdown, "Contrary evidence")
    advice = sum(1 for line in findings.splitlines() if line.startswith("- ") and ADVICE.search(line))
    judge_caps = sum(len(a.caps) for a in outcome.assessments)
    shown_caps = len(outcome.report_assessment.caps) if outcome.report_assessment else 0
    return {
        "brief words": len(brief.split()),
        "cells citing fewer items than counted": short_cells,
        "table total != Counted line": int(counted is None or int(counted.group(1)) != in_table),
        "raw ids outside references": len(RAW_ID.findall(body)),
        "citation numbers without a reference": sum(1 for n in numbers if not 1 <= n <= references),
        "warnings for off-topic items": off_topic_warnings,
        f"queries without intervention/condition (of {len(queries)})": drifting,
        "untrue 'no SR / no RCT' limitations": untrue,
        "findings with advice wording": advice,
        "caps on judge rounds / on the report's ratings": judge_caps * 1000 + shown_caps,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--question", action="append", help="a question (default: every demo topic's)")
    parser.add_argument("--from", dest="written", action="append", type=Path, help="a run's output folder")
    args = parser.parse_args()
    configure_logging()
    if args.written:
        for folder in args.written:
            record = json.loads((folder / "run.json").read_text(encoding="utf-8"))
            markdown = (folder / "report.md").read_text(encoding="utf-8")
            report(ResearchOutcome.model_validate({**record, "markdown": markdown}))
        return
    questions = args.question or [topic.question for topic in load_corpus().topics]
    for question in questions:
        with tempfile.TemporaryDirectory() as home:
            report(await one_run(question, Path(home)))


def report(outcome: ResearchOutcome) -> None:
    print(f"\n{outcome.question}  (iterations {outcome.iterations}, stop: {outcome.stop_reason})")
    for name, value in measure(outcome).items():
        shown = f"{value // 1000} / {value % 1000}" if name.startswith("caps") else str(value)
        print(f"  {name:<52} {shown}")
    if outcome.report_assessment is not None:
        print(f"  {'shown scores':<52} {json.dumps(outcome.report_assessment.scores)}")
    elif outcome.assessments:
        print(f"  {'shown scores (last judge round)':<52} {json.dumps(outcome.assessments[-1].scores)}")


if __name__ == "__main__":
    asyncio.run(main())
