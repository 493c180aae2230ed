"""``deepcritical watch``: questions DeepCritical keeps re-running, and what changed each time.

``add`` a question (with an interval, a webhook and the research options), ``list`` them, ``run`` one or
every due one (``--due``, for cron or a systemd timer), ``show`` one's history, ``remove`` one. Watches
live in ``$DEEPCRITICAL_HOME/watches.sqlite``; each run's folder, and the watch's Atom feed, under
``$DEEPCRITICAL_HOME/watches/<id>/``. The watch modules load inside each command."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from deepcritical.cli.common import EXIT_FAILED, EXIT_USAGE, err, fail, out, require_text, run_async, settings_from
from deepcritical.text import one_line as shown  # printed as Text or without markup: no escaping

if TYPE_CHECKING:
    from deepcritical.service.watches import WatchStorage

watch_app = typer.Typer(
    help="Watch a question: re-run it on a schedule and hear what changed.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
WatchId = Annotated[str, typer.Argument(help="The watch's id (see `deepcritical watch list`).")]


def _store() -> WatchStorage:
    from deepcritical.errors import ConfigError
    from deepcritical.service.watches_redis import open_watches

    try:
        return open_watches(settings_from())  # a team's (DEEPCRITICAL_QUEUE_URL) are in its Redis
    except ConfigError as error:
        fail(str(error))


@watch_app.command("add")
def add(
    question: Annotated[str, typer.Argument(help="The research question to keep watching.")],
    every: Annotated[str, typer.Option("--every", help="How often: 12h, 7d, 2w (at least 1h).")] = "7d",
    webhook: Annotated[
        str | None,
        typer.Option("--webhook", help="An http(s) URL to POST a signed JSON alert to when something changes."),
    ] = None,
    sources: Annotated[str | None, typer.Option("--sources", help="Comma-separated sources (default: all).")] = None,
    collection: Annotated[str | None, typer.Option("--collection", help="The library source's collection.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="A pydantic-ai model name.")] = None,
    max_iterations: Annotated[int | None, typer.Option("--max-iterations", min=1, max=20)] = None,
    no_llm: Annotated[bool, typer.Option("--no-llm", help="No language model: everything in code.")] = False,
    no_recall: Annotated[bool, typer.Option("--no-recall", help="Do not recall evidence of earlier runs.")] = False,
    demo: Annotated[
        bool, typer.Option("--demo", help="Watch on the offline stand-ins (DEEPCRITICAL_DEMO_TODAY).")
    ] = False,
) -> None:
    """Watch QUESTION: it runs at the next `watch run --due`, then every interval."""
    question = require_text(question, "question")  # before the watch store's modules load
    from deepcritical.errors import ConfigError
    from deepcritical.service.watch_run import add_watch
    from deepcritical.service.watches import WatchError, WatchOptions

    options = WatchOptions(
        sources=[part.strip() for part in sources.split(",") if part.strip()] if sources else None,
        collection=collection,
        model=model,
        max_iterations=max_iterations,
        no_llm=no_llm,
        no_recall=no_recall,
        demo=demo,
    )
    base = settings_from()
    try:
        watch = add_watch(_store, base, question, options, every=every, webhook=webhook)
    except WatchError as error:
        fail(error.on_command_line)
    except ConfigError as error:
        fail(str(error))
    if base.queue_url is not None:  # a team's: its first run is queued now, not at the workers' next scan
        from redis.exceptions import RedisError

        from deepcritical.service.watch_schedule import queue_first_run

        try:
            run_async(queue_first_run(base, watch))
        except (RedisError, OSError) as error:  # kept: the next scan finds it due
            err.print(f"{watch.id}: not queued now ({type(error).__name__}); the workers' next scan runs it")
    out.print(f"watching {watch.id}: {shown(watch.question)} (every {every})", markup=False, highlight=False)


def _when(moment: object) -> str:
    from datetime import datetime

    return f"{moment:%Y-%m-%d %H:%M}" if isinstance(moment, datetime) else "-"


@watch_app.command("list")
def list_watches() -> None:
    """Every watch: its question, last run, current verdict and next due time."""
    store = _store()
    watches = store.watches()
    for damaged in store.damaged:  # named, and the others listed: one damaged record stops no command
        err.print(f"warning: {damaged.on_command_line}", markup=False, highlight=False)
    if not watches:
        out.print('no watches yet: `deepcritical watch add "QUESTION"`')
        return
    table = Table("id", "question", "last run", "verdict", "next due")
    for watch in watches:
        last = watch.last_run
        verdict = (last.verdict_text if last else None) or "-"
        cells = (watch.id, shown(watch.question), _when(last.run_at if last else None), verdict, _when(watch.next_due))
        table.add_row(*(Text(cell) for cell in cells))  # Text: a question's brackets are never markup
    out.print(table)


@watch_app.command("run")
def run(
    watch_id: Annotated[str | None, typer.Argument(help="The watch to run now (or --due).")] = None,
    due: Annotated[bool, typer.Option("--due", help="Run every watch that is due (for cron or a timer).")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log progress details to stderr.")] = False,
) -> None:
    """Run one watch now, or every due watch; print what changed."""
    from deepcritical.cli.common import checked_preflight
    from deepcritical.logs import configure_logging
    from deepcritical.service.watch_run import WatchOutcome, run_due, run_watch_once, settings_for
    from deepcritical.service.watches import WatchError

    configure_logging(verbose=verbose)
    if (watch_id is None) == (not due):
        fail("give a watch id or --due (not both)", EXIT_USAGE)
    store = _store()
    base = settings_from()
    try:
        watches = [store.get(watch_id)] if watch_id is not None else None
    except WatchError as error:
        fail(error.on_command_line)
    for watch in watches or store.watches():
        checked_preflight(settings_for(watch.options, base))
    for damaged in store.damaged:
        err.print(f"warning: {damaged.on_command_line}", markup=False, highlight=False)

    async def go() -> list[WatchOutcome]:
        if watches is not None:
            return [await run_watch_once(watches[0], base, store)]
        return await run_due(store, base)

    outcomes = run_async(go())
    if due and not outcomes:
        out.print("no watch is due")
    for outcome in outcomes:
        out.print(f"{outcome.watch_id}: {outcome.folder}", markup=False, highlight=False)
        for line in outcome.changes.summary():
            out.print(f"  {shown(line)}", markup=False, highlight=False)
        if outcome.webhook_delivered is False:
            err.print(f"{outcome.watch_id}: the webhook did not answer; the alert is in the feed", markup=False)
    if any(outcome.changes.failed for outcome in outcomes):
        raise typer.Exit(EXIT_FAILED)


@watch_app.command("show")
def show(watch_id: WatchId) -> None:
    """A watch's history: each run's date, verdict, confidence, counted studies and what changed."""
    from deepcritical.service.watches import WatchError, describe_interval

    store = _store()
    try:
        watch, history = store.get(watch_id), store.history(watch_id)
    except WatchError as error:
        fail(error.on_command_line)
    out.print(f"{watch.id}: {shown(watch.question)}", markup=False, highlight=False)
    out.print(
        f"every {describe_interval(watch.interval)}, next due {_when(watch.next_due)}", markup=False, highlight=False
    )
    # The verdict with its confidence as the report words it: a maybe's is how evenly the evidence is split.
    table = Table("date", "verdict", "counted", "what changed")
    for entry in history:
        changes = "\n".join(shown(line) for line in entry.summary)
        cells = (_when(entry.run_at), entry.verdict_text or entry.verdict or "-", str(entry.counted), changes)
        table.add_row(*(Text(cell) for cell in cells))  # a paper's title is text, never markup
    out.print(table if history else "not run yet")


@watch_app.command("remove")
def remove(watch_id: WatchId) -> None:
    """Stop watching (its run folders stay where they are)."""
    from deepcritical.service.watches import WatchError

    try:
        _store().remove(watch_id)
    except WatchError as error:
        fail(error.on_command_line)
    err.print(f"removed {watch_id}", markup=False, highlight=False)
