"""Hybrid retrieval and MMR on small hand-made data (no model)."""

from __future__ import annotations

import math
import random
from collections import Counter

import bm25s
import numpy as np
import pytest

from deepcritical.evidence.retrieval import BM25Index, HybridIndex, english_stemmer, min_max, mmr, ranks, rrf


def unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


TEXTS = [
    "Metformin activates AMPK in hepatocytes",
    "Statins lower LDL cholesterol",
    "Aspirin inhibits platelet aggregation",
    "AMPK activation protects neurons",
]


def test_bm25_scores_the_matching_text_highest_and_others_zero() -> None:
    scores = BM25Index(TEXTS).scores("statins cholesterol")
    assert int(np.argmax(scores)) == 1
    assert scores[1] > 0
    assert (scores[[0, 2, 3]] == 0).all()


def test_bm25_stems_so_inflections_match() -> None:
    scores = BM25Index(["platelet inhibition by aspirin", "unrelated weather report"]).scores("inhibits platelets")
    assert scores[0] > 0
    assert scores[1] == 0


def test_bm25_handles_unknown_and_stop_word_queries() -> None:
    index = BM25Index(TEXTS)
    assert (index.scores("zebrafish") == 0).all()
    assert (index.scores("the of and") == 0).all()
    assert BM25Index([]).scores("anything").shape == (0,)


