"""The result re-ranker: it re-orders only the linear ranker's best few units, reads them without torch, and
the reader falls back to the linear order when its weights are not there."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from deepcritical.evidence.embeddings import resolve_model
from deepcritical.reading import transformer_ranker
from deepcritical.reading.comparison import Comparison
from deepcritical.reading.results import MIN_EVIDENCE_PROBABILITY, ResultReader
from deepcritical.reading.transformer_classifier import HEAD_BIAS, HEAD_WEIGHT, bundled_weights
from deepcritical.reading.transformer_ranker import (
    LINEAR_WEIGHT,
    TransformerRanker,
    bundled_ranker_weights,
    ranker_text,
)
from deepcritical.reading.units import TextUnit, split_units

COMPARISON = Comparison.of("dexamethasone", "placebo", "28-day mortality")


class _Reversed:
    """A re-ranker that scores its candidates in the opposite order of the linear ranker's."""

    candidates = 3

    def __init__(self) -> None:
        self.seen: list[str] = []

    def scores(self, units: Sequence[TextUnit], comparison: Comparison, linear: Sequence[float]) -> list[float]:
        self.seen = [unit.text for unit in units]
        return [-value for value in linear]


def _units() -> list[TextUnit]:
    return split_units(
        "28-day mortality was 22.9% with dexamethasone and 25.7% with placebo (p = 0.03). "
        "Dexamethasone reduced 28-day mortality. "
        "Mortality was recorded at day 28. "
        "Patients were recruited from 176 hospitals. "
        "The trial was funded by a national agency."
    )


def test_only_the_linear_rankers_best_candidates_are_re_ordered() -> None:
    linear = ResultReader.load()
    units = _units()
    before = [unit.text for _, unit in linear.rank(units, COMPARISON)]
    reranker = _Reversed()
    after = [unit.text for _, unit in ResultReader(linear.ranker, linear.classifier, reranker).rank(units, COMPARISON)]
    assert reranker.seen == before[:3]
    assert after == before[:3][::-1] + before[3:]


def test_the_reranked_probabilities_are_the_rerankers() -> None:
    linear = ResultReader.load()
    ranked = ResultReader(linear.ranker, linear.classifier, _Reversed()).rank(_units(), COMPARISON)
    linear_first = linear.rank(_units(), COMPARISON)[0][0]
    # The linear ranker's best unit now comes third, with the probability of minus its logit.
    assert ranked[2][0] == pytest.approx(1 - linear_first)


def test_the_ranker_reads_where_a_unit_stands_and_the_unit_masked() -> None:
    methods = TextUnit("Mortality at 28 days was compared between dexamethasone and placebo.", 0, 70, "BODY.METHODS")
    row = TextUnit("Death | 12 | 20", 0, 15, "ABSTRACT.RESULTS")
    assert ranker_text(methods, COMPARISON).startswith("methods : outcome ")
    assert "intervention" in ranker_text(methods, COMPARISON)
    assert "comparator" in ranker_text(methods, COMPARISON)
    assert ranker_text(row, COMPARISON).startswith("results abstract table : ")


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return Path(resolve_model(None).location)


def _weights(path: Path, linear: float) -> Path:
    from safetensors.numpy import save_file

    rng = np.random.default_rng(0)
    save_file(
        {
            "encoder.layer.5.output.LayerNorm.bias": rng.normal(size=384).astype(np.float16),
            HEAD_WEIGHT: rng.normal(size=(1, 384)).astype(np.float16),
            HEAD_BIAS: np.zeros(1, dtype=np.float16),
            LINEAR_WEIGHT: np.array([linear], dtype=np.float16),
        },
        str(path),
        metadata={"max_tokens": "32", "candidates": "5"},
    )
    return path


@pytest.mark.model
def test_a_trained_file_adds_its_weight_of_the_linear_logit(tmp_path: Path, model_dir: Path) -> None:
    ranker = TransformerRanker.load(_weights(tmp_path / "r.safetensors", 2.0), model_dir, tmp_path)
    assert ranker.candidates == 5
    units = _units()[:2]
    flat = ranker.scores(units, COMPARISON, [0.0, 0.0])
    lifted = ranker.scores(units, COMPARISON, [1.0, -1.0])
    assert lifted == pytest.approx([flat[0] + 2.0, flat[1] - 2.0], abs=1e-4)
    # Batched with another unit (padding) or alone, a unit scores the same.
    assert ranker.scores(units[:1], COMPARISON, [0.0]) == pytest.approx(flat[:1], abs=1e-4)
    assert ranker.scores([], COMPARISON, []) == []


