r"""How fast a large RIS export (a Zotero or EndNote library) is stored by ``library add``, end to end.

    python bench/ris_ingest.py [--records 20000] [--short] [--embed auto|now|later] [--baseline 500]
                               [--behind 90] [--ceiling 300]

Writes a RIS file of ``--records`` records as reference managers export them (``bench/ris_records.py``:
authors, journal, identifiers, keywords and, for 7 in 8, a structured abstract of 150 to 320 words; with
``--short``, a one-sentence abstract instead, as in the first round's figures) into a temporary folder,
then runs what ``library add FILE.ris`` runs (``service.library_add.add_paths``: parts parsed in the worker,
stored in Chroma in a temporary home; with ``--embed auto``, the default, a file this large is stored first and
embedded behind) and prints: the seconds to the first stored part, records/s and passages/s over the whole
file, the load average beside each figure (the machine is shared), the peak memory of the adding process and
of the parser worker. Then, for comparison in the same minutes, ``--baseline`` records of the same file added
with ``--embed now`` (embedded as stored: the previous behaviour); then ``library embed`` (``evidence.pending``)
for ``--behind`` seconds on the stored file (passages/s and records/s of the embedding behind; stopped there,
as a user's Ctrl+C, which keeps what it embedded); and, for the ceiling, the embedding model alone on the
passages of the first ``--ceiling`` records. Nothing is kept.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import tempfile
import time
from pathlib import Path

from deepcritical.config import Settings, load_settings
from deepcritical.documents.reader import Limits, read_file
from deepcritical.evidence import EmbeddingService, chroma
from deepcritical.evidence.embeddings import CACHE_ENV_VAR, passage_text
from deepcritical.evidence.pending import count_pending, embed_pending
from deepcritical.service.library_add import EMBED_WHEN, AddSummary, EmbedWhen, add_paths
from ris_records import records  # type: ignore[import-not-found]


def short_records(count: int) -> str:
    return "".join(
        f"TY  - JOUR\nTI  - Record {n}: metformin and dementia\nN1  - PMID: {30_000_000 + n}\n"
        f"AB  - We followed {n + 40} adults on metformin for dementia.\nER  - \n\n"
        for n in range(count)
    )


def load() -> str:
    return "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


class TimeUpError(Exception):
    """Ends the embedding behind after its time (as a user's Ctrl+C would)."""


def add(path: Path, settings: Settings, name: str, embed: EmbedWhen, label: str) -> tuple[AddSummary, float]:
    """``library add`` of ``path``: progress every 2,000 records, then the rate; returns the summary and seconds."""
    connection = chroma.connect(settings)
    first: list[float] = []
    started = time.perf_counter()

    def stored(_path: Path, done: int, total: int) -> None:
        if not first:
            first.append(time.perf_counter() - started)
        if done % 2_000 < 250 or done == total:
            elapsed = time.perf_counter() - started
            print(f"  {done:,} of {total:,} records stored, {elapsed:.0f} s, {done / elapsed:.1f} records/s, {load()}")

    cpu = cpu_seconds()
    try:
        summary = add_paths([path], settings, connection, name, on_records=stored, embed=embed)
    finally:
        connection.close()
    seconds = time.perf_counter() - started
    cpu = cpu_seconds() - cpu
    assert not summary.failures, summary.failures
    count = summary.added + summary.replaced
    print(
        f"{label}: {count:,} records, {summary.passages:,} passages ({summary.pending:,} not embedded yet) in "
        f"{seconds:.0f} s: {count / seconds:.1f} records/s, {summary.passages / seconds:.1f} passages/s "
        f"(first part after {first[0]:.1f} s; {count / cpu:.1f} records per CPU second, adding process and "
        f"parser worker; {load()})"
    )
    return summary, seconds


def cpu_seconds() -> float:
    """CPU seconds of this process and its ended children (the parser worker ends with each add)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--short", action="store_true", help="one-sentence abstracts (the first round's file)")
    parser.add_argument("--embed", choices=EMBED_WHEN, default="auto", help="the add's --embed")
    parser.add_argument("--baseline", type=int, default=500, help="records added with --embed now to compare (0: not)")
    parser.add_argument("--behind", type=float, default=90.0, help="seconds of `library embed` after the add (0: not)")
    parser.add_argument("--ceiling", type=int, default=300, help="records whose passages time the model alone (0: not)")
    arguments = parser.parse_args()

    def export(count: int) -> str:  # the same seed: a smaller file is the first records of the larger one
        return short_records(count) if arguments.short else "".join(records(count))

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "library.ris"
        path.write_text(export(arguments.records), encoding="utf-8")
        print(f"file: {arguments.records:,} records, {path.stat().st_size / 2**20:.1f} MB; {load()}")
        # A vector cache of its own: the per-user one may hold these texts' vectors from an earlier run.
        os.environ[CACHE_ENV_VAR] = str(Path(folder) / "models")
        settings = load_settings(home=Path(folder) / "home")
        embeddings = EmbeddingService.for_settings(settings)
        embeddings.embed(["warm up"])  # the model's load is not storing
        summary, _ = add(path, settings, "bench", arguments.embed, f"stored (--embed {arguments.embed})")
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"peak memory: {own:.0f} MB adding, {worker:.0f} MB the parser worker")
        if arguments.baseline:
            sample = path.with_name("baseline.ris")
            sample.write_text(export(min(arguments.baseline, arguments.records)), encoding="utf-8")
            label = "baseline, the same minutes (--embed now, embedded as stored; a collection of its own)"
            add(sample, settings, "baseline", "now", label)
        if arguments.behind > 0 and summary.pending:
            connection = chroma.connect(settings)
            started = time.perf_counter()
            reached = [0]

            def progress(done: int, total: int) -> None:
                reached[0] = done
                if time.perf_counter() - started > arguments.behind:
                    raise TimeUpError

            with contextlib.suppress(TimeUpError):
                embed_pending(connection, embeddings, "bench", on_progress=progress)
            seconds = time.perf_counter() - started
            left = count_pending(connection, "bench")
            connection.close()
            per_record = summary.passages / max(1, summary.added + summary.replaced)
            print(
                f"embedded behind (`library embed`): {reached[0]:,} passages in {seconds:.0f} s, "
                f"{reached[0] / seconds:.1f} passages/s = {reached[0] / seconds / per_record:.1f} records/s; "
                f"{left:,} left for the next `library embed` ({load()})"
            )
        if not arguments.ceiling:
            return
        sample = path.with_name("sample.ris")
        sample.write_text(export(min(arguments.ceiling, arguments.records)), encoding="utf-8")
        documents = read_file(sample, Limits()).documents
    texts = [passage_text(document.meta.title, passage.text) for document in documents for passage in document.passages]
    started = time.perf_counter()
    EmbeddingService().embed(texts)
    alone = time.perf_counter() - started
    per_record = len(texts) / len(documents)
    print(
        f"the embedding model alone: {len(texts) / alone:.1f} passages/s on {len(texts)} passages "
        f"({per_record:.2f} per record): at most {len(texts) / alone / per_record:.1f} records/s here ({load()})"
    )


if __name__ == "__main__":
    main()
