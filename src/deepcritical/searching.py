"""One search across the enabled sources, stored and de-duplicated: what ``deepcritical search`` runs."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from deepcritical.config import Settings
from deepcritical.evidence import EmbeddingService, EvidenceStore
from deepcritical.models import Evidence, SearchResult
from deepcritical.sources.factory import build_sources, make_http_client

DEMO_NOTICE = "DEMO MODE: every result below is synthetic demo data, not real literature."


@dataclass
class SearchOutcome:
    result: SearchResult
    demo: bool
    run_id: str
    evidence: list[Evidence]
    duplicates: dict[str, str] = field(default_factory=dict)
    newly_stored: int | None = None


def new_run_id(kind: str) -> str:
    return f"{kind}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"


async def run_search(query: str, settings: Settings, *, max_results: int, store: bool) -> SearchOutcome:
    """Search every enabled source; with ``store``, keep the results in the evidence store after
    dropping items that duplicate something already there (or each other) in meaning."""
    async with make_http_client(settings) as client:
        result = await build_sources(settings, client).handler.execute(query, max_results)
    outcome = SearchOutcome(
        result=result, demo=settings.demo_mode, run_id=new_run_id("search"), evidence=result.evidence
    )
    if store and result.evidence:
        evidence_store = await EvidenceStore.open(settings, EmbeddingService(settings.embedding_model), outcome.run_id)
        try:
            dedup = await evidence_store.deduplicate(result.evidence)
            outcome.newly_stored = await evidence_store.add(dedup.kept)
            outcome.evidence, outcome.duplicates = dedup.kept, dedup.duplicates
        finally:
            await evidence_store.close()
    return outcome


def render_search_json(outcome: SearchOutcome) -> dict[str, Any]:
    result = outcome.result
    return {
        "query": result.query,
        "synthetic_demo_data": outcome.demo,
        "sources_searched": result.sources_searched,
        "total_found": result.total_found,
        "errors": result.errors,
        "run_id": outcome.run_id,
        "newly_stored": outcome.newly_stored,
        "semantic_duplicates": outcome.duplicates,
        "evidence": [item.model_dump(mode="json") for item in outcome.evidence],
    }


def render_search_table(outcome: SearchOutcome, out: Console, err: Console) -> None:
    """A table of what was found. Every field comes from outside, so all of it is escaped."""
    if outcome.demo:
        out.print(f"[bold yellow]{DEMO_NOTICE}[/]")
    table = Table(title=escape(f"{outcome.result.query}"), show_lines=False)
    for column in ("#", "source", "title", "date", "URL"):
        table.add_column(column, overflow="fold")
    for number, item in enumerate(outcome.evidence, start=1):
        table.add_row(
            str(number),
            escape(",".join(item.found_by)),
            escape(item.citation.title),
            escape(item.citation.date),
            escape(item.citation.url),
        )
    out.print(table)
    summary = f"{len(outcome.evidence)} shown, {outcome.result.total_found} found"
    if outcome.duplicates:
        summary += f", {len(outcome.duplicates)} dropped as duplicates in meaning"
    out.print(escape(summary))
    for error in outcome.result.errors:
        err.print(f"[yellow]source problem:[/] {escape(error)}")
