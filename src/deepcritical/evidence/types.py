"""Result types of the evidence store."""

from __future__ import annotations

from dataclasses import dataclass, field

from deepcritical.models import Evidence


@dataclass(frozen=True, slots=True)
class ScoredEvidence:
    """A piece of evidence and how well it matches a query.

    ``score`` is the cosine similarity for semantic search; for keyword and hybrid search it is that
    ranking's own score (BM25, or the reciprocal-rank-fusion score), comparable only within one answer.
    """

    evidence: Evidence
    score: float


@dataclass(frozen=True, slots=True)
class DedupResult:
    """What ``deduplicate`` kept, and for each dropped item the id of the kept item it duplicates.

    Items already in the store (exact re-finds) are kept under their own id; they are never reported
    as duplicates of themselves.
    """

    kept: list[Evidence]
    duplicates: dict[str, str] = field(default_factory=dict)
