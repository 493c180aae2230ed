"""The fine-tuned result classifier read without torch: the ONNX graph built from the base model with the
trained tensors in place, cached, and the shipped weights reading results a doctor would read the same way."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from deepcritical.evidence.embeddings import resolve_model
from deepcritical.reading import transformer_classifier
from deepcritical.reading.comparison import Comparison
from deepcritical.reading.result_features import LABELS
from deepcritical.reading.results import (
    LINEAR_SHARE,
    BlendedClassifier,
    LinearClassifier,
    RememberingClassifier,
    ResultReader,
)
from deepcritical.reading.transformer_classifier import (
    HEAD_BIAS,
    HEAD_WEIGHT,
    TransformerClassifier,
    bundled_weights,
)
from deepcritical.reading.units import split_units

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return Path(resolve_model(None).location)


def _weights(path: Path, seed: int = 0) -> Path:
    """A weights file shaped like the trained one: the last layer's output LayerNorm and a random head."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    save_file(
        {
            "encoder.layer.5.output.LayerNorm.weight": np.zeros(384, dtype=np.float16),
            "encoder.layer.5.output.LayerNorm.bias": rng.normal(size=384).astype(np.float16),
            HEAD_WEIGHT: rng.normal(size=(3, 384)).astype(np.float16),
            HEAD_BIAS: np.zeros(3, dtype=np.float16),
        },
        str(path),
        metadata={"labels": ",".join(LABELS)},
    )
    return path


def test_replacing_tensors_changes_the_graph_as_written(model_dir: Path) -> None:
    import onnxruntime

    from deepcritical.evidence.onnx_bert import build_bert_graph

    bias = np.linspace(-1, 1, 384, dtype=np.float32)
    graph = build_bert_graph(
        model_dir,
        replacements={
            "encoder.layer.5.output.LayerNorm.weight": np.zeros(384, dtype=np.float32),
            "encoder.layer.5.output.LayerNorm.bias": bias,
        },
    )
    session = onnxruntime.InferenceSession(graph, providers=["CPUExecutionProvider"])
    ids = np.array([[101, 2023, 102]], dtype=np.int64)
    (hidden,) = session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": np.ones_like(ids)})
    # A LayerNorm scaled by zero leaves only its bias: every token's state is the replacement bias.
    np.testing.assert_allclose(hidden[0], np.tile(bias, (3, 1)), atol=1e-6)


def test_probabilities_per_text_in_order_and_summing_to_one(tmp_path: Path, model_dir: Path) -> None:
    classifier = TransformerClassifier.load(_weights(tmp_path / "w.safetensors"), model_dir, tmp_path)
    comparison = Comparison.of("aspirin", "placebo", "stroke")
    texts = ["Stroke was less frequent with aspirin.", "No difference in stroke was seen (p = 0.4)."]
    readings = classifier.probabilities(texts, comparison)
    assert [set(r) for r in readings] == [set(LABELS)] * 2
    assert all(abs(sum(r.values()) - 1.0) < 1e-5 for r in readings)
    # Batched with a longer text (padding) or alone, a text reads the same.
    alone = classifier.probabilities(texts[:1], comparison)[0]
    assert alone == pytest.approx(readings[0], abs=1e-5)
    assert classifier.probabilities([], comparison) == []