@pytest.mark.model
def test_a_head_of_more_than_one_score_is_refused(tmp_path: Path, model_dir: Path) -> None:
    from safetensors.numpy import save_file

    path = tmp_path / "r.safetensors"
    save_file({HEAD_WEIGHT: np.zeros((3, 384), np.float16), HEAD_BIAS: np.zeros(3, np.float16)}, str(path))
    with pytest.raises(ValueError, match="not one"):
        TransformerRanker.load(path, model_dir, tmp_path)


@pytest.mark.model
@pytest.mark.skipif(bundled_weights() is None, reason="no result_classifier.safetensors is shipped")
def test_without_the_rankers_weights_the_transformer_reader_keeps_the_linear_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(transformer_ranker, "bundled_ranker_weights", lambda: None)
    transformer_ranker.bundled_ranker.cache_clear()
    try:
        reader = ResultReader.load("transformer")
        assert reader.reranker is None
        units = _units()
        assert [u for _, u in reader.rank(units, COMPARISON)] == [
            u for _, u in ResultReader.load().rank(units, COMPARISON)
        ]
    finally:
        transformer_ranker.bundled_ranker.cache_clear()


SHIPPED = pytest.mark.skipif(bundled_ranker_weights() is None, reason="no result_ranker.safetensors is shipped")

# Written for this test (not from Evidence Inference): a Methods sentence naming the outcome and both arms,
# and the Results sentence stating what the trial found.
TRANEXAMIC = (
    "BODY.METHODS:\n"
    "Blood loss was calculated from the haemoglobin balance in the tranexamic acid and placebo groups.\n"
    "BODY.RESULTS:\n"
    "Patients who received tranexamic acid lost less blood than those given placebo (540 ml versus 830 ml, "
    "p < 0.001).\n"
)
EXERCISE = (
    "BODY.METHODS:\n"
    "Pain was measured on a 0-10 visual analogue scale at baseline and 12 weeks in the exercise and usual care "
    "groups; differences were tested with ANCOVA.\n"
    "BODY.RESULTS:\n"
    "At 12 weeks the exercise group reported less pain than the usual care group (mean difference -1.2, 95% CI "
    "-1.9 to -0.5).\n"
)


@SHIPPED
@pytest.mark.model
@pytest.mark.parametrize(
    ("text", "comparison"),
    [
        (TRANEXAMIC, Comparison.of("tranexamic acid", "placebo", "blood loss")),
        (EXERCISE, Comparison.of("exercise", "usual care", "pain")),
    ],
)
def test_the_shipped_reranker_puts_the_stated_result_above_the_methods_sentence(
    text: str, comparison: Comparison
) -> None:
    reader = ResultReader.load("transformer")
    assert reader.reranker is not None
    ranked = reader.rank(split_units(text), comparison)
    assert [unit.section for _, unit in ranked] == ["BODY.RESULTS", "BODY.METHODS"]


@SHIPPED
@pytest.mark.model
def test_the_shipped_reranker_sets_the_result_further_apart_from_methods_than_the_linear_ranker() -> None:
    comparison = Comparison.of("tranexamic acid", "placebo", "blood loss")
    units = split_units(TRANEXAMIC)

    def margin(reader: ResultReader) -> float:
        (first, _), (second, _) = reader.rank(units, comparison)
        return first - second

    # Linear: 0.19 against 0.11; re-ranked: 0.23 against 0.03 (the shipped weights).
    assert margin(ResultReader.load("transformer")) > margin(ResultReader.load()) + 0.05


class _Doubtful:
    """A re-ranker sure that none of its candidates states the result."""

    candidates = 3

    def scores(self, units: Sequence[TextUnit], comparison: Comparison, linear: Sequence[float]) -> list[float]:
        return [-10.0] * len(units)


def test_whether_a_study_states_a_result_is_read_on_the_linear_rankers_scale() -> None:
    linear = ResultReader.load()
    units = _units()
    assert linear.rank(units, COMPARISON)[0][0] >= MIN_EVIDENCE_PROBABILITY
    reading = ResultReader(linear.ranker, linear.classifier, _Doubtful()).read(units, COMPARISON)
    assert reading.label is not None
    assert reading.evidence_probability == pytest.approx(1 / (1 + np.exp(10.0)))
