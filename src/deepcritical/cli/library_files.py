"""``deepcritical library add PATH...`` for files and folders (PDF, JATS, BioC, RIS, BibTeX, CSL-JSON, Markdown,
text, HTML): a progress bar, one line on stderr for each file that cannot be read (which file, why), the
others added. The exit code is 1 when some file could not be read (what could be read is kept)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from deepcritical.cli.terminal import shown
from deepcritical.text import one_line

if TYPE_CHECKING:
    from deepcritical.documents.reader import FileResult
    from deepcritical.service.library import Library
    from deepcritical.service.library_add import EmbedWhen


def add_files(
    paths: Sequence[Path],
    library: Library,
    name: str,
    out: Console,
    err: Console,
    embed: EmbedWhen = "auto",
) -> int:
    """Read, split, embed and store every file under ``paths``; returns how many files failed. A large export
    is stored first and embedded afterwards in the same command (``auto``); with ``later`` its passages are
    left without their vector, counted, with the command that embeds them."""
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

        embedding: list[TaskID] = []

        def embedded(done: int, total: int) -> None:
            if not embedding:
                embedding.append(bar.add_task("embedding", total=total, unit="passages", rate=""))
            bar.update(embedding[0], completed=done, total=total)

        summary = add_paths(
            paths,
            library.resources,
            name,
            on_file=done,
            on_start=started,
            on_records=stored,
            embed=embed,
            on_embedded=embedded,
        )
    out.print(f"collection {shown(name)}: {shown(summary.line)}", highlight=False)
    _embed_or_say_pending(summary.pending, library, name, out, err, embed)
    return len(summary.failures)


def _embed_or_say_pending(
    pending: int, library: Library, name: str, out: Console, err: Console, embed: EmbedWhen
) -> None:
    """What an add left without vectors: embedded now (``auto``), else counted with the command that embeds it."""
    if pending and embed == "auto":
        # Stored first, at the store's pace, so that a stop loses nothing and searches find the records by
        # their words at once; then embedded behind in this same command, so that a plain add ends with
        # every passage found by meaning, as a small one does.
        err.print(
            f"{pending} passage(s) stored; embedding them now (Ctrl+C stops: what is stored is kept, and "
            f"`deepcritical library embed --collection {shown(name)}` finishes the rest)",
            markup=False,
            highlight=False,
        )
        embed_collection(library, name, out, err)
    elif pending:
        err.print(
            f"{pending} passage(s) are stored but not embedded yet: searches find them by their words and "
            f"identifiers now, by meaning once `deepcritical library embed --collection {shown(name)}` has run "
            "(it can be stopped and run again).",
            markup=False,
            highlight=False,
        )


def embed_collection(library: Library, name: str, out: Console, err: Console) -> int:
    """``library embed``: every pending passage of the collection given its vector, with a progress bar and
    the rate; returns how many were embedded. What is embedded before a stop (Ctrl+C) is kept."""
    import time

    waiting = library.pending(name)
    if waiting == 0:
        out.print(f"every passage of the collection {shown(name)} is embedded", highlight=False)
        return 0
    total = waiting or 0
    columns = (TextColumn("embedding"), BarColumn(), MofNCompleteColumn(), TextColumn("passages"), TimeElapsedColumn())
    started = time.monotonic()
    progress = [0]

    def shown_progress(done: int, total: int) -> None:
        progress[0] = done
        bar.update(task, completed=done, total=total)

    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task("embed", total=total)
        try:
            done = library.embed_pending(name, shown_progress)
        except KeyboardInterrupt:
            bar.stop()
            err.print(
                f"stopped: {progress[0]} of {total} passage(s) embedded and kept; run `deepcritical library embed "
                f"--collection {shown(name)}` again for the rest",
                markup=False,
                highlight=False,
            )
            raise typer.Exit(130) from None
    seconds = max(time.monotonic() - started, 1e-9)
    out.print(
        f"{done} passage(s) of the collection {shown(name)} embedded in {seconds:.0f} s ({done / seconds:.1f}/s)",
        highlight=False,
    )
    return done
