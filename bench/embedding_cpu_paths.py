r"""Does the int8 embedding graph give the float model's similarities on every CPU? Each option, measured.

    python bench/embedding_cpu_paths.py [--data ../shared/data/beir-scifact] [--docs 150] [--queries 60]
    qemu-x86_64 -cpu max .venv/bin/python bench/embedding_cpu_paths.py --graphs DIR ...  # AVX2, no VNNI

ONNX Runtime's int8 products multiply uint8 activations by int8 weights (u8s8). With VNNI (``vpdpbusd``)
each product is summed exactly in int32; with AVX2 alone (``vpmaddubsw``) two neighbouring products are
summed into int16 first and saturate past 32767, so the same graph gives other vectors on such a CPU. The
runtime picks the kernel from the CPU and has no switch to force another, so the AVX2 path is measured on
an emulated CPU: QEMU's ``-cpu max`` (QEMU 7.2) has AVX2 and FMA but neither AVX-512 nor VNNI; the script
prints the CPU features it sees. Texts/s under emulation mean nothing; compare them natively.

Options, each against the float32 graph (the reference: what sentence-transformers computes, 1e-5):

- ``int8``: weight products int8, one scale per output channel (``onnx_bert.quantize``), u8s8;
- ``int8, u8u8``: the same graph with ONNX Runtime's ``session.x64quantprecision`` = 1: the weights are
  moved to uint8 at load and the u8u8 kernels, exact on every x86 CPU, run;
- ``int8, reduce_range``: 7-bit weights, so an AVX2 pair sum cannot reach int16's limit;
- ``float32``, batch 8 as the product runs it (int8 embeds one text per call).

Texts: the first ``--docs`` SciFact abstracts (title and text, cut to the window as the product cuts them),
with four near-duplicates of each of the first ``--docs`` / 3 (title dropped, title alone with the first
sentence, the first half, lower-cased: pairs around the de-duplication threshold) and ``--claims`` SciFact
claims (short texts, where int8 drifts most; cheap under emulation); the first ``--queries`` SciFact claims
rank all of them. Printed per option: max |delta similarity| over all text pairs
and over query-document pairs, the least cosine to the float vector, de-duplication decisions at 0.9
that differ from float's (pairs at or above 0.9 under float in brackets), top-10 overlap and top-1
agreement of the queries' dense ranking of the texts, and texts/s (the median of ``--repeat``
passes over all the texts, after a warm-up).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime
import structlog

from deepcritical.evidence import EmbeddingService
from deepcritical.evidence.embedding_models import resolve_model
from deepcritical.evidence.embeddings import passage_text
from deepcritical.evidence.onnx_bert import build_bert_graph, quantize

THRESHOLD = 0.9
TOP_K = 10
Vectors = npt.NDArray[np.float32]


def cpu_features() -> str:
    from numpy._core._multiarray_umath import __cpu_features__ as features  # what the CPU (or QEMU) reports

    return ", ".join(f"{name} {'yes' if features.get(name) else 'no'}" for name in ("AVX2", "AVX512BW", "AVX512VNNI"))


def near_duplicates(title: str, text: str) -> list[str]:
    sentences = [s for s in text.split(". ") if s]
    return [
        text,
        passage_text(title, sentences[0]),
        passage_text(title, text[: len(text) // 2]),
        passage_text(title, text).lower(),
    ]


def session(graph: Path, *, exact_u8u8: bool) -> onnxruntime.InferenceSession:
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.x64quantprecision", "1" if exact_u8u8 else "0")
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data/beir-scifact"))
    parser.add_argument("--docs", type=int, default=150)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--claims", type=int, default=0, help="SciFact claims (short texts) added to the pool")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes (0: not timed, as under emulation)")
    parser.add_argument("--only", nargs="*", help="the options to run (float32, the reference, always runs)")
    parser.add_argument("--graphs", type=Path, help="keep the built graphs here and reuse them (build natively once)")
    parser.add_argument("--save", type=Path, help="write each option's vectors here (.npz)")
    parser.add_argument("--compare", type=Path, help="vectors --save wrote on another CPU: their max |delta sim|")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(30))
    with (args.data / "corpus.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line, _ in zip(handle, range(args.docs), strict=False)]
    with (args.data / "queries.jsonl").open(encoding="utf-8") as handle:
        claims = [json.loads(line)["text"] for line, _ in zip(handle, range(args.queries + args.claims), strict=False)]
    queries, short = claims[: args.queries], claims[args.queries :]
    documents = [passage_text(row.get("title") or "", row.get("text") or "") for row in rows]
    variants = [v for row in rows[: args.docs // 3] for v in near_duplicates(row["title"], row["text"]) if v.strip()]
    service = EmbeddingService(backend="onnx")
    pool = service.fit_to_window(documents + variants + short)  # the texts de-duplication compares
    texts = pool + queries
    encoder = service.encoder  # the product's tokenisation, padding and pooling, with each option's session

    layers = range(6)
    feed_forward_out = tuple(f"layer.{i}.output.dense.weight" for i in layers)
    feed_forward_in = tuple(f"layer.{i}.intermediate.dense.weight" for i in layers)
    # name: (quantize's keywords, or None for the float32 graph; u8u8 session; batch)
    plan: dict[str, tuple[dict[str, Any] | None, bool, int]] = {
        "float32": (None, False, 8),
        "int8": ({}, False, 1),
        "int8, u8u8 (x64quantprecision)": ({}, True, 1),
        "int8, reduce_range": ({"reduce_range": True}, False, 1),
        "int8, feed-forward out float32, u8u8": ({"float_weights": feed_forward_out}, True, 1),
        "int8, feed-forward float32, u8u8": ({"float_weights": feed_forward_out + feed_forward_in}, True, 1),
    }
    plan = {name: plan[name] for name in plan if not args.only or name in args.only or name == "float32"}
    with tempfile.TemporaryDirectory(prefix="deepcritical-cpu-paths-") as scratch:
        folder = args.graphs or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        float32 = b""
        options: dict[str, tuple[onnxruntime.InferenceSession, int]] = {}
        for name, (keywords, exact, batch) in plan.items():
            built_as = hashlib.sha256(repr(keywords and sorted(keywords.items())).encode()).hexdigest()[:12]
            graph = folder / f"{built_as}.onnx"
            if not graph.is_file():
                float32 = float32 or build_bert_graph(Path(resolve_model(None).location))
                if keywords is None:
                    graph.write_bytes(float32)
                else:
                    quantize(float32, graph, **keywords)
            options[name] = (session(graph, exact_u8u8=exact), batch)

        def embed(name: str) -> Callable[[], Vectors]:
            model, batch = options[name]

            def run() -> Vectors:
                encoder.session = model
                encoder.quantized = batch == 1
                return np.asarray(encoder.encode(texts, batch), dtype=np.float32)

            return run

        vectors: dict[str, Vectors] = {}
        seconds: dict[str, list[float]] = {name: [] for name in options}
        for name in options:
            vectors[name] = embed(name)()  # warm-up, and the vectors compared
        for _ in range(args.repeat):
            for name in options:
                started = time.perf_counter()
                embed(name)()
                seconds[name].append(time.perf_counter() - started)
    if args.save:
        np.savez(args.save, **vectors)
    other = dict(np.load(args.compare)) if args.compare else {}

    n_pool = len(pool)
    reference = vectors["float32"]
    pairs = np.triu_indices(n_pool, k=1)
    float_pairs = (reference[:n_pool] @ reference[:n_pool].T)[pairs]
    float_scores = reference[n_pool:] @ reference[:n_pool].T
    float_top = np.argsort(-float_scores, axis=1)[:, :TOP_K]
    print(f"CPU: {cpu_features()}; ONNX Runtime {onnxruntime.__version__}")
    print(
        f"{len(documents)} SciFact abstracts + {len(variants)} near-duplicates + {len(short)} claims "
        f"({len(float_pairs):,} pairs, "
        f"{int((float_pairs >= THRESHOLD).sum())} at or above {THRESHOLD} under float32, "
        f"{int((np.abs(float_pairs - THRESHOLD) < 0.02).sum())} within 0.02 of it); {len(queries)} claims as queries"
    )
    print()
    print(
        f"| option | max abs delta sim (pairs) | max abs delta sim (query-doc) | least cosine to float | "
        f"dedup decisions differing at {THRESHOLD} | top-{TOP_K} overlap | top-1 same | texts/s |"
        + (" max abs delta sim vs the other CPU's |" if other else "")
    )
    print("|---|---|---|---|---|---|---|---|" + ("---|" if other else ""))
    for name in options:
        found = vectors[name]
        pair_delta = np.abs((found[:n_pool] @ found[:n_pool].T)[pairs] - float_pairs).max()
        scores = found[n_pool:] @ found[:n_pool].T
        query_delta = np.abs(scores - float_scores).max()
        cosine = np.sum(found * reference, axis=1).min()
        decisions = int((((found[:n_pool] @ found[:n_pool].T)[pairs] >= THRESHOLD) != (float_pairs >= THRESHOLD)).sum())
        top = np.argsort(-scores, axis=1)[:, :TOP_K]
        overlap = np.mean([len(set(a) & set(b)) / TOP_K for a, b in zip(top, float_top, strict=True)])
        first = np.mean(top[:, 0] == float_top[:, 0])
        speed = f"{len(texts) / statistics.median(seconds[name]):.1f}" if seconds[name] else "-"
        across = ""
        if name in other:
            theirs = other[name]
            across = f" {np.abs(found @ found.T - theirs @ theirs.T).max():.2g} |"
        print(
            f"| {name} | {pair_delta:.4f} | {query_delta:.4f} | {cosine:.4f} | {decisions} | {overlap:.3f} | "
            f"{first:.3f} | {speed} |{across}"
        )


if __name__ == "__main__":
    main()
