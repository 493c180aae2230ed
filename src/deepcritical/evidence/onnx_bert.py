"""A BERT encoder as an ONNX graph, built here from a model directory's ``model.safetensors``.

No ONNX file is downloaded and torch is not needed: the graph is written with ``onnx.helper`` from the
weights the model package ships, operator for operator as Hugging Face's ``BertModel`` computes it
(embeddings, then per layer self-attention and a GELU feed-forward block, each followed by a residual
LayerNorm), and ONNX Runtime runs it. Its output is the last hidden state; pooling and normalising
follow in numpy. Only BERT-type models with absolute positions are built; anything else is refused with
``UnsupportedModelError`` so the caller can fall back to sentence-transformers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

OPSET = 17  # LayerNormalization is a standard operator from opset 17


class UnsupportedModelError(Exception):
    """The directory does not hold a BERT model this builder can write as a graph."""


def bert_config(model_dir: Path) -> dict[str, Any]:
    path = model_dir / "config.json"
    if not path.is_file():
        raise UnsupportedModelError(f"no config.json in {model_dir}")
    config: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if config.get("model_type") != "bert":
        raise UnsupportedModelError(f"model_type {config.get('model_type')!r} is not 'bert'")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise UnsupportedModelError("only absolute position embeddings are supported")
    if config.get("hidden_act", "gelu") != "gelu":
        raise UnsupportedModelError(f"hidden_act {config.get('hidden_act')!r} is not 'gelu'")
    return config


def _weights(model_dir: Path) -> dict[str, np.ndarray]:
    path = model_dir / "model.safetensors"
    if not path.is_file():
        raise UnsupportedModelError(f"no model.safetensors in {model_dir}")
    from safetensors.numpy import load_file

    tensors = load_file(str(path))
    # Checkpoints saved from BertForX prefix every name with "bert."; the encoder is the same.
    return {name.removeprefix("bert."): value for name, value in tensors.items()}


class _Graph:
    """The nodes and initializers of a graph being written, each node named by its operator and a counter."""

    def __init__(self, weights: Mapping[str, np.ndarray], epsilon: float) -> None:
        from onnx import TensorProto, helper, numpy_helper

        self.helper, self.numpy_helper, self.tensor_proto = helper, numpy_helper, TensorProto
        self.weights, self.epsilon = weights, epsilon
        self.initializers: list[Any] = []
        self.nodes: list[Any] = []
        self.counter = iter(range(1_000_000))

    def constant(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(self.numpy_helper.from_array(value, name))
        return name

    def weight(self, name: str, *, transposed: bool = False) -> str:
        """A tensor of the weights; ``transposed`` for a Linear's: torch stores (out, in), MatMul wants (in, out)."""
        if name not in self.weights:
            raise UnsupportedModelError(f"the weights have no tensor {name!r}")
        value = self.weights[name].astype(np.float32)
        return self.constant(name, np.ascontiguousarray(value.T if transposed else value))

    def node(self, op: str, inputs: list[str], **attributes: Any) -> str:
        output = f"{op.lower()}_{next(self.counter)}"
        self.nodes.append(self.helper.make_node(op, inputs, [output], name=output, **attributes))
        return output

    def linear(self, x: str, prefix: str) -> str:
        product = self.node("MatMul", [x, self.weight(f"{prefix}.weight", transposed=True)])
        return self.node("Add", [product, self.weight(f"{prefix}.bias")])

    def layer_norm(self, x: str, prefix: str) -> str:
        scale_and_shift = [self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")]
        return self.node("LayerNormalization", [x, *scale_and_shift], axis=-1, epsilon=self.epsilon)


def _embeddings(graph: _Graph) -> str:
    """Word + position + token type 0 (every text is one segment), then LayerNorm."""
    weights = graph.weights
    token_type = weights.get("embeddings.token_type_embeddings.weight")
    positions = weights["embeddings.position_embeddings.weight"].astype(np.float32)
    if token_type is not None:
        positions = positions + token_type[0].astype(np.float32)
    position_table = graph.constant("position_and_type_embeddings", np.ascontiguousarray(positions))
    words = graph.node("Gather", [graph.weight("embeddings.word_embeddings.weight"), "input_ids"], axis=0)
    one_index = graph.constant("one_index", np.array([1], dtype=np.int64))
    length = graph.node("Gather", [graph.node("Shape", ["input_ids"]), one_index], axis=0)
    zero = graph.constant("zero_index", np.array([0], dtype=np.int64))
    position_rows = graph.node("Slice", [position_table, zero, length, zero])
    return graph.layer_norm(graph.node("Add", [words, position_rows]), "embeddings.LayerNorm")


def _padding_bias(graph: _Graph) -> str:
    """-10000 added to the scores of padded keys (what BERT's original code does), shape (B,1,1,S)."""
    mask = graph.node("Cast", ["attention_mask"], to=graph.tensor_proto.FLOAT)
    padding = graph.node("Sub", [graph.constant("one", np.array(1.0, dtype=np.float32)), mask])
    masked = graph.node("Mul", [padding, graph.constant("big_negative", np.array(-10000.0, dtype=np.float32))])
    return graph.node("Unsqueeze", [masked, graph.constant("mask_axes", np.array([1, 2], dtype=np.int64))])


def build_bert_graph(model_dir: Path, replacements: Mapping[str, np.ndarray] | None = None) -> bytes:
    """The serialised ONNX model: inputs ``input_ids`` and ``attention_mask`` (int64, batch x tokens),
    output ``last_hidden_state`` (float32, batch x tokens x hidden). ``replacements`` (named as in the
    file, without "bert.") take the place of the file's tensors: a fine-tuned model's changed layers."""
    config = bert_config(model_dir)
    graph = _Graph(_weights(model_dir) | dict(replacements or {}), float(config.get("layer_norm_eps", 1e-12)))
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    head_size = hidden // heads
    x = _embeddings(graph)
    score_bias = _padding_bias(graph)
    split_shape = graph.constant("split_heads_shape", np.array([0, 0, heads, head_size], dtype=np.int64))
    merge_shape = graph.constant("merge_heads_shape", np.array([0, 0, hidden], dtype=np.int64))
    scale = graph.constant("attention_scale", np.array(1.0 / math.sqrt(head_size), dtype=np.float32))
    sqrt_half = graph.constant("sqrt_half", np.array(1.0 / math.sqrt(2.0), dtype=np.float32))
    half = graph.constant("half", np.array(0.5, dtype=np.float32))
    node, linear, layer_norm = graph.node, graph.linear, graph.layer_norm
    for index in range(int(config["num_hidden_layers"])):
        prefix = f"encoder.layer.{index}"

        def heads_of(projection: str, perm: list[int], x: str = x, prefix: str = prefix) -> str:
            reshaped = node("Reshape", [linear(x, f"{prefix}.attention.self.{projection}"), split_shape])
            return node("Transpose", [reshaped], perm=perm)

        query = heads_of("query", [0, 2, 1, 3])
        key = heads_of("key", [0, 2, 3, 1])
        value = heads_of("value", [0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [query, key]), scale]), score_bias])
        context = node("MatMul", [node("Softmax", [scores], axis=-1), value])
        merged = node("Reshape", [node("Transpose", [context], perm=[0, 2, 1, 3]), merge_shape])
        attended = linear(merged, f"{prefix}.attention.output.dense")
        x = layer_norm(node("Add", [attended, x]), f"{prefix}.attention.output.LayerNorm")
        # GELU as BERT defines it, with erf: 0.5 * h * (1 + erf(h / sqrt(2))).
        inner = linear(x, f"{prefix}.intermediate.dense")
        erf = node("Erf", [node("Mul", [inner, sqrt_half])])
        activated = node("Mul", [node("Mul", [inner, half]), node("Add", [erf, "one"])])
        x = layer_norm(node("Add", [linear(activated, f"{prefix}.output.dense"), x]), f"{prefix}.output.LayerNorm")
    return _serialised(graph, x, hidden)


