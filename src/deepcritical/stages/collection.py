"""The run's collected evidence, with one owner. Stages add to it through ``RunEvidence.add``, which
writes to the store's run collection first, so nothing counts as collected that is not persisted, and
enforces the evidence cap; everything else (the Judge's selection, citation checks, the report, the
outcome) reads it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType

from deepcritical.models import Evidence, SourceName, count_by_source
from deepcritical.stages.ports import EvidenceStoreLike


class RunEvidence:
    """Collected items by evidence id, each also findable by any of its identities (PMID, DOI, URL), and
    which of them were recalled from earlier runs rather than found by this run's searches."""

    def __init__(self, store: EvidenceStoreLike, *, max_evidence: int) -> None:
        self._store = store
        self.max_evidence = max_evidence
        self._items: dict[str, Evidence] = {}
        self._identities: dict[str, str] = {}  # every PMID / DOI / URL key of a collected item -> its id
        self._recalled: set[str] = set()

    @property
    def items(self) -> Mapping[str, Evidence]:
        return MappingProxyType(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __iter__(self) -> Iterator[Evidence]:
        return iter(list(self._items.values()))

    @property
    def full(self) -> bool:
        return len(self._items) >= self.max_evidence

    @property
    def room(self) -> int:
        return max(self.max_evidence - len(self._items), 0)

    @property
    def recalled_ids(self) -> list[str]:
        """Items recalled from the library of earlier runs, not found by this run's searches."""
        return [item_id for item_id in self._items if item_id in self._recalled]

    @property
    def found(self) -> list[Evidence]:
        """Items this run's own searches found."""
        return [item for item_id, item in self._items.items() if item_id not in self._recalled]

    def collected_as(self, item: Evidence) -> str | None:
        """The id under which this item was already collected: the same PMID, DOI or URL, even when a
        later source names it differently (a web page at a DOI first, the PubMed record later)."""
        return next((self._identities[key] for key in item.identity_keys if key in self._identities), None)

    def credit(self, item_id: str, sources: Sequence[SourceName]) -> None:
        """A collected item returned again by this run's ``sources``: remember every source that found it;
        an item first recalled from an earlier run now counts as found by this run."""
        self._items[item_id] = self._items[item_id].with_sources(sources)
        self._recalled.discard(item_id)

    async def add(self, items: Sequence[Evidence], *, recalled: bool = False) -> list[Evidence]:
        """Store and collect ``items`` up to the cap; returns those taken. Stored first: if the store
        fails, nothing is counted as collected."""
        taken = [item for item in items[: self.room] if item.id not in self._items]
        if taken:
            await self._store.add(taken)
        for item in taken:
            self._items[item.id] = item
            self._identities.update(dict.fromkeys(item.identity_keys, item.id))
            if recalled:
                self._recalled.add(item.id)
        return taken

    async def restore(self, items: Sequence[Evidence], *, recalled_ids: Sequence[str] = ()) -> None:
        """Collect items a checkpoint saved. They were stored when first collected; only those the store
        lacks (a resumed run on a machine with another embedded store) are written again."""
        items = list(items[: self.room])
        stored = {item.id for item in await self._store.get([item.id for item in items])}
        if missing := [item for item in items if item.id not in stored]:
            await self._store.add(missing)
        for item in items:
            self._items[item.id] = item
            self._identities.update(dict.fromkeys(item.identity_keys, item.id))
        self._recalled.update(item_id for item_id in recalled_ids if item_id in self._items)

    def count_by_source(self) -> dict[str, int]:
        """How many collected items each source returned (an item found by two sources counts for both)."""
        return count_by_source(self._items.values())

    def count_by_design(self) -> dict[str, int]:
        """How many collected items each study design has (retracted items apart, under "retracted")."""
        counts = Counter("retracted" if item.retracted else item.grade.design for item in self._items.values())
        return dict(counts.most_common())

    async def select(self, question: str, k: int) -> list[Evidence]:
        """At most ``k`` collected items for a model to read: relevant to ``question`` and diverse (the
        store's hybrid retrieval, then MMR), whatever the store returns."""
        chosen = [item for item in await self._store.select_for_judge(question, k) if item.id in self._items]
        return [self._items[item.id] for item in chosen[:k]]
