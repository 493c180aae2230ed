"""Hybrid retrieval over one run's evidence: BM25 and dense scores fused by reciprocal rank, then MMR.

Keyword search finds exact terms (drug names, gene symbols) that a small embedding model blurs; dense
search finds paraphrases that share no keyword. Reciprocal rank fusion combines the two rankings
without calibrating their scores against each other. MMR then picks a top-k for the Judge that is
relevant but not redundant: near-identical abstracts crowd out distinct findings otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import bm25s
import numpy as np
import numpy.typing as npt
import Stemmer  # type: ignore[import-not-found]  # a compiled module without stubs

from deepcritical.evidence.embeddings import Vectors

RetrievalMode = Literal["bm25", "dense", "hybrid"]
Scores = npt.NDArray[np.float64]

# The usual RRF constant (Cormack et al., 2009); on the SciFact train split (in aggregate) it did as
# well as any value tried, see phases/02_evidence.md.
RRF_K = 60
# MMR trade-off between relevance (hybrid score rescaled to [0, 1] over the candidates) and redundancy
# (cosine similarity to what is already chosen). At 0.5 a near copy of a chosen item (similarity ~1)
# loses to a distinct candidate unless that one is much less relevant; see phases/02_evidence.md.
MMR_LAMBDA = 0.5
_STOPWORDS = "en"


def english_stemmer() -> Stemmer.Stemmer:
    """English Snowball: "inhibits"/"inhibition"/"inhibitor" share a stem, which matters in abstracts. A new
    one per caller: a stemmer keeps a cache of its own, not made to be shared between threads."""
    return Stemmer.Stemmer("english")


class BM25Index:
    """Okapi BM25 (Lucene variant) over a fixed list of texts, lower-cased, stop words removed, stemmed."""

    def __init__(self, texts: Sequence[str]) -> None:
        self._size = len(texts)
        self._stemmer = english_stemmer()
        self._retriever: bm25s.BM25 | None = None
        if texts:
            tokens = bm25s.tokenize(
                list(texts), stopwords=_STOPWORDS, stemmer=self._stemmer, return_ids=True, show_progress=False
            )
            self._retriever = bm25s.BM25()
            self._retriever.index(tokens, show_progress=False)

    def __len__(self) -> int:
        return self._size

    def scores(self, query: str) -> Scores:
        """One BM25 score per text; zero for texts sharing no term with the query."""
        if self._retriever is None:
            return np.zeros(0)
        terms = bm25s.tokenize(
            [query], stopwords=_STOPWORDS, stemmer=self._stemmer, return_ids=False, show_progress=False
        )[0]
        known = self._retriever.get_tokens_ids(terms)
        if not known:
            return np.zeros(self._size)
        return np.asarray(self._retriever.get_scores_from_ids(known), dtype=np.float64)


def ranks(scores: Scores, *, positive_only: bool = False) -> npt.NDArray[np.float64]:
    """1-based rank of each item by descending score (ties by position); ``inf`` for items left out."""
    order = np.argsort(-scores, kind="stable")
    result = np.empty(len(scores), dtype=np.float64)
    result[order] = np.arange(1, len(scores) + 1)
    if positive_only:
        result[scores <= 0] = np.inf
    return result


def rrf(rank_lists: Sequence[npt.NDArray[np.float64]], k: int = RRF_K) -> Scores:
    """Reciprocal rank fusion: the sum over rankings of 1 / (k + rank)."""
    fused = np.zeros(len(rank_lists[0]), dtype=np.float64)
    for item_ranks in rank_lists:
        fused += 1.0 / (k + item_ranks)
    return fused


class HybridIndex:
    """Keyword and dense scores over the same items, and their fusion.

    ``texts`` are what BM25 indexes (the full title and content); ``vectors`` are the stored normalised
    embeddings, so dense scores are exact cosine similarities.
    """

    def __init__(
        self,
        texts: Sequence[str],
        vectors: Vectors,
        *,
        rrf_k: int = RRF_K,
        pending: npt.NDArray[np.bool_] | None = None,
    ) -> None:
        if len(texts) != len(vectors):
            raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
        self.vectors = vectors
        self.rrf_k = rrf_k
        self._bm25 = BM25Index(texts)
        # Items stored before their vector (``library add`` of a large export; ``library embed`` fills them in):
        # their stored vector is a placeholder, so they are ranked by keywords only, never by meaning.
        self.pending = pending if pending is not None else np.zeros(len(texts), dtype=bool)
        if len(self.pending) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(self.pending)} pending flags")

    def __len__(self) -> int:
        return len(self._bm25)

    def dense_scores(self, query_vector: Vectors) -> Scores:
        if len(self) == 0:
            return np.zeros(0)
        scores = np.asarray(self.vectors @ query_vector, dtype=np.float64)
        scores[self.pending] = -1.0  # the least cosine: nothing is known of a pending item's meaning
        return scores

    def scores(self, query: str, query_vector: Vectors, mode: RetrievalMode = "hybrid") -> Scores:
        if mode == "bm25":
            return self._bm25.scores(query)
        if mode == "dense":
            return self.dense_scores(query_vector)
        # Items with no query term get no keyword rank rather than an arbitrary tail position.
        keyword = ranks(self._bm25.scores(query), positive_only=True)
        dense = ranks(self.dense_scores(query_vector))
        dense[self.pending] = np.inf  # no rank by meaning, as an item without a query term has no keyword rank
        return rrf([keyword, dense], self.rrf_k)

    def diverse_top(self, query: str, query_vector: Vectors, k: int, pool: int) -> list[int]:
        """A relevant, non-redundant ``k``: the best ``pool`` hybrid candidates narrowed by MMR, with
        the fused scores rescaled to [0, 1] over the pool as MMR's relevance."""
        ranked = self.top(query, query_vector, max(pool, k), "hybrid")
        positions = [position for position, _ in ranked]
        relevance = min_max(np.asarray([score for _, score in ranked], dtype=np.float64))
        return mmr(positions, relevance, self.vectors, k)

    def top(self, query: str, query_vector: Vectors, n: int, mode: RetrievalMode = "hybrid") -> list[tuple[int, float]]:
        """The best ``n`` items as (position, score), best first; BM25 leaves out zero scores."""
        scores = self.scores(query, query_vector, mode)
        order = np.argsort(-scores, kind="stable")[:n]
        return [(int(i), float(scores[i])) for i in order if mode != "bm25" or scores[i] > 0]


