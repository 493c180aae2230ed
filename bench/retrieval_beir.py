r"""Retrieval quality and indexing speed of the evidence store on a BEIR-format corpus.

    python bench/retrieval_beir.py --data ../shared/data/beir-scifact \
        --qrels ../shared/data/beir-scifact/qrels/train.tsv

The corpus is indexed through ``EvidenceStore.add`` and ``EmbeddingService`` (the product's code, into a
temporary DEEPCRITICAL_HOME), then every judged query is answered per mode:

- ``bm25``: ``EvidenceStore.search(mode="bm25")``; ``dense``: ``search(mode="dense")`` (exact cosine);
  ``hybrid``: ``search(mode="hybrid")`` (reciprocal rank fusion of the two);
- with ``all`` also ``dense-ann`` (``search_similar``, Chroma's HNSW index) and ``hybrid+mmr``
  (``select_for_judge``: the diverse top-10 the Judge gets; no Recall@100, it returns 10).

Corpus documents become Evidence with source "pubmed" (they are biomedical abstracts, read like PubMed
abstracts) but no PMID, since BEIR ids are not PMIDs: the citation URL is ``beir://<dataset>/<doc id>``,
so evidence ids are ``url:beir://…`` and map back to the corpus ids exactly.

Metrics (standard, as trec_eval computes them): nDCG@10 with graded gains from the qrels (gain = grade,
discount log2(rank + 1), ideal from all judged documents of the query); Recall@100 = judged relevant
(grade > 0) documents in the top 100 / all judged relevant. Means over queries that have judgments.
Indexing throughput (documents/s, model load excluded) is set beside the backend's raw ``encode`` on the
same title+abstract texts with the same batch size (``--skip-raw`` leaves that out and halves the time).
``--backend`` picks the embedding backend (``onnx``, float32, the default; ``onnx-int8``; ``torch``).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import logging
import math
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

import structlog

from deepcritical.config import load_settings
from deepcritical.evidence import EmbeddingService, EvidenceStore, ScoredEvidence
from deepcritical.evidence.embeddings import passage_text
from deepcritical.models import Citation, Evidence

MODES = ("bm25", "dense", "hybrid")
EXTRA_MODES = ("dense-ann", "hybrid+mmr")
Qrels = dict[str, dict[str, int]]


def read_corpus(data: Path) -> list[dict[str, str]]:
    with (data / "corpus.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def read_queries(data: Path) -> dict[str, str]:
    with (data / "queries.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return {str(row["_id"]): row["text"] for row in rows}


def read_qrels(path: Path) -> Qrels:
    qrels: Qrels = defaultdict(dict)
    with path.open(encoding="utf-8") as handle:
        reader = csv.reader(handle, delimiter="\t")
        for row in reader:
            if not row or row[0] == "query-id":
                continue
            qrels[row[0]][row[1]] = int(row[2])
    return dict(qrels)


def to_evidence(doc: dict[str, str], dataset: str) -> Evidence:
    text = (doc.get("text") or "").strip()
    title = (doc.get("title") or "").strip() or text[:120] or f"document {doc['_id']}"
    citation = Citation(source="pubmed", title=title[:500], url=f"beir://{dataset}/{doc['_id']}")
    return Evidence(content=text or title, citation=citation)


def ndcg_at(ranked: Sequence[str], judged: dict[str, int], k: int = 10) -> float:
    dcg = sum(judged.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]))
    ideal = sorted((grade for grade in judged.values() if grade > 0), reverse=True)[:k]
    idcg = sum(grade / math.log2(rank + 2) for rank, grade in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: Sequence[str], judged: dict[str, int], k: int = 100) -> float:
    relevant = {doc for doc, grade in judged.items() if grade > 0}
    return len(relevant.intersection(ranked[:k])) / len(relevant) if relevant else 0.0


async def timed(step: Callable[[], Coroutine[Any, Any, None]]) -> float:
    start = time.perf_counter()
    await step()
    return time.perf_counter() - start


async def run(args: argparse.Namespace) -> None:
    # The table is the output: the store's info and debug lines would drown it.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    corpus = read_corpus(args.data)
    queries = read_queries(args.data)
    qrels = read_qrels(args.qrels)
    judged_ids = [qid for qid in qrels if qid in queries][: args.limit_queries]
    evidence = [to_evidence(doc, args.data.name) for doc in corpus]
    doc_of = {item.id: doc["_id"] for item, doc in zip(evidence, corpus, strict=True)}
    modes = MODES + EXTRA_MODES if args.mode == "all" else (args.mode,)

    embeddings = EmbeddingService(batch_size=args.batch_size, backend=args.backend)
    encoder = embeddings.encoder  # loads it, outside both timings
    batch_size = embeddings.batch_size or encoder.batch_size
    texts = [passage_text(item.citation.title, item.content) for item in evidence]
    encoder.encode(embeddings.fit_to_window(texts[:batch_size]), batch_size)  # warm-up

    with tempfile.TemporaryDirectory(prefix="deepcritical-bench-") as home:
        settings = load_settings(home=home)
        store = await EvidenceStore.open(settings, embeddings, run_id=f"beir-{args.data.name}")

        # Chunk by chunk, alternating which goes first, so that load from elsewhere on the machine
        # falls on both measurements alike.
        raw_seconds = index_seconds = 0.0
        for number, start in enumerate(range(0, len(evidence), args.add_chunk)):
            chunk, chunk_texts = evidence[start : start + args.add_chunk], texts[start : start + args.add_chunk]

            async def raw(chunk_texts: list[str] = chunk_texts) -> None:
                encoder.encode(embeddings.fit_to_window(chunk_texts), batch_size)

            async def index(chunk: list[Evidence] = chunk) -> None:
                await store.add(chunk)

            raw_first = number % 2 == 0
            steps = (raw, index) if raw_first else (index, raw)
            for step in steps if not args.skip_raw else (index,):
                seconds = await timed(step)
                if step is raw:
                    raw_seconds += seconds
                else:
                    index_seconds += seconds
        stored = await store.count()

        searches: dict[str, Callable[[str], Coroutine[Any, Any, list[ScoredEvidence]]]] = {
            "bm25": lambda q: store.search(q, 100, mode="bm25"),
            "dense": lambda q: store.search(q, 100, mode="dense"),
            "hybrid": lambda q: store.search(q, 100, mode="hybrid"),
            "dense-ann": lambda q: store.search_similar(q, 100),
        }
        rows = []
        for mode in modes:
            ndcgs, recalls = [], []
            for qid in judged_ids:
                if mode == "hybrid+mmr":
                    ranked = [doc_of[item.id] for item in await store.select_for_judge(queries[qid], 10)]
                else:
                    ranked = [doc_of[hit.evidence.id] for hit in await searches[mode](queries[qid])]
                    recalls.append(recall_at(ranked, qrels[qid]))
                ndcgs.append(ndcg_at(ranked, qrels[qid]))
            recall = f"{sum(recalls) / len(recalls):.4f}" if recalls else "n/a"
            rows.append((mode, f"{sum(ndcgs) / len(ndcgs):.4f}", recall))
        await store.close()

    print(f"corpus: {args.data} ({len(corpus)} documents, {stored} stored); qrels: {args.qrels}")
    print(
        f"queries judged: {len(judged_ids)}; model: {embeddings.model_name}; backend: {embeddings.backend}; "
        f"batch size: {batch_size}"
    )
    print()
    print("| mode | nDCG@10 | Recall@100 |")
    print("|---|---|---|")
    for mode, ndcg, recall in rows:
        print(f"| {mode} | {ndcg} | {recall} |")
    print()
    index_rate = len(evidence) / index_seconds
    print("| indexing | documents/s | seconds |")
    print("|---|---|---|")
    if not args.skip_raw:
        raw_rate = len(texts) / raw_seconds
        print(f"| raw {embeddings.backend} encode | {raw_rate:.1f} | {raw_seconds:.1f} |")
    print(f"| EvidenceStore.add (embed + Chroma) | {index_rate:.1f} | {index_seconds:.1f} |")
    if not args.skip_raw:
        print(f"| ratio | {index_rate / raw_rate:.1%} | |")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, required=True, help="BEIR dataset folder (corpus.jsonl, queries.jsonl)")
    parser.add_argument("--qrels", type=Path, required=True, help="qrels TSV (query-id, corpus-id, score)")
    parser.add_argument("--mode", choices=(*MODES, "all"), default="all")
    parser.add_argument("--batch-size", type=int, default=None, help="embedding batch size (default: the backend's)")
    parser.add_argument("--backend", choices=("onnx", "onnx-int8", "torch"), default="onnx")
    parser.add_argument("--skip-raw", action="store_true", help="time EvidenceStore.add only, not raw encode too")
    parser.add_argument("--limit-queries", type=int, default=None, help="only the first N judged queries")
    parser.add_argument("--add-chunk", type=int, default=256, help="documents per EvidenceStore.add call")
    args = parser.parse_args(argv)
    for required in (args.data / "corpus.jsonl", args.data / "queries.jsonl", args.qrels):
        if not required.is_file():
            sys.exit(f"not found: {required}")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