def lucene_bm25(documents: list[list[str]], query: list[str], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """BM25 as Lucene scores it, written out term by term: the reference ``BM25Index`` must agree with."""
    frequencies = [Counter(tokens) for tokens in documents]
    average_length = sum(len(tokens) for tokens in documents) / len(documents)
    scores = []
    for tokens, counts in zip(documents, frequencies, strict=True):
        score = 0.0
        for term in dict.fromkeys(query):
            holding = sum(1 for other in frequencies if term in other)
            idf = math.log(1 + (len(documents) - holding + 0.5) / (holding + 0.5))
            tf = counts[term]
            score += idf * tf / (tf + k1 * (1 - b + b * len(tokens) / average_length))
        scores.append(score)
    return scores


def test_bm25_scores_every_text_as_the_lucene_formula_does() -> None:
    # Enough (text, term) pairs (about 1,300) that the index is built as a real run's is: the full-text stage
    # picks passages by these scores. Under QEMU 7.2's AVX2 emulation numpy's argsort mis-sorts such arrays
    # (a gather with xmm4/ymm4 as index reads one element), the index pairs scores with the wrong texts, and
    # the run picked other passages (phases/23_cpu_stable_embeddings.md, round 3).
    generator = random.Random(7)
    words = [f"term{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(150)]
    texts = [" ".join(generator.choices(words, k=generator.randint(8, 30))) for _ in range(90)]
    documents = bm25s.tokenize(texts, stopwords="en", stemmer=english_stemmer(), return_ids=False, show_progress=False)
    assert sum(len(set(tokens)) for tokens in documents) > 1000
    index = BM25Index(texts)
    for query in (words[:3], words[40:45], [words[149], words[7]]):
        terms = bm25s.tokenize(
            [" ".join(query)], stopwords="en", stemmer=english_stemmer(), return_ids=False, show_progress=False
        )[0]
        assert index.scores(" ".join(query)) == pytest.approx(lucene_bm25(documents, terms), rel=1e-5, abs=1e-6), (
            "BM25 scores are not the formula's: does numpy's argsort sort on this CPU? (bench/emulated_cpu_check.py)"
        )


def test_ranks_are_one_based_and_can_leave_out_non_positive_scores() -> None:
    scores = np.array([0.5, 2.0, 0.0, 1.0])
    assert ranks(scores).tolist() == [3.0, 1.0, 4.0, 2.0]
    assert ranks(scores, positive_only=True).tolist() == [3.0, 1.0, np.inf, 2.0]


def test_rrf_sums_reciprocal_ranks() -> None:
    fused = rrf([np.array([1.0, 2.0]), np.array([2.0, np.inf])], k=10)
    assert fused[0] == pytest.approx(1 / 11 + 1 / 12)
    assert fused[1] == pytest.approx(1 / 12)


def test_hybrid_puts_an_item_good_in_both_rankings_first() -> None:
    # Item 3 is second for keywords and second for meaning; 0 is first for keywords only, 2 first for meaning only.
    texts = ["ampk ampk ampk kinase", "unrelated text", "something else entirely", "ampk in neurons"]
    vectors = np.stack([unit(-1, 0, 0), unit(0, 0, 1), unit(1, 0, 0), unit(0.9, 0.3, 0)])
    index = HybridIndex(texts, vectors)
    query_vector = unit(1, 0, 0)
    assert index.top("ampk", query_vector, 1, "bm25")[0][0] == 0
    assert index.top("ampk", query_vector, 1, "dense")[0][0] == 2
    assert index.top("ampk", query_vector, 1, "hybrid")[0][0] == 3


def test_bm25_top_leaves_out_items_without_a_query_term() -> None:
    index = HybridIndex(TEXTS, np.stack([unit(1, 0)] * 4))
    assert [position for position, _ in index.top("aspirin", unit(1, 0), 10, "bm25")] == [2]


def test_hybrid_index_checks_lengths_match() -> None:
    with pytest.raises(ValueError, match="2 texts but 1 vectors"):
        HybridIndex(["a text", "another"], np.stack([unit(1, 0)]))


def test_mmr_keeps_one_of_two_near_identical_items_when_a_distinct_relevant_one_exists() -> None:
    vectors = np.stack(
        [
            unit(0.9, 0.43, 0),  # most relevant
            unit(0.9, 0.44, 0.01),  # a near copy of it, nearly as relevant
            unit(0.7, 0, 0.7),  # relevant, and says something else
            unit(0, 0, 1),  # barely relevant
        ]
    )
    assert float(vectors[0] @ vectors[1]) > 0.99
    relevance = np.array([1.0, 0.97, 0.7, 0.0])
    assert mmr([0, 1, 2, 3], relevance, vectors, k=2) == [0, 2]
    assert mmr([0, 1, 2, 3], relevance, vectors, k=2, lambda_=1.0) == [0, 1], "without MMR the copy would win"


def test_mmr_with_lambda_one_is_pure_relevance_order() -> None:
    vectors = np.stack([unit(1, 0.5, 0), unit(1, 0.1, 0), unit(1, 0.11, 0.01)])
    assert mmr([0, 1, 2], np.array([0.2, 0.9, 0.5]), vectors, k=3, lambda_=1.0) == [1, 2, 0]


def test_mmr_returns_at_most_the_candidates() -> None:
    vectors = np.stack([unit(1, 0), unit(0, 1)])
    assert sorted(mmr([0, 1], np.array([1.0, 0.5]), vectors, k=5)) == [0, 1]
    assert mmr([], np.array([]), vectors, k=3) == []
    assert mmr([0, 1], np.array([1.0, 0.5]), vectors, k=0) == []


def test_mmr_checks_one_relevance_per_candidate() -> None:
    with pytest.raises(ValueError, match="2 candidates but 1 relevance"):
        mmr([0, 1], np.array([1.0]), np.stack([unit(1, 0), unit(0, 1)]), k=1)


def test_min_max_rescales_to_the_unit_interval() -> None:
    assert min_max(np.array([2.0, 4.0, 3.0])).tolist() == [0.0, 1.0, 0.5]
    assert min_max(np.array([0.3, 0.3])).tolist() == [1.0, 1.0]
    assert min_max(np.array([])).shape == (0,)


def test_diverse_top_skips_a_near_copy_of_the_best_item() -> None:
    texts = [
        "metformin dementia risk in diabetes",
        "metformin dementia risk in diabetes cohort",
        "metformin and insulin in muscle",
        "dementia incidence with sulfonylureas",
        "weather report",
    ]
    vectors = np.stack(
        [unit(1, 0.2, 0, 0), unit(1, 0.21, 0, 0), unit(0.6, 0, 0.8, 0), unit(0.5, 0, 0, 0.87), unit(0, 1, 0, 0)]
    )
    index = HybridIndex(texts, vectors)
    query = unit(1, 0, 0, 0)
    assert [position for position, _ in index.top("metformin dementia", query, 2)] == [0, 1]
    chosen = index.diverse_top("metformin dementia", query, 2, pool=4)
    assert chosen[0] == 0
    assert chosen[1] in {2, 3}, "the near copy gives way to a distinct relevant item"
