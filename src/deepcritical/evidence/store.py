"""The shared context of a research run: its evidence, embedded once, in Chroma.

Two collections: the run's own (named after the run id) and ``library``, which every run adds to so a
later run can recall what an earlier one found. ``add`` writes both. What reads which:

- ``search_similar``, ``search``, ``select_for_judge``, ``deduplicate``, ``all``, ``get``, ``count``:
  the run collection only (this run's evidence).
- ``related``: the run collection and the library (evidence this run has not seen yet).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeVar

import numpy as np
import structlog

from deepcritical.config import Settings
from deepcritical.errors import DeepCriticalError, StoreError
from deepcritical.evidence import chroma
from deepcritical.evidence.dedup import StoreMatch, plan
from deepcritical.evidence.embeddings import EmbeddingService, Vectors, passage_text
from deepcritical.evidence.retrieval import HybridIndex, RetrievalMode
from deepcritical.evidence.types import DedupResult, ScoredEvidence
from deepcritical.models import Evidence, SourceName, merge_evidence

log = structlog.get_logger(__name__)
T = TypeVar("T")

# How many hybrid candidates MMR chooses from, per item selected.
_MMR_POOL_FACTOR = 3


def embedding_text(evidence: Evidence) -> str:
    return passage_text(evidence.citation.title, evidence.content)


class EvidenceStore:
    """Evidence of one research run, persisted in Chroma. Open with ``await EvidenceStore.open(...)``."""

    def __init__(
        self,
        connection: chroma.Connection,
        run: Any,
        library: Any,
        embeddings: EmbeddingService,
        *,
        run_id: str,
        dedup_threshold: float,
    ) -> None:
        self._connection = connection
        self._run = run
        self._library = library
        self._embeddings = embeddings
        self.run_id = run_id
        self.dedup_threshold = dedup_threshold
        self._max_batch = int(connection.client.get_max_batch_size())
        self._write_lock = asyncio.Lock()
        # Vectors computed by ``deduplicate`` for items not stored yet, by embedding text, so that the
        # ``add`` that usually follows does not embed the same texts again. Emptied by every ``add``.
        self._pending_vectors: dict[str, Vectors] = {}
        self._index: tuple[list[Evidence], HybridIndex] | None = None
        self._closed = False
        self._version = 0  # bumped by every write; an index built from an older version is not kept

    @classmethod
    async def open(cls, settings: Settings, embeddings: EmbeddingService, run_id: str) -> EvidenceStore:
        """Connect (embedded under ``settings.home / "chroma"``, or the server at ``CHROMA_HOST``) and open
        the run's collection and the library. Raises StoreError saying what to fix."""
        name = chroma.run_collection_name(run_id)

        def _open() -> EvidenceStore:
            connection = chroma.connect(settings)
            run = chroma.open_collection(connection, name, embeddings.model_name)
            library = chroma.open_collection(connection, chroma.library_name(settings), embeddings.model_name)
            return cls(connection, run, library, embeddings, run_id=run_id, dedup_threshold=settings.dedup_threshold)

        store = await asyncio.to_thread(_open)
        log.info("evidence store open", run_id=run_id, collection=name, where=store._connection.where)
        return store

    @property
    def collection_name(self) -> str:
        return str(self._run.name)

    async def _call(self, operation: str, function: Callable[..., T], *args: Any) -> T:
        """Run a Chroma call off the event loop; its failures become StoreError naming the backend."""
        try:
            return await asyncio.to_thread(function, *args)
        except DeepCriticalError:
            raise
        except Exception as error:  # Chroma raises ValueError, HTTP and Rust errors: all are store failures
            raise StoreError(f"{operation} failed in {self._connection.where}: {error}") from error

    async def count(self) -> int:
        """How many items this run holds."""
        return await self._call("count", self._run.count)

    async def get(self, ids: Sequence[str]) -> list[Evidence]:
        """The run's items with these ids, in the order asked; unknown ids are skipped."""
        unique = list(dict.fromkeys(ids))  # Chroma rejects repeated ids
        found = await self._call("get", functools.partial(chroma.fetch, self._run, unique, vectors=False))
        return [found[item_id].evidence for item_id in unique if item_id in found]

    async def all(self) -> list[Evidence]:
        """Every item of this run."""
        found = await self._call("get", functools.partial(chroma.fetch, self._run, None, vectors=False))
        return [record.evidence for record in found.values()]

    async def add(self, evidence: Sequence[Evidence]) -> int:
        """Store items in the run and the library; returns how many were new to the run.

        Idempotent: the evidence id is the Chroma id, and an item already stored is merged with the
        stored record (sources united) rather than stored again. Items are embedded in one call, and
        only when their text is new.
        """
        items = merge_evidence(evidence)
        if not items:
            return 0
        async with self._write_lock:
            ids = [item.id for item in items]
            stored_run = await self._call("get", functools.partial(chroma.fetch, self._run, ids, vectors=True))
            stored_lib = await self._call("get", functools.partial(chroma.fetch, self._library, ids, vectors=True))
            writes = {"run": _merge(items, stored_run), "library": _merge(items, stored_lib)}
            # Keyed by text: a stored vector is reused only while the text it embeds is unchanged.
            vectors = {
                embedding_text(record.evidence): record.vector
                for record in (*stored_lib.values(), *stored_run.values())
            }
            pending, self._pending_vectors = self._pending_vectors, {}
            vectors = pending | vectors
            stale = list(
                dict.fromkeys(
                    text
                    for merged in writes.values()
                    for item in merged
                    if (text := embedding_text(item)) not in vectors
                )
            )
            if stale:
                vectors.update(zip(stale, await self._embeddings.aembed(stale), strict=True))
            for collection, merged in ((self._run, writes["run"]), (self._library, writes["library"])):
                if merged:
                    matrix = np.stack([vectors[embedding_text(item)] for item in merged])
                    await self._call("upsert", chroma.upsert, collection, self._max_batch, merged, matrix)
            self._changed()
        new = sum(1 for item_id in ids if item_id not in stored_run)
        log.debug("evidence added", run_id=self.run_id, new=new, updated=len(writes["run"]) - new)
        return new

    async def deduplicate(self, new: Sequence[Evidence]) -> DedupResult:
        """Drop new items that say what a stored item or an earlier new item says (cosine similarity at
        least ``dedup_threshold``), over the run's evidence. Does not add: the caller adds ``kept``.

        Items already stored are exact re-finds: kept as themselves, never compared with their own
        stored copy. Only the other items are embedded (one call) and looked up (one query). A dropped
        item's sources are added to the item it duplicates, in ``kept`` and in the store.
        """
        items = merge_evidence(new)
        if not items:
            return DedupResult(kept=[], duplicates={})
        async with self._write_lock:
            ids = [item.id for item in items]
            stored = await self._call("get", functools.partial(chroma.fetch, self._run, ids, vectors=False))
            fresh = [item for item in items if item.id not in stored]
            texts = [embedding_text(item) for item in fresh]
            vectors = await self._embeddings.aembed(texts)
            self._pending_vectors.update(zip(texts, vectors, strict=True))
            # Two neighbours: should the store already hold an item under a fresh id (a concurrent
            # writer), its own copy is skipped and the next one is still seen.
            neighbours = await self._call("query", chroma.nearest, self._run, vectors, 2)
            matches = {}
            for item, hits in zip(fresh, neighbours, strict=True):
                others = [hit for hit in hits if hit[0] != item.id]
                if others:
                    hit_id, similarity, document = others[0]
                    matches[item.id] = StoreMatch(hit_id, similarity, chroma.decode(document).content)
            decision = plan(items, set(stored), vectors, matches, self.dedup_threshold)
            if decision.stored_found_by:
                await self._add_sources(decision.stored_found_by)
        log.debug(
            "evidence de-duplicated", run_id=self.run_id, kept=len(decision.kept), dropped=len(decision.duplicates)
        )
        return DedupResult(kept=decision.kept, duplicates=decision.duplicates)

    async def _add_sources(self, sources: dict[str, tuple[SourceName, ...]]) -> None:
        """Credit stored items with the sources of their dropped duplicates, keeping their vectors."""
        for collection in (self._run, self._library):
            stored = await self._call("get", functools.partial(chroma.fetch, collection, list(sources), vectors=True))
            updated = [record.evidence.with_sources(sources[item_id]) for item_id, record in stored.items()]
            changed = [item for item in updated if item != stored[item.id].evidence]
            if changed:
                matrix = np.stack([stored[item.id].vector for item in changed])
                await self._call("upsert", chroma.upsert, collection, self._max_batch, changed, matrix)
        self._changed()

    async def search_similar(self, query: str, n: int = 5) -> list[ScoredEvidence]:
        """The run's ``n`` items closest in meaning to ``query``; score is the cosine similarity."""
        _check_n(n)
        vector = await self._embeddings.aembed([query])
        hits = (await self._call("query", chroma.nearest, self._run, vector, n))[0]
        return [ScoredEvidence(chroma.decode(document), similarity) for _, similarity, document in hits]

    async def related(self, query: str, exclude_ids: Collection[str], n: int = 5) -> list[ScoredEvidence]:
        """Up to ``n`` items close in meaning to ``query`` from this run and the library (earlier runs),
        leaving out ``exclude_ids`` (what the caller already has); score is the cosine similarity."""
        _check_n(n)
        excluded = set(exclude_ids)
        vector = await self._embeddings.aembed([query])
        best: dict[str, ScoredEvidence] = {}
        # The library first, so the run's copy (the same item, possibly with more sources) wins.
        for collection in (self._library, self._run):
            hits = (await self._call("query", chroma.nearest, collection, vector, n + len(excluded)))[0]
            for item_id, similarity, document in hits:
                if item_id not in excluded:
                    best[item_id] = ScoredEvidence(chroma.decode(document), similarity)
        return sorted(best.values(), key=lambda scored: -scored.score)[:n]

    async def search(self, query: str, n: int = 10, *, mode: RetrievalMode = "hybrid") -> list[ScoredEvidence]:
        """The run's best ``n`` items by exact BM25, dense or hybrid (reciprocal rank fusion) scoring."""
        _check_n(n)
        items, index = await self._hybrid_index()
        if not items:
            return []
        vector = (await self._embeddings.aembed([query]))[0]
        return [ScoredEvidence(items[i], score) for i, score in index.top(query, vector, n, mode)]

    async def select_for_judge(self, query: str, k: int) -> list[Evidence]:
        """A relevant, diverse top-``k`` of the run's evidence for the Judge: the hybrid ranking's best
        ``3k`` candidates, narrowed by maximal marginal relevance."""
        if k <= 0:
            return []
        items, index = await self._hybrid_index()
        if not items:
            return []
        vector = (await self._embeddings.aembed([query]))[0]
        return [items[i] for i in index.diverse_top(query, vector, k, _MMR_POOL_FACTOR * k)]

    async def _hybrid_index(self) -> tuple[list[Evidence], HybridIndex]:
        """The run's items with a keyword and vector index, rebuilt only after a write."""
        if self._index is None:
            version = self._version
            found = await self._call("get", functools.partial(chroma.fetch, self._run, None, vectors=True))
            items = [record.evidence for record in found.values()]
            matrix = (
                np.stack([record.vector for record in found.values()]) if found else np.zeros((0, 0), dtype=np.float32)
            )
            index = await asyncio.to_thread(HybridIndex, [embedding_text(item) for item in items], matrix)
            if version != self._version:
                return items, index
            self._index = (items, index)
        return self._index

    def _changed(self) -> None:
        self._version += 1
        self._index = None

    async def close(self) -> None:
        """Release the client (for the embedded store, its database handles). Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        self._index = None
        await self._call("close", self._connection.client.close)

    async def __aenter__(self) -> EvidenceStore:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


def _merge(items: Sequence[Evidence], stored: dict[str, chroma.Stored]) -> list[Evidence]:
    """The records to write: new items, and stored items whose merge with the new sighting changed."""
    writes = []
    for item in items:
        record = stored.get(item.id)
        merged = item if record is None else record.evidence.merged_with(item)
        if record is None or merged != record.evidence:
            writes.append(merged)
    return writes


def _check_n(n: int) -> None:
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
