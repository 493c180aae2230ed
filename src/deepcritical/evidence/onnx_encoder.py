"""The ONNX backends of ``embeddings.EmbeddingService``: ONNX Runtime runs a graph built from the model's
own weights (``onnx_bert.py``), float32 (``onnx``) or int8 (``onnx-int8``: weights quantized to 7 bits per
channel, ``INT8_REDUCED_RANGE``), cached once per user
(``embeddings.default_cache_dir``) under a name that carries its key; the tokenizer is ``tokenizers``.
Imported only when the ONNX backend loads."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt
import structlog

log = structlog.get_logger(__name__)
# Bumped whenever the built graph changes, so that a cached graph from an older builder is not used.
_GRAPH_VERSION = "2"  # 2: the int8 graph's weights in 7 bits (reduce_range)
# The int8 graph's weights in [-64, 64]: a pair of u8s8 products then never saturates ONNX Runtime's int16
# sums on AVX2 without VNNI, so every x86 CPU computes the same vectors (3e-7 between an AVX2 and a VNNI CPU;
# with 8-bit weights 0.041: bench/embedding_cpu_paths.py, phases/23_cpu_stable_embeddings.md).
INT8_REDUCED_RANGE = True


def _window(model_dir: Path, tokenizer_limit: int | None) -> int:
    """The model's window as sentence-transformers sets it: ``max_seq_length``, else the tokenizer's
    limit, never beyond the position table."""
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    positions = int(config.get("max_position_embeddings", 512))
    settings_file = model_dir / "sentence_bert_config.json"
    if settings_file.is_file():
        window = json.loads(settings_file.read_text(encoding="utf-8")).get("max_seq_length")
        if window:
            return min(int(window), positions)
    return min(tokenizer_limit or positions, positions)


def _mean_pooling(model_dir: Path) -> None:
    """The ONNX backend pools by mean and normalises, as all-MiniLM-L6-v2 does; other heads go to torch."""
    modules_file = model_dir / "modules.json"
    if not modules_file.is_file():
        from deepcritical.evidence.onnx_bert import UnsupportedModelError

        raise UnsupportedModelError("no modules.json (not a sentence-transformers model)")
    kinds = [module.get("type", "").rsplit(".", 1)[-1] for module in json.loads(modules_file.read_text("utf-8"))]
    pooling_file = model_dir / "1_Pooling" / "config.json"
    pooling = json.loads(pooling_file.read_text("utf-8")) if pooling_file.is_file() else {}
    others = ("pooling_mode_cls_token", "pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens")
    mean_only = pooling.get("pooling_mode_mean_tokens") and not any(pooling.get(key) for key in others)
    if kinds[:2] != ["Transformer", "Pooling"] or set(kinds[2:]) - {"Normalize"} or not mean_only:
        from deepcritical.evidence.onnx_bert import UnsupportedModelError

        raise UnsupportedModelError(f"modules {kinds} with pooling {pooling} are not Transformer + mean pooling")


def _graph_file(model_dir: Path, quantized: bool, cache_dir: Path) -> Path:
    """The built (and quantized) graph, from the cache when it is there, else built and cached."""
    import onnxruntime

    weights = model_dir / "model.safetensors"
    stat = weights.stat()
    # The weights file (where, how big, when written), the builder, and the runtime that quantizes it.
    key = hashlib.sha256(
        f"{_GRAPH_VERSION}|{weights.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{quantized}|"
        f"{onnxruntime.__version__}".encode()
    ).hexdigest()[:16]
    target = cache_dir / f"{model_dir.name}-{'int8' if quantized else 'fp32'}-{key}.onnx"
    if target.is_file():
        return target
    from deepcritical.evidence.onnx_bert import build_bert_graph, quantize

    graph = build_bert_graph(model_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    # Written under a unique name, then renamed: two processes building at once both end with a whole file.
    partial = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        if quantized:
            quantize(graph, partial, reduce_range=INT8_REDUCED_RANGE)
        else:
            partial.write_bytes(graph)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    log.info("embedding graph built", file=str(target), quantized=quantized)
    return target


class OnnxEncoder:
    def __init__(self, model_dir: Path, *, quantized: bool, cache_dir: Path) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        from deepcritical.evidence.onnx_bert import UnsupportedModelError, bert_config, session_options

        bert_config(model_dir)
        if not (model_dir / "tokenizer.json").is_file():
            raise UnsupportedModelError(f"no tokenizer.json in {model_dir}")
        _mean_pooling(model_dir)
        self.name = "onnx-int8" if quantized else "onnx"
        # int8: one text per call. Activations are quantized with one scale per call, so a batch-mate (or
        # its padding) would shift a text's vector; alone, a vector depends on its text only, which the
        # store relies on when it reuses stored vectors. Without padding it is also the cheapest way.
        self.quantized = quantized
        self.batch_size = 1 if quantized else 8
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # No truncation or padding set on the tokenizer: both are done here, so it holds no state to share.
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        self.special_tokens = int(self.tokenizer.num_special_tokens_to_add(False))
        self.max_tokens = _window(model_dir, None)
        try:
            graph: Path | bytes = _graph_file(model_dir, quantized, cache_dir)
        except OSError as error:  # an unwritable home costs the cache, not the run
            from deepcritical.evidence.onnx_bert import build_bert_graph, quantize_in_memory

            log.warning("embedding graph not cached", cache=str(cache_dir), error=str(error))
            graph = build_bert_graph(model_dir)
            if quantized:
                graph = quantize_in_memory(graph, reduce_range=INT8_REDUCED_RANGE)
        model = str(graph) if isinstance(graph, Path) else graph
        self.session = onnxruntime.InferenceSession(model, session_options(), providers=["CPUExecutionProvider"])
        self.dimension = int(self.session.get_outputs()[0].shape[-1])

    def offsets(self, texts: list[str]) -> list[list[tuple[int, int]]]:
        return [list(encoding.offsets) for encoding in self.tokenizer.encode_batch(texts, add_special_tokens=False)]

    def encode(self, texts: list[str], batch_size: int) -> npt.NDArray[np.float32]:
        if self.quantized:
            batch_size = 1
        encodings = self.tokenizer.encode_batch(texts, add_special_tokens=True)
        ids = [encoding.ids[: self.max_tokens] for encoding in encodings]
        # Longest first, in batches padded to their own longest text (as sentence-transformers batches).
        order = sorted(range(len(ids)), key=lambda position: -len(ids[position]))
        vectors = np.zeros((len(ids), self.dimension), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            width = max(len(ids[position]) for position in batch)
            input_ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, position in enumerate(batch):
                input_ids[row, : len(ids[position])] = ids[position]
                mask[row, : len(ids[position])] = 1
            (hidden,) = self.session.run(None, {"input_ids": input_ids, "attention_mask": mask})
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            vectors[batch] = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return vectors
