"""The search step as a unit of its own: sources, then de-duplication in the store, then recall of
related evidence already stored. The Brain calls it through a tool; it works without the Brain too."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence

import structlog
from pydantic import BaseModel, Field

from deepcritical.agents.ports import EvidenceStoreLike, SearchHandlerLike
from deepcritical.models import Evidence, SearchResult, merge_evidence

logger = structlog.get_logger(__name__)

DEFAULT_RELATED_MIN_SCORE = 0.4


class SearchStep(BaseModel):
    """What one search step did, in counts and ids (the evidence itself lives in the run's collection)."""

    queries: list[str]
    sources_answered: list[str] = Field(description="Sources that answered at least one query")
    sources_failed: dict[str, str] = Field(description="Source -> first error, for sources that failed a query")
    found: int = Field(description="Items the sources returned, before any de-duplication")
    kept_ids: list[str] = Field(description="Items new to this run, stored and collected")
    deduplicated: int = Field(description="Items dropped as duplicates in meaning of stored evidence")
    duplicates: dict[str, str] = Field(description="Dropped id -> id of the stored item it duplicates")
    already_collected: int = Field(description="Items this run had already collected")
    related_ids: list[str] = Field(description="Stored items recalled as related to the question")
    capped: bool = Field(description="True when the evidence cap stopped items from being added")
    errors: list[str]
    search_seconds: float
    store_seconds: float


def source_status(results: Iterable[SearchResult]) -> tuple[list[str], dict[str, str], list[str]]:
    """Sources that answered, sources that failed (with their first error), and every error line."""
    answered: dict[str, None] = {}
    failed: dict[str, str] = {}
    errors: dict[str, None] = {}
    for result in results:
        for name, line in result.failed_sources.items():
            failed.setdefault(name, line)
        errors.update(dict.fromkeys(result.errors))
        answered.update(dict.fromkeys(result.answered_sources))
    return list(answered), failed, list(errors)


class SearchAgent:
    """Runs queries through the handler and files what they find. Keeps the run's collected evidence
    and enforces the evidence cap: once the run holds ``max_evidence`` items nothing more is added."""

    def __init__(
        self,
        handler: SearchHandlerLike,
        store: EvidenceStoreLike,
        *,
        max_results_per_source: int = 10,
        max_evidence: int = 150,
        related_n: int = 5,
        related_min_score: float = DEFAULT_RELATED_MIN_SCORE,
    ) -> None:
        self._handler = handler
        self._store = store
        self._max_results = max_results_per_source
        self.max_evidence = max_evidence
        self._related_n = related_n
        self._related_min_score = related_min_score
        self.collected: dict[str, Evidence] = {}
        self._identities: dict[str, str] = {}  # every PMID / DOI / URL key of a collected item -> its id

    @property
    def full(self) -> bool:
        return len(self.collected) >= self.max_evidence

    def _room(self) -> int:
        return max(self.max_evidence - len(self.collected), 0)

    def _collect(self, items: Sequence[Evidence]) -> list[Evidence]:
        taken = list(items[: self._room()])
        for item in taken:
            self.collected[item.id] = item
            self._identities.update(dict.fromkeys(item.identity_keys, item.id))
        return taken

    def _collected_as(self, item: Evidence) -> str | None:
        """The id under which this item was already collected: the same PMID, DOI or URL, even when a
        later source names it differently (a web page at a DOI first, the PubMed record later)."""
        return next((self._identities[key] for key in item.identity_keys if key in self._identities), None)

    async def _store_and_collect(self, items: Sequence[Evidence]) -> list[Evidence]:
        # Stored first: if the store fails, nothing is counted as collected that is not persisted.
        taken = list(items[: self._room()])
        if taken:
            await self._store.add(taken)
        return self._collect(taken)

    async def run(self, queries: Sequence[str], *, question: str | None = None) -> SearchStep:
        """Search every query on every source at once; keep what is new, drop duplicates in meaning,
        store the rest (up to the cap), then recall related stored evidence."""
        queries = list(dict.fromkeys(query.strip() for query in queries if query.strip()))
        started = time.perf_counter()
        results = await asyncio.gather(*(self._handler.execute(query, self._max_results) for query in queries))
        searched = time.perf_counter()
        answered, failed, errors = source_status(results)
        merged = sorted(
            merge_evidence([item for result in results for item in result.evidence]),
            key=lambda item: item.relevance,
            reverse=True,
        )
        fresh: list[Evidence] = []
        for item in merged:
            if (known := self._collected_as(item)) is None:
                fresh.append(item)
                continue
            # Seen again: remember every source that returned it, under the id it was collected as.
            self.collected[known] = self.collected[known].with_sources(item.found_by)

        kept: list[Evidence] = []
        duplicates: dict[str, str] = {}
        capped = False
        if fresh and not self.full:
            dedup = await self._store.deduplicate(fresh)
            duplicates = dict(dedup.duplicates)
            capped = len(dedup.kept) > self._room()
            kept = await self._store_and_collect(dedup.kept)
            # A duplicate of a stored item this agent did not collect itself (another writer, or an
            # earlier run sharing the collection) still belongs to this run's evidence.
            earlier = [target for target in dict.fromkeys(duplicates.values()) if target not in self.collected]
            if earlier and not self.full:
                kept += self._collect(list(await self._store.get(earlier)))
        elif fresh:
            capped = True

        related: list[Evidence] = []
        anchor = question or (queries[0] if queries else "")
        if anchor and not self.full:
            scored = await self._store.related(anchor, exclude_ids=list(self.collected), n=self._related_n)
            recalled = [
                hit.evidence
                for hit in scored
                if hit.score >= self._related_min_score and hit.evidence.id not in self.collected
            ]
            # Recall reaches the library (earlier runs); what it brings in must join the run's collection,
            # or the judge's selection (which reads that collection) would never see it.
            related = await self._store_and_collect(recalled)
        step = SearchStep(
            queries=queries,
            sources_answered=answered,
            sources_failed=failed,
            found=sum(result.total_found for result in results),
            kept_ids=[item.id for item in kept],
            deduplicated=len(duplicates),
            duplicates=duplicates,
            already_collected=len(merged) - len(fresh),
            related_ids=[item.id for item in related],
            capped=capped,
            errors=errors,
            search_seconds=searched - started,
            store_seconds=time.perf_counter() - searched,
        )
        logger.info(
            "search_step",
            queries=len(queries),
            found=step.found,
            kept=len(step.kept_ids),
            deduplicated=step.deduplicated,
            related=len(related),
            collected=len(self.collected),
            capped=capped,
        )
        return step
