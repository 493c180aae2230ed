"""The ``library`` source: a local document collection (``deepcritical library add``), searched with the
run's hybrid retrieval (BM25 and dense, fused by reciprocal rank). No network; the collection is read
once, on the first search, and held in memory (with its stored vectors, so nothing is embedded twice)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ClassVar

import structlog

from deepcritical.config import Settings
from deepcritical.errors import DeepCriticalError, SearchError
from deepcritical.evidence import chroma
from deepcritical.evidence.documents import DocumentIndex, load_index
from deepcritical.evidence.embeddings import EmbeddingService
from deepcritical.models import Evidence, SourceName
from deepcritical.sources.base import SearchTool

log = structlog.get_logger(__name__)
# A demo run keeps a store of its own, so that no synthetic item ever reaches a real run: its library source
# searches that store, never the user's own library (which real runs search). Said wherever it matters.
DEMO_LIBRARY_NOTE = (
    "; a demo run searches only the demo store's collections (library add files there with "
    "DEMO_MODE=true), never your own library: run without --demo to search it"
)


class LibraryTool(SearchTool):
    """Searches the document collection named by ``DEEPCRITICAL_LIBRARY_COLLECTION`` (or ``collection``)."""

    name: ClassVar[SourceName] = "library"

    @property
    def timeout_variable(self) -> str:
        return ""  # a local collection: its deadline is fixed (``factory.LIBRARY_TIMEOUT``), not a setting

    def __init__(
        self,
        settings: Settings,
        *,
        embeddings: EmbeddingService | None = None,
        collection: str | None = None,
        index: DocumentIndex | None = None,
        connect: Callable[[], chroma.Connection] | None = None,
    ) -> None:
        """``embeddings`` and ``connect`` are the process's (``Resources``); without them the source builds its
        own service and opens (and closes) a connection of its own to read the collection."""
        self._settings = settings
        self.collection = collection or settings.library_collection
        self._embeddings = embeddings or EmbeddingService.for_settings(settings)
        self._connect = connect
        self._index = index
        self._lock = asyncio.Lock()

    @property
    def host(self) -> str:
        return f"the document collection {self.collection!r}"

    async def index(self) -> DocumentIndex:
        """The collection in memory, read on first use; its stored vectors are remembered by the embedder."""
        async with self._lock:
            if self._index is None:
                self._index = await asyncio.to_thread(self._load)
                if len(self._index):
                    self._embeddings.remember(*self._index.embedded())  # never a pending passage's placeholder
                if self._index.pending:
                    log.warning(
                        "library passages not embedded yet: found by their words only",
                        collection=self.collection,
                        pending=self._index.pending,
                        passages=len(self._index),
                        fix=f"deepcritical library embed --collection {self.collection}",
                    )
            return self._index

    def _load(self) -> DocumentIndex:
        if self._connect is not None:
            return load_index(self._connect(), self.collection)
        connection = chroma.connect(self._settings)
        try:
            return load_index(connection, self.collection)
        finally:
            connection.close()

    async def _search(self, query: str, max_results: int) -> list[Evidence]:
        try:
            index = await self.index()
        except DeepCriticalError as error:
            # The handler names the source: the reason alone, so that it reads "library: no document ...".
            raise SearchError(f"{error}{DEMO_LIBRARY_NOTE if self._settings.demo_mode else ''}") from error
        vector = (await self._embeddings.aembed([query]))[0]
        return [
            item.model_copy(update={"relevance": min(max(similarity, 0.0), 1.0)})
            for item, similarity in index.search(query, vector, max_results)
        ]
