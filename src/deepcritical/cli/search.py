"""``deepcritical search``: what one search found, as a table or as JSON."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from deepcritical.cli.terminal import shown
from deepcritical.run.search import SearchOutcome

DEMO_NOTICE = "DEMO MODE: every result below is synthetic demo data, not real literature."
# A synthetic PMID, NCT number or DOI names no real page: its link would open PubMed's "not found", or another
# paper. The demo's table says so instead (its JSON keeps the record whole, flagged synthetic_demo_data).
DEMO_NO_PAGE = "none (synthetic record)"


def render_search_json(outcome: SearchOutcome) -> dict[str, Any]:
    result = outcome.result
    return {
        "query": result.query,
        "synthetic_demo_data": outcome.demo,
        "sources_searched": result.sources_searched,
        "total_found": result.total_found,
        "errors": result.errors,
        "sources_disabled": result.disabled,
        "run_id": outcome.run_id,
        "newly_stored": outcome.newly_stored,
        "semantic_duplicates": outcome.duplicates,
        "evidence": [item.model_dump(mode="json") for item in outcome.evidence],
    }


def render_search_table(outcome: SearchOutcome, out: Console, err: Console) -> None:
    """A table of what was found. Every field comes from outside, so all of it goes through ``shown``."""
    if outcome.demo:
        out.print(f"[bold yellow]{DEMO_NOTICE}[/]")
    table = Table(title=shown(f"{outcome.result.query}"), show_lines=False)
    for column in ("#", "source", "title", "design", "date", "URL"):
        table.add_column(column, overflow="fold")
    for number, item in enumerate(outcome.evidence, start=1):
        design = item.grade.label
        if item.grade.level is not None:
            design += f" (level {item.grade.level})"
        if item.retracted:
            design = f"RETRACTED: {design}"
        table.add_row(
            str(number),
            shown(",".join(item.found_by)),
            shown(item.citation.title),
            shown(design),
            shown(item.citation.date),
            DEMO_NO_PAGE if outcome.demo else shown(item.citation.url),
        )
    out.print(table)
    summary = f"{len(outcome.evidence)} shown, {outcome.result.total_found} found"
    if outcome.duplicates:
        summary += f", {len(outcome.duplicates)} dropped as duplicates in meaning"
    out.print(shown(summary))
    for name, reason in outcome.result.disabled.items():
        err.print(f"[yellow]source off:[/] {shown(name)}: {shown(reason)}")
    for error in outcome.result.errors:
        err.print(f"[yellow]source problem:[/] {shown(error)}")
