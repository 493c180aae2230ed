"""``deepcritical library``: what the evidence store holds, dropping old run collections, exporting it.

The store modules (Chroma) are imported inside the commands, so that ``deepcritical --help`` and the
other commands start without them."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from deepcritical.cli.common import err, out
from deepcritical.cli.terminal import shown
from deepcritical.errors import ConfigError, DeepCriticalError, DocumentError
from deepcritical.options import MIN_RETENTION, parse_duration

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from deepcritical.config import Settings
    from deepcritical.evidence.library import CollectionInfo
    from deepcritical.models import Evidence
    from deepcritical.service.library import Library

library_app = typer.Typer(
    help="The evidence store and your documents: what it holds, files added, old run collections dropped, exports.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
CollectionOption = Annotated[
    str | None, typer.Option("--collection", help="The collection (default DEEPCRITICAL_LIBRARY_COLLECTION).")
]


@library_app.callback()
def _quiet_logs() -> None:
    # Progress and results are the commands' own lines; the modules' logs (embedding, store) stay out of them.
    from deepcritical.logs import configure_logging

    configure_logging()


@contextmanager
def _store(settings: Settings | None = None) -> Iterator[Library]:
    """The library on the command's resources (``settings``, else the environment's), their store connection
    open; every failure inside becomes one line and an exit code."""
    from deepcritical.cli.common import EXIT_FAILED, fail, settings_from
    from deepcritical.cli.research import check_store_directory
    from deepcritical.evidence.resources import Resources
    from deepcritical.service.library import Library

    settings = settings or settings_from()
    try:
        check_store_directory(settings)
    except ConfigError as error:
        fail(str(error))
    resources = Resources(settings)
    try:
        connection = resources.connection()
    except DeepCriticalError as error:
        fail(str(error), EXIT_FAILED)
    try:
        yield Library(resources)
    except typer.Exit:
        raise
    except ConfigError as error:
        fail(str(error))
    except DeepCriticalError as error:
        fail(str(error), EXIT_FAILED)
    except Exception as error:  # Chroma's own errors (a collection that is not there, a server error)
        fail(f"{connection.where}: {error}", EXIT_FAILED)
    finally:
        resources.close()


def _when(info: CollectionInfo) -> str:
    return f"{info.created:%Y-%m-%d %H:%M} UTC" if info.created else "unknown"


def _info_json(info: CollectionInfo) -> dict[str, Any]:
    return {"name": info.name, "created": info.created.isoformat() if info.created else None, "items": info.items}


@library_app.command()
def stats(as_json: AsJson = False) -> None:
    """How many run collections and items the store holds, and its size on disk."""
    with _store() as library:
        found = library.stats()
    payload = {
        "where": found.where,
        "run_collections": len(found.runs),
        "run_items": found.run_items,
        "libraries": [_info_json(info) for info in found.libraries],
        "oldest_run": _info_json(found.runs[0]) if found.runs else None,
        "newest_run": _info_json(found.runs[-1]) if found.runs else None,
        "disk_bytes": found.disk_bytes,
    }
    if as_json:
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return
    out.print(f"store: {shown(found.where)}", highlight=False)
    out.print(f"run collections: {len(found.runs)} ({found.run_items} items)", highlight=False)
    for info in found.libraries:
        out.print(f"{shown(info.name)}: {info.items} items", highlight=False)
    if found.runs:
        out.print(f"oldest run: {_when(found.runs[0])}; newest run: {_when(found.runs[-1])}", highlight=False)
    if found.disk_bytes is not None:
        out.print(f"on disk: {found.disk_bytes / 1e6:.1f} MB", highlight=False)


@library_app.command("list")
def list_collections(as_json: AsJson = False) -> None:
    """Every collection, oldest first: run collections (one per run or search) and the libraries."""
    with _store() as library:
        found = library.collections()
    if as_json:
        sys.stdout.write(json.dumps([_info_json(info) for info in found], indent=2) + "\n")
        return
    table = Table(show_lines=False)
    for column in ("collection", "created", "items"):
        table.add_column(column, overflow="fold")
    for info in found:
        table.add_row(shown(info.name), _when(info), str(info.items))
    out.print(table)


@library_app.command()
def prune(
    older_than: Annotated[
        str | None,
        typer.Option("--older-than", help="e.g. 30d, 12h, 2w (default: DEEPCRITICAL_RETENTION)."),
    ] = None,
) -> None:
    """Delete run collections older than a duration, killed runs' included. The libraries keep every item."""
    from deepcritical.cli.common import fail

    with _store() as library:
        age = _age(older_than, library.resources.settings.retention)
        if age is None:
            fail("DEEPCRITICAL_RETENTION is 'never': give --older-than (e.g. --older-than 30d)")
        removed = library.prune(age)
    for info in removed:
        out.print(f"removed {shown(info.name)} ({info.items} items, created {_when(info)})", highlight=False)
    out.print(f"{len(removed)} run collection(s) removed", highlight=False)


