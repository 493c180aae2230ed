r"""Could the embedding model itself store 200 RIS records/s with abstracts? Each way of running it, timed.

    python bench/encoder_options.py [--records 200]

The passages of the first ``--records`` records of ``bench/ris_records.py`` (as ``library add`` embeds them:
title and passage text) go through ONNX Runtime sessions of the product's own graphs (``onnx_bert``; int8 as
``onnx_encoder`` quantizes it, and float32), tokenized by the model's tokenizer, longest first in batches
padded to their own longest text, as ``OnnxEncoder.encode`` does, under: batch sizes, session options
(intra-op threads, sequential execution, graph optimisation level) and a cut to 128 word pieces (the length
all-MiniLM-L6-v2 was trained at; the product reads 256). Each configuration is warmed up, then timed once;
printed: passages/s, word pieces/s, the process's CPU seconds (steadier than wall time on a shared machine)
and the load average beside each. Vectors are not compared: a configuration that changes them (the cut)
would need ``bench/retrieval_beir.py`` before it could be taken.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime

from deepcritical.documents.reader import Limits, read_file
from deepcritical.evidence import EmbeddingService
from deepcritical.evidence.embedding_models import resolve_model
from deepcritical.evidence.embeddings import passage_text
from deepcritical.evidence.onnx_bert import build_bert_graph, quantize
from ris_records import records  # type: ignore[import-not-found]


def session(
    graph: Path, threads: int = 0, sequential: bool = False, basic: bool = False
) -> onnxruntime.InferenceSession:
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = (
        onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        if basic
        else onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    )
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # as the product
    options.log_severity_level = 3
    if threads:
        options.intra_op_num_threads = threads
    if sequential:
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    return onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])


def run(
    model: onnxruntime.InferenceSession, tokens: list[list[int]], batch: int, window: int
) -> tuple[float, float, float]:
    """Passages/s, word pieces/s and CPU seconds of one pass, each text cut to ``window`` (its last token kept)."""
    ids = [text if len(text) <= window else [*text[: window - 1], text[-1]] for text in tokens]
    order = sorted(range(len(ids)), key=lambda position: -len(ids[position]))
    started, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(order), batch):
        chosen = order[start : start + batch]
        width = max(len(ids[position]) for position in chosen)
        input_ids = np.zeros((len(chosen), width), dtype=np.int64)
        mask = np.zeros_like(input_ids)
        for row, position in enumerate(chosen):
            input_ids[row, : len(ids[position])] = ids[position]
            mask[row, : len(ids[position])] = 1
        model.run(None, {"input_ids": input_ids, "attention_mask": mask})
    seconds = time.perf_counter() - started
    return len(ids) / seconds, sum(map(len, ids)) / seconds, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200)
    arguments = parser.parse_args()
    service = EmbeddingService(backend="onnx")
    with tempfile.TemporaryDirectory() as folder:
        export = Path(folder) / "sample.ris"
        export.write_text("".join(records(arguments.records)), encoding="utf-8")
        documents = read_file(export, Limits()).documents
        texts = [passage_text(d.meta.title, passage.text) for d in documents for passage in d.passages]
        tokens = [encoding.ids for encoding in service.encoder.tokenizer.encode_batch(texts, add_special_tokens=True)]
        float32 = Path(folder) / "fp32.onnx"
        float32.write_bytes(build_bert_graph(Path(resolve_model(None).location)))
        int8 = Path(folder) / "int8.onnx"
        quantize(float32.read_bytes(), int8)
        lengths = [len(ids) for ids in tokens]
        print(
            f"{len(texts)} passages of {len(documents)} records ({len(texts) / len(documents):.2f} a record), "
            f"{np.mean(lengths):.0f} word pieces on average, median {np.median(lengths):.0f}; "
            f"ONNX Runtime {onnxruntime.__version__}"
        )
        sessions = {
            "int8": session(int8),
            "float32": session(float32),
            "int8, intra-op threads 2 + sequential": session(int8, threads=2, sequential=True),
            "int8, 1 intra-op thread": session(int8, threads=1),
            "int8, basic graph optimisation": session(int8, basic=True),
        }
        for model in sessions.values():
            run(model, tokens[:16], 8, 256)  # warm-up
        plan = [
            ("int8", 1, 256),
            ("int8", 16, 256),
            ("int8", 64, 256),
            ("float32", 1, 256),
            ("float32", 8, 256),
            ("float32", 32, 256),
            ("int8, intra-op threads 2 + sequential", 1, 256),
            ("int8, 1 intra-op thread", 1, 256),
            ("int8, basic graph optimisation", 1, 256),
            ("int8", 1, 128),
            ("int8", 16, 128),
            ("float32", 16, 128),
        ]
        for name, batch, window in plan:
            passages, pieces, cpu = run(sessions[name], tokens, batch, window)
            print(
                f"{name}, batch {batch}, window {window}: {passages:.0f} passages/s, {pieces:,.0f} word pieces/s, "
                f"{cpu:.1f} CPU s ({passages / (len(texts) / len(documents)):.0f} records/s; "
                "load average {:.1f})".format(os.getloadavg()[0])
            )


if __name__ == "__main__":
    main()
