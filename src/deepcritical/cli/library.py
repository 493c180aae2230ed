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
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from deepcritical.cli.terminal import shown
from deepcritical.config import MIN_RETENTION, Settings, parse_duration
from deepcritical.errors import ConfigError, DeepCriticalError
from deepcritical.models import Evidence

if TYPE_CHECKING:
    from deepcritical.evidence.chroma import Connection
    from deepcritical.evidence.library import CollectionInfo

library_app = typer.Typer(
    help="The evidence store: what it holds, old run collections dropped, its evidence exported.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
out = Console(emoji=False, soft_wrap=True)  # ":x:" in a title or a message is text, not an emoji
err = Console(stderr=True, emoji=False, soft_wrap=True)

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


@contextmanager
def _store() -> Iterator[tuple[Settings, Connection]]:
    """Settings and a connection to the store; every failure inside becomes one line and an exit code."""
    from deepcritical.cli.common import EXIT_FAILED, fail, settings_from
    from deepcritical.cli.research import check_store_directory
    from deepcritical.evidence import chroma

    settings = settings_from()
    try:
        check_store_directory(settings)
    except ConfigError as error:
        fail(str(error))
    try:
        connection = chroma.connect(settings)
    except DeepCriticalError as error:
        fail(str(error), EXIT_FAILED)
    try:
        yield settings, connection
    except typer.Exit:
        raise
    except ConfigError as error:
        fail(str(error))
    except DeepCriticalError as error:
        fail(str(error), EXIT_FAILED)
    except Exception as error:  # Chroma's own errors (a collection that is not there, a server error)
        fail(f"{connection.where}: {error}", EXIT_FAILED)
    finally:
        connection.close()


def _when(info: CollectionInfo) -> str:
    return f"{info.created:%Y-%m-%d %H:%M} UTC" if info.created else "unknown"


def _info_json(info: CollectionInfo) -> dict[str, Any]:
    return {"name": info.name, "created": info.created.isoformat() if info.created else None, "items": info.items}


@library_app.command()
def stats(as_json: AsJson = False) -> None:
    """How many run collections and items the store holds, and its size on disk."""
    from deepcritical.evidence import library

    with _store() as (_, connection):
        found = library.stats(connection)
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
    from deepcritical.evidence import library

    with _store() as (_, connection):
        found = library.collections(connection)
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
    from deepcritical.evidence import library

    with _store() as (settings, connection):
        age = _age(older_than, settings.retention)
        if age is None:
            fail("DEEPCRITICAL_RETENTION is 'never': give --older-than (e.g. --older-than 30d)")
        removed = library.prune(connection, age)
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
) -> None:
    """Every evidence item of the library (or of one run) as JSON Lines: one Evidence object per line."""
    from deepcritical.evidence import chroma, library

    with _store() as (_, connection):
        if run is not None:
            name = chroma.run_collection_name(run)
        else:
            name = chroma.DEMO_LIBRARY_COLLECTION if demo else chroma.LIBRARY_COLLECTION
        if name not in {info.name for info in library.collections(connection)}:
            raise ConfigError(f"no collection {name!r} in {connection.where}: see `deepcritical library list`")
        items = library.export(connection, name)
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
