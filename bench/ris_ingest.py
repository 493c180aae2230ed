r"""How fast a large RIS export (a Zotero or EndNote library) is stored: records per second, end to end.

    python bench/ris_ingest.py [--records 20000] [--measure 2000]

Writes a RIS file of ``--records`` synthetic records (title, 2-3 sentence abstract, PMID for half of them,
as a reference manager exports them), then times what ``library add`` does with it in a temporary home:
parsing in the parser worker (``documents.reader.read_files``) and storing every record with its passages
(``evidence.document_files.add_file_documents``: embedded with the bundled model and written to Chroma,
timed by ``bench/ingest.py``'s ``store_figure``). Prints the parse rate over the whole file and the store
rate over the first ``--measure`` records (one passage each, so passages/s is records/s; the rate is flat,
and the whole file takes minutes at the old rate), and, for the ceiling, the embedding model alone on the
same passages.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from deepcritical.documents.reader import Limits, read_files
from deepcritical.evidence import EmbeddingService
from ingest import store_figure  # type: ignore[import-not-found]

WORDS = [
    "metformin",
    "statin",
    "dementia",
    "cohort",
    "trial",
    "placebo",
    "mortality",
    "sepsis",
    "nausea",
    "adults",
    "risk",
    "outcome",
]


def ris(records: int) -> str:
    lines = []
    for number in range(records):
        words = [WORDS[(number * 7 + k) % len(WORDS)] for k in range(12)]
        lines += ["TY  - JOUR", f"TI  - Record {number}: {' '.join(words[:6])}", f"PY  - {1990 + number % 35}"]
        if number % 2:
            lines.append(f"N1  - PMID: {30000000 + number}")
        abstract = f"We followed {number + 40} adults. " + " ".join(words) + ". " + " ".join(reversed(words)) + "."
        lines += [f"AB  - {abstract}", "ER  - ", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--measure", type=int, default=2_000)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "library.ris"
        path.write_text(ris(arguments.records), encoding="utf-8")
        started = time.perf_counter()
        (result,) = list(read_files([path], Limits()))
        parsed = time.perf_counter() - started
        assert result.error is None, result.error
        print(
            f"records: {len(result.documents)}; parsed in the worker: {len(result.documents) / parsed:,.0f} records/s"
        )
        chosen = result.documents[: arguments.measure]
        print(f"passages per record: {sum(len(d.passages) for d in chosen) / len(chosen):.2f}")
        store_figure(chosen)  # bench/ingest.py's: what library add does after parsing, timed
    embeddings = EmbeddingService()
    texts = [passage.text for document in chosen for passage in document.passages]
    started = time.perf_counter()
    embeddings.embed(texts)
    alone = time.perf_counter() - started
    print(f"the embedding model alone on those passages: {len(texts) / alone:,.0f} passages/s (the ceiling)")


if __name__ == "__main__":
    main()