def _age(option: str | None, retention: timedelta | None) -> timedelta | None:
    if option is None:
        return retention
    try:
        age = parse_duration(option)
    except ValueError as error:
        raise ConfigError(f"--older-than: {error}") from error
    if age is None:
        raise ConfigError("--older-than: give a duration such as 30d; to keep everything, do not prune")
    if age < MIN_RETENTION:
        # The same floor as DEEPCRITICAL_RETENTION: a shorter age could take a running run's collection.
        raise ConfigError(f"--older-than {option}: use at least 1h (running runs' collections are never pruned)")
    return age


@library_app.command()
def export(
    run: Annotated[str | None, typer.Option("--run", help="Export this run's collection instead (a run id).")] = None,
    demo: Annotated[bool, typer.Option("--demo", help="Export the demo library (synthetic evidence).")] = False,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write to this file instead of stdout.")] = None,
    collection: Annotated[
        str | None,
        typer.Option("--collection", help="Export this document collection's passages instead (`library add`)."),
    ] = None,
) -> None:
    """Every evidence item of the library (or of one run, or every passage of a document collection, with
    its section, page and offsets) as JSON Lines: one Evidence object per line."""
    with _store() as library:
        name, items = library.export(collection=collection, run=run, demo=demo)
        if out_file is None:
            try:
                count = _write_lines(items, sys.stdout.write)
                sys.stdout.flush()
            except BrokenPipeError:  # the reader stopped early (`| head`): not an error
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return
        else:
            try:
                with out_file.open("w", encoding="utf-8") as target:
                    count = _write_lines(items, target.write)
            except OSError as error:
                raise ConfigError(f"--out {out_file}: cannot write there ({error.strerror or error})") from error
    err.print(f"exported {count} item(s) from {shown(name)}", highlight=False)


def _write_lines(items: Iterator[Evidence], write: Callable[[str], object]) -> int:
    count = 0
    for item in items:
        write(item.model_dump_json() + "\n")
        count += 1
    return count


@library_app.command()
def add(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Files or folders (read recursively): PDF, JATS (.nxml/.xml), BioC, RIS, BibTeX, CSL-JSON, "
            "Markdown, text, HTML; or a JSON Lines file of documents: _id, title, text, metadata (BEIR)."
        ),
    ],
    collection: Annotated[
        str | None,
        typer.Option("--collection", help="The collection to add to (default DEEPCRITICAL_LIBRARY_COLLECTION)."),
    ] = None,
    embed: Annotated[
        str,
        typer.Option(
            "--embed",
            help="When passages get their vectors: auto (an export of more than 250 records is stored first, then "
            "embedded by this command; else as stored), now (each part as it is stored), later (`library embed`).",
        ),
    ] = "auto",
) -> None:
    """Add documents to a local collection, which the `library` source searches (`--sources library`).

    Re-adding a file changes nothing; an updated file replaces its passages. A file that cannot be read is
    named with the reason, the others are added, and the exit code is 1. A large export is stored at once and
    then embedded; until its vectors are in (or after a stop, until `library embed` has run) searches find its
    records by their words, not their meaning."""
    from rich.progress import BarColumn, Progress, TextColumn

    from deepcritical.cli.common import EXIT_FAILED, fail, settings_from
    from deepcritical.cli.library_files import add_files
    from deepcritical.documents.reader import limits_from
    from deepcritical.service.library_add import EMBED_WHEN, corpus_parts
    from deepcritical.text import one_line

    if embed not in EMBED_WHEN:
        fail(f"--embed {embed!r} is not one of {', '.join(EMBED_WHEN)}")
    chosen = settings_from(library_collection=collection)  # a bad name fails here, naming the variable
    name = chosen.library_collection
    jsonl = [path for path in paths if path.suffix.lower() == ".jsonl"]
    others = [path for path in paths if path.suffix.lower() != ".jsonl"]
    for file in jsonl:
        if not file.is_file():
            fail(f"{file}: no such file")
    not_read: list[str] = []
    with _store(chosen) as library:
        for file in jsonl:
            columns = (TextColumn("adding"), BarColumn(), TextColumn("{task.completed} passages"))
            count = 0
            with Progress(*columns, console=err) as bar:
                task = bar.add_task("add", total=None)
                try:
                    # Part by part: each part's passages are stored before the next part is read.
                    for part in corpus_parts(file, limits_from(chosen)):
                        count += library.add_corpus_part(name, part, partial(_advance, bar, task, count))
                except (DocumentError, ConfigError) as error:  # this file alone; the others are still added
                    kept = f" ({count} passage(s) before it stored)" if count else ""
                    reason = str(error).removeprefix(f"{file}: ").removeprefix(f"{file}, ")
                    err.print(one_line(f"{file}: {reason}{kept}"), markup=False, soft_wrap=True)
                    not_read.append(str(file))
                    continue
            out.print(f"{count} passage(s) added to the collection {shown(name)}", highlight=False)
        failed = add_files(others, library, name, out, err, embed) if others else 0
    if failed or not_read:
        files = f"{len(not_read) + failed} file(s) not read (named above)"
        err.print(f"error: {files}; the others were added", markup=False, highlight=False)
        raise typer.Exit(EXIT_FAILED)