def mmr(
    candidates: Sequence[int], relevance: Scores, vectors: Vectors, k: int, lambda_: float = MMR_LAMBDA
) -> list[int]:
    """Maximal marginal relevance (Carbonell & Goldstein, 1998) over ``candidates`` (positions into
    ``vectors``) with ``relevance`` in [0, 1] for each: repeatedly take the candidate maximising
    ``lambda * relevance - (1 - lambda) * max cos(candidate, already taken)``. Ties go to the earlier
    candidate."""
    if len(candidates) != len(relevance):
        raise ValueError(f"{len(candidates)} candidates but {len(relevance)} relevance scores")
    if k <= 0 or not candidates:
        return []
    pool = np.asarray(candidates, dtype=np.int64)
    pairwise = vectors[pool] @ vectors[pool].T
    # Nothing is redundant before the first pick; dissimilarity earns no bonus, hence the floor at 0.
    redundancy = np.zeros(len(pool))
    available = np.ones(len(pool), dtype=bool)
    chosen: list[int] = []
    for _ in range(min(k, len(pool))):
        value = np.where(available, lambda_ * relevance - (1 - lambda_) * redundancy, -np.inf)
        best = int(np.argmax(value))
        chosen.append(int(pool[best]))
        available[best] = False
        redundancy = np.maximum(redundancy, pairwise[best])
    return chosen


def min_max(scores: Scores) -> Scores:
    """Scores rescaled to [0, 1] within the list (all ones when they are all equal)."""
    if not len(scores):
        return np.ones(0)
    low, high = float(scores.min()), float(scores.max())
    if high - low <= 0:
        return np.ones(len(scores))
    return (scores - low) / (high - low)
