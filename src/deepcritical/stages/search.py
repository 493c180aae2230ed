"""The search stage: queries to every source at once, then de-duplication in the store, then recall of
related evidence already stored; what is new joins the run's evidence. The Brain runs it through its
``search`` tool, and the loop runs it with queries built in code when the Brain did not search: one
stage, one set of guards, one record of what it did."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Literal

import structlog

from deepcritical.appraisal.aspects import ASPECT_QUERY_WORDS
from deepcritical.appraisal.studies import group_studies, record_counts
from deepcritical.events import QueriesPlanned, SearchFinished, StageEvent
from deepcritical.models import Evidence, SearchResult, first_errors, merge_evidence
from deepcritical.outputs import MAX_QUERIES_PER_TURN, SearchStep
from deepcritical.reading.frame import frame_question
from deepcritical.sources.query import is_search_query, tidy_query, with_terms
from deepcritical.stages.collection import RunEvidence
from deepcritical.stages.ports import EvidenceStoreLike, SearchHandlerLike
from deepcritical.stages.selection import asks_for_held_kind, held_kinds
from deepcritical.stages.state import Budget, RunState
from deepcritical.text import shorten

logger = structlog.get_logger(__name__)

DEFAULT_RELATED_MIN_SCORE = 0.4
# A model may call a tool again and again within one turn; this bounds what a turn can cost.
MAX_SEARCHES_PER_TURN = 3
MAX_LISTED_ITEMS = 12
LISTED_TITLE_CHARS = 160


def source_status(results: Iterable[SearchResult]) -> tuple[list[str], dict[str, str], list[str]]:
    """Sources that answered, sources that failed (with their first error), and every error line."""
    results = list(results)
    answered = dict.fromkeys(name for result in results for name in result.answered_sources)
    errors = dict.fromkeys(line for result in results for line in result.errors)
    return list(answered), first_errors(result.failed_sources for result in results), list(errors)


def fallback_queries(state: RunState) -> list[str]:
    """Queries built in code, for an iteration in which the Brain ran no search of its own: the judge's
    next queries, the question, and its frame (intervention, outcomes, population) with each aspect's words.
    Every one keeps the frame's intervention and population whole ("vitamin D", never "vitamin")."""
    frame = frame_question(state.question)
    base = frame.base or state.question
    last = state.last_assessment
    candidates = [*(last.next_queries if last else []), state.question, base]
    candidates += [f"{base} {words}" for words in ASPECT_QUERY_WORDS.values()]
    anchored = (with_terms(query, frame.required) for query in candidates)
    return [query for query in dict.fromkeys(anchored) if state.is_new_query(query)][:MAX_QUERIES_PER_TURN]


