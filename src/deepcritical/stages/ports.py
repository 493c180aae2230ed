"""The shapes the research loop needs from the search handler, the evidence store and the
ResearchEngine. The real classes satisfy them structurally; tests pass small fakes."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Protocol

from deepcritical.models import Evidence, SearchResult, SourceName


class ScoredLike(Protocol):
    @property
    def evidence(self) -> Evidence: ...

    @property
    def score(self) -> float: ...


class DedupLike(Protocol):
    @property
    def kept(self) -> list[Evidence]: ...

    @property
    def duplicates(self) -> dict[str, str]: ...


class EvidenceStoreLike(Protocol):
    async def add(self, evidence: Sequence[Evidence]) -> int: ...

    async def deduplicate(self, new: Sequence[Evidence]) -> DedupLike: ...

    async def search_similar(self, query: str, n: int = 5) -> Sequence[ScoredLike]: ...

    async def related(self, query: str, exclude_ids: Collection[str], n: int = 5) -> Sequence[ScoredLike]: ...

    async def select_for_judge(self, query: str, k: int) -> Sequence[Evidence]: ...

    async def get(self, ids: Sequence[str]) -> Sequence[Evidence]: ...

    async def close(self) -> None: ...


class SearchHandlerLike(Protocol):
    @property
    def source_names(self) -> list[SourceName]: ...

    @property
    def unavailable(self) -> Mapping[SourceName, str]: ...

    async def execute(self, query: str, max_results_per_tool: int = 10) -> SearchResult: ...


class RecordChecker(Protocol):
    """A source asked again for records it gave earlier, as it holds them now (PubMed: a retraction or an
    expression of concern issued since): what a watch re-checks its carried evidence with."""

    async def fetch(self, pmids: Sequence[str]) -> list[Evidence]: ...


class TermContextSource(Protocol):
    async def get_term_context(self, term: str, domain: str = "biomedical research") -> str: ...