def _advance(bar: Progress, task: TaskID, before: int, done: int) -> None:
    bar.update(task, completed=before + done)


@library_app.command("embed")
def embed_pending(
    collection: CollectionOption = None,
) -> None:
    """Give the passages that `library add` stored without their vectors (a large export) their vectors, so
    that searches find them by meaning too. Stopped (Ctrl+C), it keeps what it embedded; run it again."""
    from deepcritical.cli.common import settings_from
    from deepcritical.cli.library_files import embed_collection

    chosen = settings_from(library_collection=collection)
    with _store(chosen) as library:
        embed_collection(library, chosen.library_collection, out, err)


@library_app.command("documents")
def list_documents(
    collection: CollectionOption = None,
    as_json: AsJson = False,
) -> None:
    """The documents of a collection: id, format, passages (and how many wait for their vectors), full text or
    not, title, file."""
    from deepcritical.cli.common import settings_from

    name = settings_from(library_collection=collection).library_collection
    with _store() as library:
        listing = library.listing(name)
    if as_json:
        out.print_json(listing.model_dump_json())
        return
    found = listing.documents
    waiting = sum(d.passages_not_embedded for d in found)
    note = f"; {waiting} passage(s) not embedded yet (`deepcritical library embed`)" if waiting else ""
    table = Table(title=f"Documents in {shown(name)}: {len(found)}{note}", title_justify="left")
    for column in ("id", "format", "passages", "full text", "title"):
        table.add_column(column, overflow="fold")
    for d in found:
        table.add_row(shown(d.id), d.format, str(d.passages), "yes" if d.full_text else "no", shown(d.title[:80]))
    out.print(table)


@library_app.command()
def search(
    query: Annotated[str, typer.Argument(help="Keywords or a short question.")],
    collection: CollectionOption = None,
    max_results: Annotated[int, typer.Option("--max", min=1, max=100, help="How many passages.")] = 10,
    as_json: AsJson = False,
) -> None:
    """The passages of a collection that best match QUERY, as a run's ``library`` source finds them."""
    from deepcritical.cli.common import require_text, run_async, settings_from
    from deepcritical.text import shorten

    query = require_text(query, "query")
    name = settings_from(library_collection=collection).library_collection
    with _store() as library:
        found = run_async(library.search(name, query, max_results))
    if as_json:
        out.print_json(found.model_dump_json())
        return
    table = Table(
        title=f"{len(found.passages)} passage(s) in {shown(name)} for {shown(found.query)}", title_justify="left"
    )
    for column in ("#", "relevance", "title", "passage"):
        table.add_column(column, overflow="fold")
    for number, item in enumerate(found.passages, start=1):
        table.add_row(
            str(number), f"{item.relevance:.2f}", shown(item.citation.title[:80]), shown(shorten(item.content, 200))
        )
    out.print(table)


@library_app.command()
def remove(
    document_id: Annotated[str, typer.Argument(help="The document's id, as `library documents` shows it.")],
    collection: CollectionOption = None,
) -> None:
    """Remove a document and all its passages from a collection."""
    from deepcritical.cli.common import fail, settings_from

    name = settings_from(library_collection=collection).library_collection
    with _store() as library:
        removed = library.remove(name, document_id)
    if not removed:
        fail(f"no document {document_id!r} in the collection {name!r}; `deepcritical library documents` lists them")
    out.print(f"removed {shown(document_id)}: {removed} passage(s)", highlight=False)
