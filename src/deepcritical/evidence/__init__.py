"""The evidence store: embeddings, Chroma persistence, semantic de-duplication and hybrid retrieval."""

from deepcritical.evidence.embeddings import EmbeddingService
from deepcritical.evidence.retrieval import RetrievalMode
from deepcritical.evidence.store import EvidenceStore
from deepcritical.evidence.types import DedupResult, ScoredEvidence

__all__ = ["DedupResult", "EmbeddingService", "EvidenceStore", "RetrievalMode", "ScoredEvidence"]
