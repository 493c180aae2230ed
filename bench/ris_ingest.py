r"""How fast a large RIS export (a Zotero or EndNote library) is stored by ``library add``, end to end.

    python bench/ris_ingest.py [--records 20000] [--short] [--ceiling 300]

Writes a RIS file of ``--records`` records as reference managers export them (``bench/ris_records.py``:
authors, journal, identifiers, keywords and, for 7 in 8, a structured abstract of 150 to 320 words; with
``--short``, a one-sentence abstract instead, as in the first round's figures) into a temporary folder,
then runs what ``library add FILE.ris`` runs (``service.library_add.add_paths``: parts parsed in the worker,
embedded with the bundled model, written to Chroma in a temporary home) and prints: the seconds to the first
stored part, records/s and passages/s over the whole file, the peak memory of the adding process and of the
parser worker, and, for the ceiling, the embedding model alone on the passages of the first ``--ceiling``
records (records/s it allows, at the measured passages per record). Nothing is kept.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from deepcritical.config import load_settings
from deepcritical.documents.reader import Limits, read_file
from deepcritical.evidence import EmbeddingService, chroma
from deepcritical.evidence.embeddings import passage_text
from deepcritical.service.library_add import add_paths
from ris_records import records  # type: ignore[import-not-found]


def short_records(count: int) -> str:
    return "".join(
        f"TY  - JOUR\nTI  - Record {n}: metformin and dementia\nN1  - PMID: {30_000_000 + n}\n"
        f"AB  - We followed {n + 40} adults on metformin for dementia.\nER  - \n\n"
        for n in range(count)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--short", action="store_true", help="one-sentence abstracts (the first round's file)")
    parser.add_argument("--ceiling", type=int, default=300, help="records whose passages time the model alone")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "library.ris"
        text = short_records(arguments.records) if arguments.short else "".join(records(arguments.records))
        path.write_text(text, encoding="utf-8")
        print(f"file: {arguments.records:,} records, {path.stat().st_size / 2**20:.1f} MB")
        settings = load_settings(home=Path(folder) / "home")
        embeddings = EmbeddingService.for_settings(settings)
        embeddings.embed(["warm up"])  # the model's load is not storing
        connection = chroma.connect(settings)
        first: list[float] = []
        started = time.perf_counter()

        def stored(_path: Path, done: int, total: int) -> None:
            if not first:
                first.append(time.perf_counter() - started)
            if done % 2_000 < 250 or done == total:
                elapsed = time.perf_counter() - started
                print(f"  {done:,} of {total:,} records stored, {elapsed:.0f} s, {done / elapsed:.1f} records/s")

        try:
            summary = add_paths([path], settings, connection, "bench", on_records=stored)
        finally:
            connection.close()
        seconds = time.perf_counter() - started
        assert not summary.failures, summary.failures
        stored_records = summary.added + summary.replaced
        print(f"first part stored after {first[0]:.1f} s")
        print(
            f"stored: {stored_records:,} records, {summary.passages:,} passages in {seconds:.0f} s: "
            f"{stored_records / seconds:.1f} records/s, {summary.passages / seconds:.1f} passages/s"
        )
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"peak memory: {own:.0f} MB adding, {worker:.0f} MB the parser worker")
        sample = path.with_name("sample.ris")
        chosen = min(arguments.ceiling, arguments.records)  # the same seed: the file's first records
        sample.write_text(short_records(chosen) if arguments.short else "".join(records(chosen)), encoding="utf-8")
        documents = read_file(sample, Limits()).documents
    texts = [passage_text(document.meta.title, passage.text) for document in documents for passage in document.passages]
    started = time.perf_counter()
    EmbeddingService().embed(texts)
    alone = time.perf_counter() - started
    per_record = len(texts) / len(documents)
    print(
        f"the embedding model alone: {len(texts) / alone:.1f} passages/s on {len(texts)} passages "
        f"({per_record:.2f} per record): at most {len(texts) / alone / per_record:.1f} records/s here"
    )


if __name__ == "__main__":
    main()