def test_the_built_graph_is_cached_and_rebuilt_when_the_weights_change(
    tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights = _weights(tmp_path / "w.safetensors")
    cache = tmp_path / "cache"
    comparison = Comparison.of("aspirin", "placebo", "stroke")
    first = TransformerClassifier.load(weights, model_dir, cache).probabilities(["Stroke fell."], comparison)
    (cached,) = cache.glob("*.onnx")

    def no_build(*_: object, **__: object) -> bytes:
        raise AssertionError("the cached graph should have been used")

    monkeypatch.setattr(transformer_classifier, "_build", no_build)
    again = TransformerClassifier.load(weights, model_dir, cache).probabilities(["Stroke fell."], comparison)
    assert again == first
    assert list(cache.glob("*.onnx")) == [cached]
    monkeypatch.undo()
    _weights(weights, seed=1)  # retrained: another file, another graph
    TransformerClassifier.load(weights, model_dir, cache)
    assert len(list(cache.glob("*.onnx"))) == 2


def test_a_head_for_other_labels_is_refused(tmp_path: Path, model_dir: Path) -> None:
    from safetensors.numpy import save_file

    path = tmp_path / "w.safetensors"
    head = {HEAD_WEIGHT: np.zeros((2, 384), np.float16), HEAD_BIAS: np.zeros(2, np.float16)}
    save_file(head, str(path), metadata={"labels": "yes,no"})
    with pytest.raises(ValueError, match="not the labels"):
        TransformerClassifier.load(path, model_dir, tmp_path)


def test_without_the_weights_the_transformer_reader_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transformer_classifier, "bundled_weights", lambda: None)
    transformer_classifier.bundled.cache_clear()
    try:
        with pytest.raises(FileNotFoundError, match="transformer classifier"):
            ResultReader.load("transformer")
        assert isinstance(ResultReader.load().classifier, LinearClassifier)
    finally:
        transformer_classifier.bundled.cache_clear()


SHIPPED = pytest.mark.skipif(bundled_weights() is None, reason="no result_classifier.safetensors is shipped")

# Written for this test (not from Evidence Inference): intervention, comparator, outcome, text, reading.
HAND_WRITTEN = [
    (
        "dexamethasone",
        "placebo",
        "mortality",
        "Mortality was lower with dexamethasone than with placebo (HR 0.70, 95% CI 0.60-0.80).",
        "decreased",
    ),
    pytest.param(
        "placebo",
        "dexamethasone",
        "mortality",
        "Mortality was lower with dexamethasone than with placebo (HR 0.70, 95% CI 0.60-0.80).",
        "increased",
        # Known limit of the classifier alone (phases/16_result_reader.md): it reads direction words, not
        # which arm they speak of. The reader turns a unit whose subject is the comparator before reading it
        # (``ResultReader.readings``; tests/reading/test_arm_labels.py reads this order right through it).
        marks=pytest.mark.xfail(strict=True, reason="direction against a comparator named first is not learned"),
    ),
    (
        "dexamethasone",
        "placebo",
        "mortality",
        "Mortality did not differ between the dexamethasone and placebo groups (HR 0.97, 95% CI 0.85-1.10).",
        "no_difference",
    ),
    (
        "ibuprofen",
        "paracetamol",
        "pain scores",
        "Pain scores at 24 hours were significantly higher with ibuprofen than with paracetamol (p < 0.001).",
        "increased",
    ),
    (
        "early mobilisation",
        "usual care",
        "length of hospital stay",
        "Length of hospital stay was similar in both groups (6.1 vs 6.3 days; p = 0.71).",
        "no_difference",
    ),
]


@SHIPPED
def test_the_transformer_reader_is_chosen_by_name_and_the_linear_one_is_the_default() -> None:
    blended = ResultReader.load("transformer").classifier
    assert isinstance(blended, BlendedClassifier)
    assert isinstance(blended.first, RememberingClassifier)
    assert isinstance(blended.first.classifier, TransformerClassifier)
    assert isinstance(blended.second, LinearClassifier)
    assert isinstance(ResultReader.load().classifier, LinearClassifier)


@SHIPPED
def test_the_transformer_reader_reads_the_two_classifiers_blended_by_the_linear_share() -> None:
    blended = ResultReader.load("transformer").classifier
    assert isinstance(blended, BlendedClassifier)
    comparison = Comparison.of("dexamethasone", "placebo", "mortality")
    texts = [row[3] for row in HAND_WRITTEN if len(row) == 5]  # the plain rows (a param is a 3-tuple)
    transformer = blended.first.probabilities(texts, comparison)
    linear = blended.second.probabilities(texts, comparison)
    for mixed, first, second in zip(blended.probabilities(texts, comparison), transformer, linear, strict=True):
        assert sum(mixed.values()) == pytest.approx(1.0)
        for label in LABELS:
            expected = (1 - LINEAR_SHARE) * first[label] + LINEAR_SHARE * second[label]
            assert mixed[label] == pytest.approx(expected)
    assert any(first != second for first, second in zip(transformer, linear, strict=True))