def _serialised(graph: _Graph, last: str, hidden: int) -> bytes:
    helper, tensor = graph.helper, graph.tensor_proto
    graph.nodes.append(helper.make_node("Identity", [last], ["last_hidden_state"]))
    written = helper.make_graph(
        graph.nodes,
        "bert_encoder",
        [
            helper.make_tensor_value_info("input_ids", tensor.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", tensor.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("last_hidden_state", tensor.FLOAT, ["batch", "tokens", hidden])],
        graph.initializers,
    )
    model = helper.make_model(written, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="deepcritical")
    model.ir_version = 8
    return bytes(model.SerializeToString())


def _products_kept_float(graph: bytes, float_weights: tuple[str, ...]) -> tuple[Any, list[str]]:
    """The model and the names of the products that stay float32: those without a weight matrix, and
    those whose weight's name ends with one of ``float_weights``."""
    import onnx

    model = onnx.load_from_string(graph)
    constants = {tensor.name for tensor in model.graph.initializer}
    products = [
        n.name
        for n in model.graph.node
        if n.op_type == "MatMul" and (n.input[1] not in constants or n.input[1].endswith(float_weights))
    ]
    return model, products


def quantize(graph: bytes, target: Path, *, reduce_range: bool = False, float_weights: tuple[str, ...] = ()) -> None:
    """Write ``graph`` to ``target`` with its weight matrices in int8, one scale per output channel.

    Only products with a weight matrix are quantized; the attention products (query by key, weights by
    value) stay float32: quantizing them too moved vectors by up to 10% in cosine on SciFact abstracts,
    weights alone by under 1%."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    model, float_products = _products_kept_float(graph, float_weights)
    quiet = logging.getLogger()
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # its advice to run shape pre-processing is for image models
    try:
        quantize_dynamic(
            model,
            target,
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=float_products,
            reduce_range=reduce_range,
        )
    finally:
        quiet.setLevel(level)


def session_options(threads: int = 0) -> Any:
    """ONNX Runtime's options for the graphs built here (``threads``: intra-op threads, 0 for its default).

    Its int8 products are u8s8: exact int32 sums with VNNI, but on AVX2 alone two products are added in
    int16 first, which saturates for 8-bit weights; ``quantize(reduce_range=True)``'s cannot. Its u8u8
    kernels (``session.x64quantprecision``) were measured too and not taken: bitwise the same results on a
    VNNI CPU, slower there, and on an AVX2 one still 0.011 from a VNNI one's similarities (u8s8: 0.041;
    ``bench/embedding_cpu_paths.py`` under QEMU's AVX2 CPU, ``phases/23_cpu_stable_embeddings.md``)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    # No busy-waiting between operators: on a shared machine spinning threads take cores from others.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if threads:
        options.intra_op_num_threads = threads
    options.log_severity_level = 3
    return options


def quantize_in_memory(graph: bytes, *, reduce_range: bool = False) -> bytes:
    """``quantize`` without a cache: through a temporary file, returned as bytes."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="deepcritical-onnx-") as scratch:
        target = Path(scratch) / "model.onnx"
        quantize(graph, target, reduce_range=reduce_range)
        return target.read_bytes()
