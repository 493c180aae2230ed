r"""Embedding throughput of each backend on SciFact abstracts: documents per second, wall and CPU.

    python bench/embedding_throughput.py [--data ../shared/data/beir-scifact] [--docs 256] [--repeat 3]

The first ``--docs`` documents of the corpus (title + abstract, as the store embeds them: cut to the
model's window) go through ``EmbeddingService.embed`` of each backend (``onnx``: ONNX Runtime, float32,
the default; ``onnx-int8``: int8 weights; ``torch``: sentence-transformers), after one warm-up call, with
each backend's own batch size. Each figure is the median of ``--repeat`` passes; backends take turns
pass by pass so that load from elsewhere on the machine falls on all of them alike. CPU seconds are the
process's (both cores count), steadier than wall time on a shared machine. Model load times are printed
too (the ONNX graph is built into an empty cache first, so it is a first-use load). The ``torch`` row is
skipped when sentence-transformers is not installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import structlog

from deepcritical.evidence import EmbeddingService
from deepcritical.evidence.embeddings import passage_text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data/beir-scifact"))
    parser.add_argument("--docs", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(30))
    with (args.data / "corpus.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line, _ in zip(handle, range(args.docs), strict=False)]
    texts = [passage_text(row.get("title") or "", row.get("text") or "") for row in rows]
    texts = [text for text in texts if text.strip()]
    backends = ["onnx", "onnx-int8"]
    if importlib.util.find_spec("sentence_transformers") is not None:
        backends.append("torch")
    services: dict[str, EmbeddingService] = {}
    loads: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="deepcritical-embed-bench-") as cache:
        for backend in backends:
            started = time.perf_counter()
            services[backend] = EmbeddingService(backend=backend, cache_dir=Path(cache))  # type: ignore[arg-type]
            services[backend].embed(texts[:2])  # loads (and for ONNX builds) the model; warms it up
            loads[backend] = time.perf_counter() - started
        walls: dict[str, list[float]] = {backend: [] for backend in backends}
        cpus: dict[str, list[float]] = {backend: [] for backend in backends}
        for _ in range(args.repeat):
            for backend in backends:
                wall, cpu = time.perf_counter(), time.process_time()
                services[backend].embed(texts)
                walls[backend].append(time.perf_counter() - wall)
                cpus[backend].append(time.process_time() - cpu)
    base = "torch" if "torch" in backends else "onnx"
    print(f"{len(texts)} SciFact documents from {args.data}; {args.repeat} passes; medians")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    print(f"| backend | batch | first load s | docs/s (wall) | docs per CPU-s | CPU-s speed-up vs {base} |")
    print("|---|---|---|---|---|---|")
    base_cpu = statistics.median(cpus[base])
    for backend in backends:
        wall, cpu = statistics.median(walls[backend]), statistics.median(cpus[backend])
        batch = 1 if backend == "onnx-int8" else services[backend].batch_size or services[backend].encoder.batch_size
        print(
            f"| {backend} | {batch} | {loads[backend]:.2f} | {len(texts) / wall:.1f} | "
            f"{len(texts) / cpu:.1f} | {base_cpu / cpu:.2f}x |"
        )


if __name__ == "__main__":
    main()
