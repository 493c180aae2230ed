"""The run's collected evidence, with one owner. Stages add to it through ``RunEvidence.add``, which
writes to the store's run collection first, so nothing counts as collected that is not persisted, and
enforces the evidence cap; an item seen again under any of its identities is merged into the one
collected (``models.merge_records``, the policy the store uses too). Everything else (the Judge's
selection, citation checks, the report, the outcome) reads it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType

from deepcritical.models import Evidence, count_by_source, merge_records
from deepcritical.stages.ports import EvidenceStoreLike
from deepcritical.stages.selection import select_studies


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

    async def merge_known(self, items: Sequence[Evidence], *, recalled: bool = False) -> list[Evidence]:
        """Merge every item already collected under one of its identities into the collected one, and return
        the others. The better-identified, better-graded record wins under its own id (a news page collected
        first gives way to the PubMed record of the study it reports), in the run and in the store, so the
        study is collected, and recalled later, once. An item this run's searches find again (not
        ``recalled``) counts as found by this run even if it was first recalled from an earlier run."""
        unknown: list[Evidence] = []
        # Merged records are stored in one write at the end (a store write holds the interpreter for tens
        # of milliseconds whatever its size, and stalls every other run a server streams); the collection
        # as it was comes back if that write fails, so nothing unstored counts as collected.
        before = (dict(self._items), dict(self._identities), set(self._recalled))
        changed: dict[str, Evidence] = {}
        for item in items:
            known = self.collected_as(item)
            if known is None:
                unknown.append(item)
                continue
            old = self._items[known]
            merged = merge_records(old, item)
            if merged != old:
                changed.pop(known, None)  # the store retires the record the merged one replaces
                changed[merged.id] = merged
                self._replace(known, merged)
            if not recalled:
                self._recalled.discard(merged.id)
        if changed:
            try:
                await self._store.add(list(changed.values()))
            except BaseException:
                self._items, self._identities, self._recalled = before
                raise
        return unknown

    def _replace(self, old_id: str, merged: Evidence) -> None:
        """``merged`` in place of the item collected as ``old_id``, in the same position; the old id (and
        every identity of the old record) now finds the merged one."""
        new_id = merged.id
        self._items = {
            (new_id if key == old_id else key): (merged if key == old_id else value)
            for key, value in self._items.items()
        }
        keys = {old_id, *merged.identity_keys} | {key for key, owner in self._identities.items() if owner == old_id}
        self._identities.update(dict.fromkeys(keys, new_id))
        if old_id in self._recalled and new_id != old_id:
            self._recalled.discard(old_id)
            self._recalled.add(new_id)

    async def add(self, items: Sequence[Evidence], *, recalled: bool = False) -> list[Evidence]:
        """Store and collect ``items`` up to the cap; returns those taken. Items already collected under one
        of their identities are merged instead (``merge_known``). Stored first: if the store fails,
        nothing is counted as collected."""
        unknown = await self.merge_known(items, recalled=recalled)
        taken = [item for item in unknown[: self.room] if item.id not in self._items]
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
        """At most ``k`` collected items for a model to read: the strongest studies on the question first,
        then the relevant and diverse (the store's hybrid retrieval, then MMR), whatever the store returns;
        each study read once, by its abstract or else its results passage (``stages.selection``)."""
        ranked = [
            self._items[item.id] for item in await self._store.select_for_judge(question, k) if item.id in self._items
        ]
        return select_studies(question, ranked, self._items, k)
