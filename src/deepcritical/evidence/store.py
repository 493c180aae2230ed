"""The shared context of a research run: its evidence, embedded once, in Chroma.

Two collections: the run's own (named after the run id) and ``library``, which every run adds to so a
later run can recall what an earlier one found. ``add`` writes both. What reads which:

- ``search_similar``, ``search``, ``select_for_judge``, ``deduplicate``, ``all``, ``get``, ``count``:
  the run collection only (this run's evidence).
- ``related``: the run collection and the library (evidence this run has not seen yet).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Sequence
from functools import partial
from typing import TypeVar

import numpy as np
import structlog

from deepcritical.config import Settings
from deepcritical.errors import StoreError
from deepcritical.evidence import chroma, library
from deepcritical.evidence.dedup import StoreMatch, plan
from deepcritical.evidence.document_files import DocumentGrader, LibraryFullText
from deepcritical.evidence.embeddings import EmbeddingService, Vectors
from deepcritical.evidence.retrieval import HybridIndex, RetrievalMode
from deepcritical.evidence.store_calls import call_in_session
from deepcritical.evidence.store_writes import embedding_text, merge_writes, write_all
from deepcritical.evidence.types import DedupResult, ScoredEvidence
from deepcritical.models import Evidence, SourceName, merge_evidence

log = structlog.get_logger(__name__)
T = TypeVar("T")

# How many hybrid candidates MMR chooses from, per item selected.
_MMR_POOL_FACTOR = 3


class EvidenceStore:
    """Evidence of one research run, persisted in Chroma. Open with ``await EvidenceStore.open(...)``."""

    def __init__(
        self,
        connection: chroma.Connection,
        run_collection: str,
        library_collection: str,
        embeddings: EmbeddingService,
        *,
        run_id: str,
        dedup_threshold: float,
        max_batch: int,
        owns_connection: bool = True,
    ) -> None:
        self._connection = connection
        self._owns_connection = owns_connection
        self._run = run_collection
        self._library = library_collection
        self._embeddings = embeddings
        self.run_id = run_id
        self.dedup_threshold = dedup_threshold
        self._max_batch = max_batch
        self._write_lock = asyncio.Lock()
        # Vectors computed by ``deduplicate`` for items not stored yet, by embedding text, so that the
        # ``add`` that usually follows does not embed the same texts again. Emptied by every ``add``.
        self._pending_vectors: dict[str, Vectors] = {}
        self._index: tuple[list[Evidence], HybridIndex] | None = None
        self._closed = False
        self._preloading = False
        self._version = 0  # bumped by every write; an index built from an older version is not kept

    @classmethod
    async def open(
        cls,
        settings: Settings,
        embeddings: EmbeddingService,
        run_id: str,
        *,
        preload: bool = False,
        connect: Callable[[], chroma.Connection] | None = None,
    ) -> EvidenceStore:
        """Connect (embedded under ``settings.home / "chroma"``, or the server at ``CHROMA_HOST``), drop run
        collections older than the retention (``DEEPCRITICAL_RETENTION``), and open the run's collection
        and the library. Raises StoreError saying what to fix. ``preload``: the model starts loading once
        the store is open (not before: on a server starting several runs at once it would delay every
        run's first event), while the first searches run; ``close`` waits for that load. ``connect`` gives
        the process's connection (``Resources.connection``), which the store uses and leaves open; without
        it the store opens its own and closes it with the run."""
        name = chroma.run_collection_name(run_id)

        def _open() -> EvidenceStore:
            owned = connect is None
            connection = chroma.connect(settings) if connect is None else connect()
            try:
                if settings.retention is not None:
                    library.prune_at_open(connection, settings.retention, keep=name)
                library_collection = chroma.library_name(settings)
                chroma.open_collection(connection, name, embeddings.model_name, run=True)
                chroma.open_collection(connection, library_collection, embeddings.model_name)
                return cls(
                    connection,
                    name,
                    library_collection,
                    embeddings,
                    run_id=run_id,
                    dedup_threshold=settings.dedup_threshold,
                    max_batch=connection.max_batch,
                    owns_connection=owned,
                )
            except BaseException:
                if owned:
                    connection.close()
                raise

        store = await asyncio.to_thread(_open)
        log.info("evidence store open", run_id=run_id, collection=name, where=store._connection.where)
        if preload:
            embeddings.start_loading()
            store._preloading = True
        return store

    @property
    def collection_name(self) -> str:
        return self._run

    def full_text_cache(self, documents: str, grade: DocumentGrader) -> LibraryFullText:
        """The document collection ``documents`` as the run's full-text cache, on this store's connection
        and embedder: a run holds one connection to its store, whatever reads it."""
        return LibraryFullText(self._connection, self._embeddings, documents, grade)

    async def _call(
        self, operation: str, work: Callable[[chroma.Session], T], *, touches: tuple[str, ...], writes: bool = False
    ) -> T:
        return await call_in_session(self._connection, operation, work, touches=touches, writes=writes)

    def _fetch(
        self, collection: str, ids: Sequence[str] | None, *, vectors: bool
    ) -> Callable[[chroma.Session], dict[str, chroma.Stored]]:
        return lambda session: chroma.fetch(session.collection(collection), ids, vectors=vectors)

    async def count(self) -> int:
        """How many items this run holds."""
        return await self._call(
            "count", lambda session: int(session.collection(self._run).count()), touches=(self._run,)
        )

    async def get(self, ids: Sequence[str]) -> list[Evidence]:
        """The run's items with these ids, in the order asked; unknown ids are skipped."""
        unique = list(dict.fromkeys(ids))  # Chroma rejects repeated ids
        found = await self._call("get", self._fetch(self._run, unique, vectors=False), touches=(self._run,))
        return [found[item_id].evidence for item_id in unique if item_id in found]

    async def all(self) -> list[Evidence]:
        """Every item of this run."""
        found = await self._call("get", self._fetch(self._run, None, vectors=False), touches=(self._run,))
        return [record.evidence for record in found.values()]

    async def add(self, evidence: Sequence[Evidence]) -> int:
        """Store items in the run and the library; returns how many were new to the run.

        Idempotent: the evidence id is the Chroma id, and an item already stored under any of its
        identities (PMID, DOI, URL) is merged with the stored record by ``merge_records``, the run's own
        policy: the better-identified, better-graded record is kept under its id and the record it replaces
        is removed, so one study is one record (and is recalled once). Items are embedded in one call, and
        only when their text is new.
        """
        items = merge_evidence(evidence)
        if not items:
            return 0
        async with self._write_lock:
            ids = list(dict.fromkeys(key for item in items for key in (item.id, *item.identity_keys)))
            both = (self._run, self._library)
            stored_run, stored_lib = await self._call(
                "get",
                lambda session: (
                    chroma.fetch(session.collection(self._run), ids, vectors=True),
                    chroma.fetch(session.collection(self._library), ids, vectors=True),
                ),
                touches=both,
            )
            (run_writes, run_retired), (lib_writes, lib_retired) = (
                merge_writes(items, stored_run),
                merge_writes(items, stored_lib),
            )
            writes = {"run": run_writes, "library": lib_writes}
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
            upserts = [
                (collection, merged, np.stack([vectors[embedding_text(item)] for item in merged]))
                for collection, merged in ((self._run, writes["run"]), (self._library, writes["library"]))
                if merged
            ]
            retired = [(self._run, run_retired), (self._library, lib_retired)]
            if upserts or run_retired or lib_retired:
                write = partial(write_all, upserts, self._max_batch, retired)
                await self._call("upsert", write, touches=both, writes=True)
            self._changed()
        new = sum(1 for item in items if not any(key in stored_run for key in (item.id, *item.identity_keys)))
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
            stored = await self._call("get", self._fetch(self._run, ids, vectors=False), touches=(self._run,))
            fresh = [item for item in items if item.id not in stored]
            texts = [embedding_text(item) for item in fresh]
            vectors = await self._vectors_for(texts, [item.id for item in fresh])
            self._pending_vectors.update(zip(texts, vectors, strict=True))
            # Two neighbours: should the store already hold an item under a fresh id (a concurrent
            # writer), its own copy is skipped and the next one is still seen.
            neighbours = await self._call(
                "query", lambda session: chroma.nearest(session.collection(self._run), vectors, 2), touches=(self._run,)
            )
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

    async def _vectors_for(self, texts: list[str], ids: list[str]) -> Vectors:
        """Vectors of ``texts`` (the embedding texts of the items ``ids``): the library's stored vector when
        it holds the item with the same text (evidence an earlier run found again), embedded otherwise."""
        if not texts:
            return await self._embeddings.aembed(texts)
        known = await self._call(
            "get", self._fetch(self._library, list(dict.fromkeys(ids)), vectors=True), touches=(self._library,)
        )
        reused = {
            position: record.vector
            for position, item_id in enumerate(ids)
            if (record := known.get(item_id)) is not None
            and record.vector.size
            and embedding_text(record.evidence) == texts[position]
        }
        missing = [position for position in range(len(texts)) if position not in reused]
        embedded = await self._embeddings.aembed([texts[position] for position in missing]) if missing else None
        dimension = embedded.shape[1] if embedded is not None else len(next(iter(reused.values())))
        vectors = np.zeros((len(texts), dimension), dtype=np.float32)
        for position, vector in reused.items():
            vectors[position] = vector
        if embedded is not None:
            vectors[missing] = embedded
        log.debug("vectors reused from the library", reused=len(reused), embedded=len(missing))
        return vectors

    async def _add_sources(self, sources: dict[str, tuple[SourceName, ...]]) -> None:
        """Credit stored items with the sources of their dropped duplicates, keeping their vectors."""
        for collection in (self._run, self._library):

            def credit(session: chroma.Session, collection: str = collection) -> None:
                # Read and written in one session, so no other process's write falls in between.
                stored = chroma.fetch(session.collection(collection), list(sources), vectors=True)
                updated = [record.evidence.with_sources(sources[item_id]) for item_id, record in stored.items()]
                changed = [item for item in updated if item != stored[item.id].evidence]
                if changed:
                    matrix = np.stack([stored[item.id].vector for item in changed])
                    chroma.upsert(session.collection(collection), self._max_batch, changed, matrix)

            await self._call("upsert", credit, touches=(collection,), writes=True)
        self._changed()

    async def search_similar(self, query: str, n: int = 5) -> list[ScoredEvidence]:
        """The run's ``n`` items closest in meaning to ``query``; score is the cosine similarity."""
        _check_n(n)
        vector = await self._embeddings.aembed([query])
        hits = (await self._nearest(self._run, vector, n))[0]
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
            hits = (await self._nearest(collection, vector, n + len(excluded)))[0]
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
            found = await self._call("get", self._fetch(self._run, None, vectors=True), touches=(self._run,))
            items = [record.evidence for record in found.values()]
            matrix = (
                np.stack([record.vector for record in found.values()]) if found else np.zeros((0, 0), dtype=np.float32)
            )
            index = await asyncio.to_thread(HybridIndex, [embedding_text(item) for item in items], matrix)
            if version != self._version:
                return items, index
            self._index = (items, index)
        return self._index

    async def _nearest(self, collection: str, vectors: Vectors, n: int) -> list[list[tuple[str, float, str]]]:
        return await self._call(
            "query", lambda session: chroma.nearest(session.collection(collection), vectors, n), touches=(collection,)
        )

    def _changed(self) -> None:
        self._version += 1
        self._index = None

    async def close(self) -> None:
        """Release the client (for the embedded store, its database handles). Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        self._index = None
        if self._preloading:
            await asyncio.to_thread(self._embeddings.finish_loading)
        try:
            await asyncio.to_thread(chroma.close_run_collection, self._connection, self._run)
        except Exception as error:
            # The run is over either way; an unmarked collection is pruned once its process is gone.
            log.warning("run_collection_not_marked_closed", collection=self._run, error=str(error))
        if not self._owns_connection:  # the process's connection: its owner closes it
            return
        try:
            await asyncio.to_thread(self._connection.close)
        except Exception as error:  # a client that will not close is a store failure like any other
            raise StoreError(f"close failed in {self._connection.where}: {error}") from error

    async def __aenter__(self) -> EvidenceStore:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


def _check_n(n: int) -> None:
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
