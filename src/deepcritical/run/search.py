"""One search across the enabled sources, stored and de-duplicated: what ``deepcritical search`` runs
and what an MCP client's literature search runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from deepcritical.config import Settings
from deepcritical.evidence.resources import Resources
from deepcritical.models import Evidence, SearchResult
from deepcritical.run import setup
from deepcritical.run.outcome import new_run_id


@dataclass
class SearchOutcome:
    result: SearchResult
    demo: bool
    run_id: str
    evidence: list[Evidence]
    duplicates: dict[str, str] = field(default_factory=dict)
    newly_stored: int | None = None


async def run_search(
    query: str, settings: Settings, *, max_results: int, store: bool, resources: Resources | None = None
) -> SearchOutcome:
    """Search every enabled source; with ``store``, keep the results in the evidence store after
    dropping items that duplicate something already there (or each other) in meaning. ``resources``: the
    process's (else the search builds its own, and its store opens and closes its own connection)."""
    resources = resources or Resources(settings, share_connection=False)
    async with setup.http_client(settings) as client:
        library = setup.library_source(settings, resources)
        result = await setup.sources(settings, client, library).handler.execute(query, max_results)
    outcome = SearchOutcome(
        result=result, demo=settings.demo_mode, run_id=new_run_id("search"), evidence=result.evidence
    )
    if store and result.evidence:
        opener = setup.store_opener(resources)
        evidence_store = await opener(settings, outcome.run_id, query)
        try:
            dedup = await evidence_store.deduplicate(result.evidence)
            outcome.newly_stored = await evidence_store.add(dedup.kept)
            outcome.evidence, outcome.duplicates = dedup.kept, dedup.duplicates
        finally:
            await evidence_store.close()
    return outcome
