"""A run's evidence held in memory only: the store an evaluation gives each question, so that hundreds of
runs share one opened document collection and one embedder without writing a Chroma collection per
question. It does what ``EvidenceStore`` does for one run (semantic de-duplication, hybrid retrieval with
MMR for the Judge) with the same code (``dedup.plan``, ``HybridIndex``); it recalls nothing (no library)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from deepcritical.evidence.dedup import StoreMatch, plan
from deepcritical.evidence.embeddings import EmbeddingService, Vectors
from deepcritical.evidence.retrieval import HybridIndex
from deepcritical.evidence.store import _MMR_POOL_FACTOR
from deepcritical.evidence.store_writes import embedding_text
from deepcritical.evidence.types import DedupResult, ScoredEvidence
from deepcritical.models import Evidence, merge_evidence, merge_records


class MemoryStore:
    """One run's evidence in memory (see the module docstring)."""

    def __init__(self, embeddings: EmbeddingService, *, dedup_threshold: float = 0.9) -> None:
        self._embeddings = embeddings
        self.dedup_threshold = dedup_threshold
        self._items: dict[str, Evidence] = {}
        self._owner: dict[str, str] = {}  # every identity (id, PMID, DOI, URL) of a stored item -> its id
        self._vectors: dict[str, Vectors] = {}
        self._texts: dict[str, str] = {}  # the text each stored vector embeds
        self._index: tuple[list[Evidence], HybridIndex] | None = None

    async def _embed(self, items: Sequence[Evidence]) -> Vectors:
        return await self._embeddings.aembed([embedding_text(item) for item in items])

    def _stored_as(self, item: Evidence) -> list[str]:
        """The ids of the stored records of ``item``: those that share its id or any of its identities."""
        keys = (item.id, *item.identity_keys)
        return list(dict.fromkeys(self._owner[key] for key in keys if key in self._owner))

    async def add(self, evidence: Sequence[Evidence]) -> int:
        """Like ``EvidenceStore.add``: an item already stored under any identity merges with the stored record
        by ``merge_records`` (the record the merge keeps replaces the others, under its own id); returns how
        many items were new. Only records whose text changed are embedded again."""
        new = 0
        for item in merge_evidence(evidence):
            stored = self._stored_as(item)
            new += not stored
            merged = item
            for item_id in stored:
                merged = merge_records(self._items.pop(item_id), merged)
                self._owner = {key: owner for key, owner in self._owner.items() if owner != item_id}
                if item_id != merged.id:
                    self._vectors.pop(item_id, None)
                    self._texts.pop(item_id, None)
            self._items[merged.id] = merged
            self._owner.update(dict.fromkeys((merged.id, *merged.identity_keys), merged.id))
        stale = [item for item in self._items.values() if self._texts.get(item.id) != embedding_text(item)]
        if stale:
            self._vectors.update(zip((item.id for item in stale), await self._embed(stale), strict=True))
            self._texts.update((item.id, embedding_text(item)) for item in stale)
        self._index = None
        return new

    async def deduplicate(self, new: Sequence[Evidence]) -> DedupResult:
        items = merge_evidence(new)
        if not items:
            return DedupResult(kept=[], duplicates={})
        fresh = [item for item in items if item.id not in self._items]
        vectors = await self._embed(fresh) if fresh else np.zeros((0, 0), dtype=np.float32)
        matches: dict[str, StoreMatch] = {}
        if self._items and fresh:
            ids = list(self._vectors)
            matrix = np.stack([self._vectors[i] for i in ids])
            similarity = vectors @ matrix.T
            for row, item in enumerate(fresh):
                best = int(np.argmax(similarity[row]))
                matches[item.id] = StoreMatch(ids[best], float(similarity[row, best]), self._items[ids[best]].content)
        decision = plan(items, set(self._items) & {item.id for item in items}, vectors, matches, self.dedup_threshold)
        for item_id, sources in decision.stored_found_by.items():
            self._items[item_id] = self._items[item_id].with_sources(sources)
        return DedupResult(kept=decision.kept, duplicates=decision.duplicates)

    async def get(self, ids: Sequence[str]) -> list[Evidence]:
        return [self._items[i] for i in dict.fromkeys(ids) if i in self._items]

    async def all(self) -> list[Evidence]:
        return list(self._items.values())

    async def count(self) -> int:
        return len(self._items)

    def _hybrid(self) -> tuple[list[Evidence], HybridIndex]:
        if self._index is None:
            items = list(self._items.values())
            matrix = np.stack([self._vectors[item.id] for item in items])
            self._index = (items, HybridIndex([embedding_text(item) for item in items], matrix))
        return self._index

    async def search_similar(self, query: str, n: int = 5) -> list[ScoredEvidence]:
        return await self.search(query, n, dense=True)

    async def search(self, query: str, n: int = 10, *, dense: bool = False) -> list[ScoredEvidence]:
        if not self._items:
            return []
        items, index = self._hybrid()
        vector = (await self._embeddings.aembed([query]))[0]
        return [ScoredEvidence(items[i], s) for i, s in index.top(query, vector, n, "dense" if dense else "hybrid")]

    async def related(self, query: str, exclude_ids: Collection[str], n: int = 5) -> list[ScoredEvidence]:
        return []  # no library of earlier runs: nothing to recall

    async def select_for_judge(self, query: str, k: int) -> list[Evidence]:
        if k <= 0 or not self._items:
            return []
        items, index = self._hybrid()
        vector = (await self._embeddings.aembed([query]))[0]
        return [items[i] for i in index.diverse_top(query, vector, k, _MMR_POOL_FACTOR * k)]

    async def close(self) -> None:
        self._items.clear()
        self._owner.clear()
        self._vectors.clear()
        self._texts.clear()
        self._index = None
