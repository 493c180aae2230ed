r"""Ingestion speed, passages per document, and whether a sentence from a document's body finds its passage.

    python bench/ingest.py --data ../shared/data/fulltext [--repeat 5]

Every PDF and JATS file under ``--data`` is read through ``documents.reader.read_files`` (the product's
path: one worker process, limits on, passages split), ``--repeat`` times; the figures are pages/s for
PDF and articles/s for JATS over the repeats (the worker's start is timed apart, once), and passages per
document.

With ``--store``, the passages are also embedded and written to a collection in a temporary home
(``evidence.document_files.add_file_documents``, what ``library add`` does after parsing): passages/s.

Retrieval: from each document, sentences of its body (not the title, abstract or a caption), one from
every third passage, at least 8 words, are asked as queries against all passages of all documents, with
the product's hybrid retrieval (``evidence.retrieval.HybridIndex``: BM25 and the bundled embedding model,
reciprocal rank fusion), each passage indexed as the library indexes it (document title, then the
passage). A hit is the sentence's own passage among the top 3. BM25 and dense alone are printed beside.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from deepcritical.documents.model import Document
from deepcritical.documents.reader import Limits, ParserWorker, files_under, read_file
from deepcritical.evidence import EmbeddingService
from deepcritical.evidence.embeddings import passage_text
from deepcritical.evidence.retrieval import HybridIndex, RetrievalMode

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_NOT_BODY = frozenset({"Title", "Abstract", "References"})
TOP = 3


def body_sentences(document: Document) -> list[tuple[int, str]]:
    """(passage position, sentence) for one sentence of every third body passage."""
    chosen: list[tuple[int, str]] = []
    body = [p for p in document.passages if p.kind == "paragraph" and p.section not in _NOT_BODY]
    for passage in body[::3]:
        sentences = [s for s in _SENTENCE.split(passage.text) if len(s.split()) >= 8]
        if sentences:
            chosen.append((passage.index, sentences[len(sentences) // 2]))
    return chosen


def store_figure(documents: list[Document]) -> None:
    """Passages/s through ``add_file_documents`` (embedding and the Chroma write) into a temporary home."""
    import tempfile

    from deepcritical.config import load_settings
    from deepcritical.evidence import chroma
    from deepcritical.evidence.document_files import add_file_documents
    from deepcritical.sources.fulltext import document_grade

    embeddings = EmbeddingService()
    embeddings.embed(["warm up"])  # the model's load is not storing
    with tempfile.TemporaryDirectory() as home:
        connection = chroma.connect(load_settings(home=Path(home)))
        try:
            started = time.perf_counter()
            add_file_documents(connection, embeddings, "bench", documents, document_grade)
            seconds = time.perf_counter() - started
        finally:
            connection.close()
    count = sum(len(document.passages) for document in documents)
    print(f"store (embed + write): {count / seconds:.1f} passages/s ({count} passages in {seconds:.1f} s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/fulltext"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--store", action="store_true", help="also time storing: embed and write every passage")
    args = parser.parse_args()
    paths, refused = files_under([args.data])
    paths = [path for path in paths if path.suffix.lower() in (".pdf", ".nxml", ".xml")]
    if not paths:
        print(f"no PDF or JATS files under {args.data}", file=sys.stderr)
        return 2
    limits = Limits()
    with ParserWorker(limits) as worker:
        started = time.perf_counter()
        worker.run(len, "")  # the worker's start, timed apart
        startup = time.perf_counter() - started
        seconds: dict[str, float] = defaultdict(float)
        units: dict[str, int] = defaultdict(int)
        documents: list[Document] = []
        for round_ in range(args.repeat):
            for path in paths:
                result = read_file(path, limits, worker)
                if result.error:
                    print(result.line, file=sys.stderr)
                    continue
                kind = "pdf" if path.suffix.lower() == ".pdf" else "jats"
                seconds[kind] += result.seconds
                units[kind] += sum(d.pages or 0 for d in result.documents) if kind == "pdf" else len(result.documents)
                if round_ == 0:
                    documents.extend(result.documents)
    print(f"files: {len(paths)} ({len(refused)} refused); worker start {startup:.2f} s (once per `library add`)")
    if units["pdf"]:
        print(
            f"PDF:  {units['pdf'] / seconds['pdf']:.1f} pages/s ({units['pdf'] // args.repeat} pages x {args.repeat})"
        )
    if units["jats"]:
        rate = units["jats"] / seconds["jats"]
        print(f"JATS: {rate:.1f} articles/s ({units['jats'] // args.repeat} articles x {args.repeat})")
    for form in ("pdf", "jats"):
        counts = [len(d.passages) for d in documents if d.format == form]
        if counts:
            print(
                f"passages per {form} document: mean {statistics.mean(counts):.1f}, "
                f"min {min(counts)}, max {max(counts)}; mean length "
                f"{statistics.mean(len(p.text) for d in documents if d.format == form for p in d.passages):.0f} chars"
            )

    if args.store:
        store_figure(documents)
    passages = [(document, passage) for document in documents for passage in document.passages]
    texts = [passage_text(document.meta.title, passage.text) for document, passage in passages]
    embeddings = EmbeddingService()
    index = HybridIndex(texts, embeddings.embed(texts))
    position = {(document.id, passage.index): i for i, (document, passage) in enumerate(passages)}
    queries = [(position[(d.id, index_)], sentence) for d in documents for index_, sentence in body_sentences(d)]
    vectors = embeddings.embed([sentence for _, sentence in queries])
    modes: tuple[RetrievalMode, ...] = ("hybrid", "bm25", "dense")
    print(f"retrieval: {len(queries)} body sentences from {len(documents)} documents, {len(passages)} passages")
    for mode in modes:
        hits = sum(
            expected in [i for i, _ in index.top(sentence, vector, TOP, mode)]
            for (expected, sentence), vector in zip(queries, vectors, strict=True)
        )
        print(f"  {mode:6} own passage in top {TOP}: {hits}/{len(queries)} = {hits / len(queries):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