@SHIPPED
@pytest.mark.parametrize(("intervention", "comparator", "outcome", "text", "expected"), HAND_WRITTEN)
def test_the_shipped_classifier_reads_hand_written_results(
    intervention: str, comparator: str, outcome: str, text: str, expected: str
) -> None:
    classifier = transformer_classifier.bundled()
    assert classifier is not None
    reading = classifier.probabilities([text], Comparison.of(intervention, comparator, outcome))[0]
    assert max(reading, key=reading.__getitem__) == expected, reading


def _head_only(path: Path, prompt: str) -> Path:
    """The base encoder (no layer replaced) under a random head, read with or without the prompt."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(0)
    head = {HEAD_WEIGHT: rng.normal(size=(3, 384)).astype(np.float16), HEAD_BIAS: np.zeros(3, np.float16)}
    save_file(head, str(path), metadata={"labels": ",".join(LABELS), "prompt": prompt, "max_tokens": "64"})
    return path


@pytest.mark.parametrize("prompt", ["none", "pair"])
def test_a_file_trained_without_the_prompt_reads_the_masked_sentence_alone(
    tmp_path: Path, model_dir: Path, prompt: str
) -> None:
    classifier = TransformerClassifier.load(_head_only(tmp_path / "w.safetensors", prompt), model_dir, tmp_path)
    # Two trials whose sentences mask alike: only the prompt (the drugs' names) tells them apart.
    aspirin = classifier.probabilities(
        ["Stroke was less frequent with aspirin than with placebo."], Comparison.of("aspirin", "placebo", "stroke")
    )[0]
    warfarin = classifier.probabilities(
        ["Stroke was less frequent with warfarin than with placebo."], Comparison.of("warfarin", "placebo", "stroke")
    )[0]
    if prompt == "none":
        assert aspirin == pytest.approx(warfarin, abs=1e-6)
    else:
        assert aspirin != pytest.approx(warfarin, abs=1e-6)


class _RecordingSession:
    """An ONNX Runtime session's ``run``: each token's state is its id (384 times), so a row's mean-pooled
    vector is the mean of its unpadded ids; records the shape of every batch run."""

    def __init__(self) -> None:
        self.shapes: list[tuple[int, ...]] = []

    def run(self, _outputs: list[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        ids = feeds["input_ids"]
        self.shapes.append(ids.shape)
        return [np.repeat(ids[..., None].astype(np.float32), 384, axis=2)]


def test_texts_are_run_in_groups_of_similar_length_and_pooled_in_their_order() -> None:
    from deepcritical.reading.transformer_classifier import pooled

    rows = [[1, 2, 3, 4], list(range(30)), [5, 5, 5, 5, 5], list(range(1, 32))]
    session = _RecordingSession()
    vectors = pooled(session, rows)
    # Two runs, each padded only to its own longest row: never a 4-token row padded to 31.
    assert sorted(session.shapes) == [(2, 5), (2, 31)]
    np.testing.assert_allclose(vectors[:, 0], [2.5, 14.5, 5.0, 16.0])
    # With no slack every length runs alone; with unbounded slack all run as one padded batch: same vectors.
    for slack, runs in ((1.0, 4), (float("inf"), 1)):
        session = _RecordingSession()
        np.testing.assert_allclose(pooled(session, rows, slack), vectors)
        assert len(session.shapes) == runs


def test_an_int8_classifier_reads_a_text_the_same_alone_or_beside_others(tmp_path: Path, model_dir: Path) -> None:
    # int8 activations are quantized with one scale per run: each text runs alone, so its companions
    # (another unit of the same study, of another length) never move its reading.
    classifier = TransformerClassifier.load(
        _head_only(tmp_path / "w.safetensors", "none"), model_dir, tmp_path, quantized=True
    )
    comparison = Comparison.of("aspirin", "placebo", "stroke")
    text = "Stroke was less frequent with aspirin than with placebo (2.1% against 3.4%, p = 0.01)."
    # Companions of the same length, which a float32 reader would run in one batch with it.
    others = [text.replace("less", "more"), text.replace("aspirin than with placebo", "placebo than with aspirin")]
    alone = classifier.probabilities([text], comparison)[0]
    beside = classifier.probabilities([others[0], text, others[1]], comparison)[1]
    assert beside == pytest.approx(alone, abs=1e-7)


def test_a_file_trained_with_the_arms_numbers_reads_which_arm_has_the_larger() -> None:
    from deepcritical.reading.transformer_classifier import masked_text

    comparison = Comparison.of("aspirin", "placebo", "stroke")
    lower = "Stroke occurred in 12% of the aspirin group and 18% of the placebo group."
    higher = "Stroke occurred in 18% of the aspirin group and 12% of the placebo group."
    # Masked, the two sentences read alike; with ``numbers: order`` they say which arm's number is larger.
    assert masked_text(lower, comparison) == masked_text(higher, comparison)
    assert masked_text(lower, comparison, numbers=True).endswith("; intervention lower")
    assert masked_text(higher, comparison, numbers=True).endswith("; intervention higher")
    assert masked_text("Stroke was rarer with aspirin.", comparison, numbers=True) == masked_text(
        "Stroke was rarer with aspirin.", comparison
    )


def test_the_shipped_readers_int8_weights_cannot_saturate_an_avx2_cpus_sums(tmp_path: Path, model_dir: Path) -> None:
    """Without VNNI, ONNX Runtime adds two uint8 x int8 products in int16: 255 x 64 x 2 fits, 255 x 127 x 2 does
    not, and 8-bit weights made the reader's logits differ by CPU (bench/reader_cpu_paths.py, phases/23)."""
    import onnx
    from onnx import numpy_helper

    from deepcritical.reading.transformer_ranker import TransformerRanker, bundled_ranker_weights

    classifier_weights, ranker_weights = bundled_weights(), bundled_ranker_weights()
    assert classifier_weights is not None
    assert ranker_weights is not None
    TransformerClassifier.load(classifier_weights, model_dir, tmp_path / "classifier", quantized=True)
    TransformerRanker.load(ranker_weights, model_dir, tmp_path / "ranker", quantized=True)
    for folder in ("classifier", "ranker"):
        (graph,) = (tmp_path / folder).glob("*.onnx")
        weights = [
            numpy_helper.to_array(tensor)
            for tensor in onnx.load(str(graph)).graph.initializer
            if tensor.data_type == 3 and len(tensor.dims) == 2  # int8 matrices
        ]
        assert len(weights) == 6 * 6  # every weight product of the 6 layers: query, key, value, output, 2 feed-forward
        assert max(int(np.abs(w.astype(np.int32)).max()) for w in weights) <= 64


