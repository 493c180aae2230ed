"""``deepcritical library add PATH...`` for files and folders (PDF, JATS, BioC, RIS, BibTeX, CSL-JSON, Markdown,
text, HTML), ``library documents`` and ``library remove``: the document side of a library collection.

Each file is read in a worker process under the limits (DEEPCRITICAL_LIBRARY_MAX_FILE_MB, _MAX_PAGES,
_PARSE_SECONDS); a file that cannot be read gets one line on stderr (which file, why) and the others go
on. The exit code is 0 when every file was read, 1 when some could not be (what could be read is kept).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from deepcritical.cli.terminal import shown
from deepcritical.text import one_line

if TYPE_CHECKING:
    from deepcritical.config import Settings
    from deepcritical.evidence.chroma import Connection


def add_files(
    paths: Sequence[Path], settings: Settings, connection: Connection, name: str, out: Console, err: Console
) -> int:
    """Read, split, embed and store every file under ``paths``; returns how many files failed."""
    from deepcritical.documents.reader import files_under, limits_from, read_files
    from deepcritical.evidence import EmbeddingService
    from deepcritical.evidence.document_files import add_file_documents
    from deepcritical.sources.fulltext import document_grade

    files, refused = files_under(paths)
    for result in refused:
        err.print(one_line(result.line), markup=False, highlight=False, soft_wrap=True)
    embeddings = EmbeddingService(settings.embedding_model)
    counts = {"added": 0, "unchanged": 0, "replaced": 0}
    passages = 0
    failed = len(refused)
    columns = (TextColumn("adding"), BarColumn(), MofNCompleteColumn(), TextColumn("files"), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task("add", total=len(files))
        for result in read_files(files, limits_from(settings)):
            if result.error is not None:
                failed += 1
                bar.console.print(one_line(result.line), markup=False, highlight=False, soft_wrap=True)
            else:
                outcome = add_file_documents(connection, embeddings, name, result.documents, document_grade)
                for document in result.documents:
                    counts[outcome[document.id]] += 1
                    if outcome[document.id] != "unchanged":
                        passages += len(document.passages)
            bar.advance(task)
    out.print(
        f"{len(files) - (failed - len(refused))} of {len(files) + len(refused)} file(s) read: "
        f"{counts['added']} document(s) added, {counts['replaced']} updated, {counts['unchanged']} unchanged; "
        f"{passages} passage(s) written to the collection {shown(name)}",
        highlight=False,
    )
    return failed