class SearchStage:
    """Runs queries through the handler and files what they find in the run's evidence."""

    def __init__(
        self,
        handler: SearchHandlerLike,
        store: EvidenceStoreLike,
        evidence: RunEvidence,
        state: RunState,
        budget: Budget,
        *,
        emit: Callable[[StageEvent], None] = lambda _event: None,
        max_results_per_source: int = 10,
        related_n: int = 5,
        related_min_score: float = DEFAULT_RELATED_MIN_SCORE,
        recall: bool = True,
    ) -> None:
        self._handler = handler
        self._store = store
        self.evidence = evidence
        self._state = state
        self._budget = budget
        self._emit = emit
        self._max_results = max_results_per_source
        self._related_n = related_n
        self._related_min_score = related_min_score
        self._recall = recall  # off: evidence of earlier runs is never recalled (--no-recall, the demo)
        # Called after every finished search step (the run's checkpoint), before the model hears of it.
        self.after_step: Callable[[], Awaitable[None]] | None = None

    def _refusal(self, fresh: Sequence[str]) -> str | None:
        """Why a search may not run now, or None."""
        if self._budget.expired():
            return "not run: the time budget is spent"
        if self.evidence.full:
            return f"not run: the evidence cap of {self.evidence.max_evidence} items is reached"
        if not fresh:
            return "not run: every query was already run"
        if self._state.search_calls.get(self._state.iteration, 0) >= MAX_SEARCHES_PER_TURN:
            return f"not run: {MAX_SEARCHES_PER_TURN} searches this iteration already; finish your turn"
        return None

    async def search(self, queries: Sequence[str], *, by: Literal["model", "code"] = "model") -> dict[str, Any]:
        """Run the new queries among ``queries``, record the step, and summarise it for the model."""
        state = self._state
        # Whoever planned them, queries keep the question's intervention and condition.
        required = frame_question(state.question).required
        # Code or markup is judged as written: tidied first, "<b>metformin</b>" would pass as "b>metformin</b".
        rejected = [q for q in queries if q.strip() and not is_search_query(q)]
        tidied = (tidy_query(q) for q in queries if q.strip() and q not in rejected)
        anchored = (with_terms(q, required) for q in tidied if q)
        fresh = [q for q in dict.fromkeys(anchored) if q and state.is_new_query(q)]
        # No round searches again for a kind of study it holds on the question (it would find the same trials).
        kinds = held_kinds(state.question, self.evidence.items.values())
        held = {q: kind for q in fresh if (kind := asks_for_held_kind(q, kinds)) is not None}
        fresh = [q for q in fresh if q not in held][:MAX_QUERIES_PER_TURN]
        if held and not fresh:
            logger.info("queries_for_collected_designs", count=len(held), by=by)
            named = ", ".join(dict.fromkeys(held.values()))
            return {"status": f"not run: the run already holds {named} on the question; search for what is missing"}
        if rejected and not fresh:
            logger.info("queries_rejected", count=len(rejected), by=by)
            return {"status": "not run: these are not search queries (code, markup or a paragraph); send a few terms"}
        if (refusal := self._refusal(fresh)) is not None:
            return {"status": refusal, "queries_already_run": state.queries_run} if not fresh else {"status": refusal}
        state.search_calls[state.iteration] = state.search_calls.get(state.iteration, 0) + 1
        self._emit(QueriesPlanned(iteration=state.iteration, queries=fresh, by=by))
        step = await self.run(fresh, question=state.question)
        state.queries_run += fresh
        state.searches.append(step)
        state.add_time("search", step.search_seconds)
        state.add_time("embedding_dedup", step.store_seconds)
        records = record_counts(group_studies(self.evidence.items.values()))
        self._emit(
            SearchFinished(
                iteration=state.iteration,
                queries=fresh,
                sources_answered=step.sources_answered,
                sources_failed=step.sources_failed,
                found=step.found,
                kept=len(step.kept_ids),
                deduplicated=step.deduplicated,
                related=len(step.related_ids),
                total_evidence=len(self.evidence),
                capped=step.capped,
                records_identified=sum(records.identified.values()),
                duplicates_removed=records.duplicates,
            )
        )
        if self.after_step is not None:
            await self.after_step()
        items = self.evidence.items
        listed = [items[i] for i in step.kept_ids + step.related_ids if i in items][:MAX_LISTED_ITEMS]
        return {
            "status": "searched",
            "ran": fresh,
            "sources_answered": step.sources_answered,
            "sources_failed": step.sources_failed,
            "found": step.found,
            "new_items": len(step.kept_ids),
            "duplicates_dropped": step.deduplicated,
            "related_recalled": len(step.related_ids),
            "collected_total": len(self.evidence),
            "evidence_cap": self.evidence.max_evidence,
            "items": [
                {
                    "id": item.id,
                    "title": shorten(item.citation.title, LISTED_TITLE_CHARS),
                    "source": item.citation.source,
                }
                for item in listed
            ],
        }

    async def fallback(self) -> dict[str, Any]:
        """The search for an iteration whose Brain ran none: queries built in code, no model needed."""
        return await self.search(fallback_queries(self._state), by="code")

    async def run(self, queries: Sequence[str], *, question: str | None = None) -> SearchStep:
        """Search every query on every source at once; keep what is new, drop duplicates in meaning,
        store the rest (up to the cap), then recall related stored evidence."""
        evidence = self.evidence
        queries = list(dict.fromkeys(query.strip() for query in queries if query.strip()))
        started = time.perf_counter()
        results = await asyncio.gather(*(self._handler.execute(query, self._max_results) for query in queries))
        searched = time.perf_counter()
        answered, failed, errors = source_status(results)
        # Studies before web pages, then by relevance: when a news page and the paper it reports are
        # duplicates in meaning, the earlier one is kept, and it should be the graded paper.
        merged = sorted(
            merge_evidence([item for result in results for item in result.evidence]),
            key=lambda item: (item.grade.design == "web", -item.relevance),
        )
        # Seen again: merged into the item collected (under the better record's id), not collected twice.
        fresh = await evidence.merge_known(merged)

        kept: list[Evidence] = []
        duplicates: dict[str, str] = {}
        capped = bool(fresh) and evidence.full
        if fresh and not evidence.full:
            dedup = await self._store.deduplicate(fresh)
            duplicates = dict(dedup.duplicates)
            capped = len(dedup.kept) > evidence.room
            kept = await evidence.add(dedup.kept)
            # A duplicate of a stored item this run did not collect itself (another writer sharing the
            # collection) still belongs to this run's evidence.
            earlier = [target for target in dict.fromkeys(duplicates.values()) if target not in evidence.items]
            if earlier and not evidence.full:
                kept += await evidence.add(list(await self._store.get(earlier)))

        related: list[Evidence] = []
        anchor = question or (queries[0] if queries else "")
        if anchor and self._recall and not evidence.full:
            scored = await self._store.related(anchor, exclude_ids=list(evidence.items), n=self._related_n)
            recalled = [
                hit.evidence
                for hit in scored
                if hit.score >= self._related_min_score and hit.evidence.id not in evidence.items
            ]
            # Recall reaches the library (earlier runs); what it brings in joins the run's evidence, marked
            # as recalled, so the Judge sees it but it never counts as something this run's searches found.
            related = await evidence.add(recalled, recalled=True)
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
            collected=len(evidence),
            capped=capped,
        )
        return step