@SHIPPED
def test_a_transformer_reader_runs_each_text_through_its_encoders_once_and_a_new_reader_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run reads the same units many times (the Judge, the Report, the verdict; a study's outcome and primary
    outcome again): each reader remembers what its encoders read, and gives the same reading; another reader (another
    run) remembers nothing of it."""
    rows_run: list[int] = []
    pooled = transformer_classifier.pooled

    def counting(session: object, rows: list[list[int]], slack: float = 1.25) -> np.ndarray:
        rows_run.append(len(rows))
        return pooled(session, rows, slack)

    monkeypatch.setattr(transformer_classifier, "pooled", counting)
    monkeypatch.setattr("deepcritical.reading.transformer_ranker.pooled", counting)
    units = split_units(" ".join(row[3] for row in HAND_WRITTEN if len(row) == 5))
    comparison = Comparison.of("dexamethasone", "placebo", "mortality")
    reader = ResultReader.load("transformer")
    first = reader.read(units, comparison)
    read_first = sum(rows_run)
    assert read_first > 0
    assert reader.read(units, comparison) == first
    assert sum(rows_run) == read_first
    reader.read(units, comparison.turned())  # another comparison is read anew
    read_turned = sum(rows_run)
    assert read_turned > read_first
    assert ResultReader.load("transformer").read(units, comparison) == first
    assert sum(rows_run) == read_turned + read_first  # a new reader (another run's) remembers nothing
