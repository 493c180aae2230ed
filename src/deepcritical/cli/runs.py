"""``deepcritical runs``: the run folders kept under ``$DEEPCRITICAL_HOME/runs``. ``upgrade`` brings folders written
by earlier versions to this one, once (``run.upgrade``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from deepcritical.cli.common import EXIT_FAILED, err, fail, out, settings_from
from deepcritical.text import one_line

runs_app = typer.Typer(help="Manage the run folders kept in DEEPCRITICAL_HOME.", no_args_is_help=True)


@runs_app.command("upgrade")
def upgrade(
    folder: Annotated[
        Path | None,
        typer.Argument(
            help="A runs folder, or one run's folder (default: DEEPCRITICAL_HOME/runs).", show_default=False
        ),
    ] = None,
) -> None:
    """Bring run folders written by earlier versions to this one (a report document for the page), once."""
    from deepcritical.run.request import runs_folder
    from deepcritical.run.upgrade import upgrade_folder, upgrade_runs

    where = folder or runs_folder(settings_from())
    if not where.is_dir():
        fail(f"no such folder: {where}")
    done = [upgrade_folder(where)] if (where / "status.json").is_file() else upgrade_runs(where)
    for each in done:
        if each.result in ("upgraded", "unreadable"):
            line = f"{each.folder.name}: {each.result}" + (f" ({each.why})" if each.why else "")
            (out if each.result == "upgraded" else err).print(one_line(line), markup=False, highlight=False)
    counts = {result: sum(each.result == result for each in done) for result in ("upgraded", "current", "unreadable")}
    out.print(
        f"{counts['upgraded']} upgraded, {counts['current']} already current, {counts['unreadable']} unreadable",
        markup=False,
        highlight=False,
    )
    if counts["unreadable"]:
        raise typer.Exit(EXIT_FAILED)
