"""Semantic de-duplication of newly found evidence, as a pure plan the store then applies.

Only new items are ever compared: against what the store already holds (one nearest-neighbour query
for the batch) and against each other (one similarity matrix). An item whose id is already stored is
an exact re-find: it is kept as itself and never compared, so it cannot match its own stored copy —
the bug where every re-check matched itself and the evidence count fell to zero.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from deepcritical.evidence.embeddings import Vectors
from deepcritical.models import Evidence, SourceName, unite_sources


@dataclass(frozen=True)
class StoreMatch:
    """The most similar stored item to one new item."""

    id: str
    similarity: float
    content: str = ""


# Embeddings barely separate a finding from its opposite ("reduces" / "increases" / "does not
# reduce" score above 0.99), so two texts whose direction words differ are never merged: keeping a
# near-duplicate costs a little redundancy, dropping a contrary finding misleads the reader.
_DIRECTIONS = {
    "up": re.compile(r"\b(?:increas\w*|higher|rais(?:e|ed|es|ing)|elevat\w*|worse\w*|more)\b", re.IGNORECASE),
    "down": re.compile(r"\b(?:decreas\w*|reduc\w*|lower\w*|fewer|less|declin\w*|improv\w*|better)\b", re.IGNORECASE),
    "negated": re.compile(r"\b(?:no|not|never|without|neither|nor|failed|null)\b|n't\b", re.IGNORECASE),
}


@functools.lru_cache(maxsize=4096)
def directions(text: str) -> frozenset[str]:
    """Which kinds of direction word a text uses: up, down, negated. Kept per text: a batch compares the
    same texts again and again."""
    return frozenset(name for name, pattern in _DIRECTIONS.items() if pattern.search(text))


def may_disagree(first: str, second: str) -> bool:
    """True when two similar texts could state different findings, judged by their direction words."""
    return bool(first and second) and directions(first) != directions(second)


@dataclass
class DedupPlan:
    kept: list[Evidence]
    duplicates: dict[str, str]
    # Sources to add to records already in the store, by stored id.
    stored_found_by: dict[str, tuple[SourceName, ...]] = field(default_factory=dict)


def plan(
    items: Sequence[Evidence],
    stored_ids: set[str],
    fresh_vectors: Vectors,
    store_matches: Mapping[str, StoreMatch],
    threshold: float,
) -> DedupPlan:
    """Decide what to keep.

    ``items`` have unique ids. ``fresh_vectors`` holds one normalised vector per item whose id is not in
    ``stored_ids``, in order. ``store_matches`` gives, by fresh id, its best stored neighbour (never
    itself). A fresh item is a duplicate when its cosine similarity to a stored item or to an earlier
    kept fresh item reaches ``threshold``; the earlier item wins, and gains the duplicate's sources.
    """
    fresh = [item for item in items if item.id not in stored_ids]
    if len(fresh) != len(fresh_vectors):
        raise ValueError(f"{len(fresh)} new items but {len(fresh_vectors)} vectors")
    similarity = fresh_vectors @ fresh_vectors.T if len(fresh) else np.zeros((0, 0), dtype=np.float32)
    position = {item.id: index for index, item in enumerate(fresh)}

    # Re-finds first, so a duplicate of one credits it wherever it sits in the batch.
    kept_by_id: dict[str, Evidence] = {item.id: item for item in items if item.id in stored_ids}
    kept_fresh: list[int] = []
    duplicates: dict[str, str] = {}
    stored_found_by: dict[str, tuple[SourceName, ...]] = {}
    for index, item in enumerate(fresh):
        target = _best_match(index, item.id, similarity, kept_fresh, fresh, store_matches.get(item.id), threshold)
        if target is None:
            kept_by_id[item.id] = item
            kept_fresh.append(index)
            continue
        duplicates[item.id] = target
        if target in kept_by_id:
            holder = kept_by_id[target]
            kept_by_id[target] = holder.with_sources(item.found_by)
        if target not in position:
            stored_found_by[target] = unite_sources(stored_found_by.get(target, ()), item.found_by)
    kept = [kept_by_id[item.id] for item in items if item.id in kept_by_id]
    return DedupPlan(kept, duplicates, stored_found_by)


def _best_match(
    index: int,
    item_id: str,
    similarity: np.ndarray,
    kept_fresh: list[int],
    fresh: Sequence[Evidence],
    store_match: StoreMatch | None,
    threshold: float,
) -> str | None:
    best_id: str | None = None
    best = threshold
    text = fresh[index].content
    # The similarity is tested before the direction words everywhere: a number read from the matrix is
    # cheap, the words are three regular expressions per text, and most pairs fail the threshold anyway.
    if (
        store_match is not None
        and store_match.id != item_id
        and store_match.similarity >= best
        and not may_disagree(text, store_match.content)
    ):
        best_id, best = store_match.id, store_match.similarity
    if not kept_fresh:
        return best_id
    row = similarity[index, kept_fresh]
    for position in np.flatnonzero(row >= threshold):  # in kept order: the earlier item wins a tie
        other, score = kept_fresh[position], float(row[position])
        # Strictly better than a store match: the stored item is the older one and wins ties.
        if (best_id is None or score > best) and not may_disagree(text, fresh[other].content):
            best_id, best = fresh[other].id, score
    return best_id
