"""``deepcritical library add PATH...`` for files and folders (PDF, JATS, BioC, RIS, BibTeX, CSL-JSON, Markdown,
text, HTML): a progress bar, one line on stderr for each file that cannot be read (which file, why), the
others added. The exit code is 1 when some file could not be read (what could be read is kept)."""

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
    from deepcritical.documents.reader import FileResult
    from deepcritical.evidence.chroma import Connection


def add_files(
    paths: Sequence[Path], settings: Settings, connection: Connection, name: str, out: Console, err: Console
) -> int:
    """Read, split, embed and store every file under ``paths``; returns how many files failed."""
    from deepcritical.service.library_add import add_paths

    columns = (TextColumn("adding"), BarColumn(), MofNCompleteColumn(), TextColumn("files"), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task("add", total=None)

        def started(total: int) -> None:
            bar.update(task, total=total)

        def done(result: FileResult) -> None:
            if result.error is not None:
                bar.console.print(one_line(result.line), markup=False, highlight=False, soft_wrap=True)
            bar.advance(task)

        summary = add_paths(paths, settings, connection, name, on_file=done, on_start=started)
    out.print(f"{shown(summary.line)} to the collection {shown(name)}", highlight=False)
    return len(summary.failures)
