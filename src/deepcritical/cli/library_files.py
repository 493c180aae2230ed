"""``deepcritical library add PATH...`` for files and folders (PDF, JATS, BioC, RIS, BibTeX, CSL-JSON, Markdown,
text, HTML): a progress bar, one line on stderr for each file that cannot be read (which file, why), the
others added. The exit code is 1 when some file could not be read (what could be read is kept)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

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

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[unit]}"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[rate]}"),
    )
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task("adding", total=None, unit="files", rate="")
        records: dict[Path, TaskID] = {}

        def started(total: int) -> None:
            bar.update(task, total=total)

        def stored(path: Path, done: int, total: int) -> None:
            # A file of many records (a RIS export) gets a line of its own: records stored, and how fast.
            if total <= 1:
                return
            if path not in records:
                records[path] = bar.add_task(shown(path.name), total=total, unit="records", rate="")
            elapsed = bar.tasks[records[path]].elapsed or 0.0
            rate = f"{done / elapsed:,.0f} records/s" if elapsed > 1 else ""
            bar.update(records[path], completed=done, total=total, rate=rate)

        def done(result: FileResult) -> None:
            if result.error is not None:
                bar.console.print(one_line(result.line), markup=False, highlight=False, soft_wrap=True)
            if result.path in records:
                bar.remove_task(records.pop(result.path))
            bar.advance(task)

        summary = add_paths(paths, settings, connection, name, on_file=done, on_start=started, on_records=stored)
    out.print(f"{shown(summary.line)} to the collection {shown(name)}", highlight=False)
    return len(summary.failures)
