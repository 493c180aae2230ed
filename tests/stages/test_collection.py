"""The run's collected evidence: the merges of one batch reach the store in one write (a store write
costs tens of milliseconds whatever its size), and a failed write leaves the collection as it was."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from deepcritical.errors import StoreError
from deepcritical.models import Evidence
from deepcritical.stages.collection import RunEvidence
from helpers.research_fakes import FakeStore, corpus_evidence


class CountingStore(FakeStore):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[list[str]] = []

    async def add(self, evidence: Sequence[Evidence]) -> int:
        self.writes.append([item.id for item in evidence])
        return await super().add(evidence)


async def collected_three() -> tuple[CountingStore, RunEvidence, list[Evidence]]:
    store = CountingStore()
    collected = RunEvidence(store, max_evidence=10)
    items = [corpus_evidence(number, f"finding {number} on metformin") for number in (1, 2, 3)]
    await collected.add(items)
    store.writes.clear()
    return store, collected, items


async def test_the_merges_of_one_batch_are_stored_in_one_write() -> None:
    store, collected, items = await collected_three()
    again = [item.with_sources(("europepmc",)) for item in items]
    new = corpus_evidence(4, "finding 4 on metformin")
    assert await collected.merge_known([*again, new]) == [new]
    assert len(store.writes) == 1
    assert sorted(store.writes[0]) == sorted(item.id for item in items)
    assert all("europepmc" in collected.items[item.id].found_by for item in items)
    assert all("europepmc" in store.items[item.id].found_by for item in items)


async def test_a_failed_write_leaves_the_collection_as_it_was() -> None:
    store, collected, items = await collected_three()
    before = dict(collected.items)
    store.fail_on_add = StoreError("the store is full")
    with pytest.raises(StoreError):
        await collected.merge_known([item.with_sources(("europepmc",)) for item in items])
    assert dict(collected.items) == before
    assert all(collected.collected_as(item) == item.id for item in items)
