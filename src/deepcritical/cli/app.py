"""The ``deepcritical`` command and its subcommands (``--help`` lists them).

Exit codes: 0 success; 1 the run failed (its evidence is kept); 2 bad input or configuration;
3 a report was written but part of the model's work was done in code because the model failed;
130 interrupted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.exceptions import TyperException

from deepcritical import __version__
from deepcritical.cli.common import (
    EXIT_DEGRADED,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    checked_preflight,
    err,
    fail,
    out,
    require_text,
    run_async,
    settings_from,
)
from deepcritical.cli.early import refused_arguments
from deepcritical.cli.eval import eval_app
from deepcritical.cli.extract import extract_command
from deepcritical.cli.folders import ensure_writable
from deepcritical.cli.library import library_app
from deepcritical.cli.options import (
    Collection,
    Demo,
    DemoSources,
    MaxIterations,
    ModelName,
    NoLlm,
    NoRecall,
    OutputModeOption,
    Quiet,
    ReaderOption,
    Sources,
    Verbose,
    run_request,
    run_settings,
)
from deepcritical.cli.runs import runs_app
from deepcritical.cli.services import add_front_end_commands
from deepcritical.cli.watch import watch_app
from deepcritical.errors import ConfigError
from deepcritical.logs import configure_logging
from deepcritical.text import collapse_whitespace, one_line, quantity, shorten

__all__ = ["EXIT_DEGRADED", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "app", "main"]

# Help is plain text, never cut: in a terminal it wraps at the terminal's width; piped (to grep, to a file)
# each option's help stays on its lines, whole. Flags show no ``<bool>`` placeholder.
HELP_SETTINGS: dict[str, Any] = {
    "max_content_width": 120,
    "terminal_width": None if sys.stdout.isatty() else 10_000,
}
app = typer.Typer(
    help="DeepCritical: evidence-grounded answers to biomedical research questions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings=HELP_SETTINGS,
)


def _missing_directories(path: Path) -> list[Path]:
    """``path`` and those of its parents that do not exist yet, deepest first: what a run would create."""
    missing = []
    for candidate in (path, *path.parents):
        if candidate.exists():
            break
        missing.append(candidate)
    return missing


def _remove_if_empty(directories: list[Path]) -> None:
    for directory in directories:  # deepest first, so a parent is empty once its child is gone
        try:
            directory.rmdir()
        except OSError:  # not empty (the run wrote its outputs), or not there: it stays as it is
            return


def _print_version(value: bool) -> None:
    if value:
        out.print(f"deepcritical {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """DeepCritical: evidence-grounded answers to biomedical research questions."""


app.add_typer(library_app, name="library")
app.add_typer(eval_app, name="eval")
app.command("extract")(extract_command)
app.add_typer(watch_app, name="watch")
app.add_typer(runs_app, name="runs")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to search for.")],
    sources: Sources = None,
    collection: Collection = None,
    max_results: Annotated[
        int | None, typer.Option("--max", min=1, max=100, help="Results per source (default DEEPCRITICAL_MAX_RESULTS).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    store: Annotated[bool, typer.Option("--store/--no-store", help="Keep results in the evidence store.")] = True,
    demo: Demo = False,
    verbose: Verbose = False,
) -> None:
    """Search the sources for QUERY and print what they found."""
    query = require_text(query, "query")  # before the search's modules load: a refusal takes no time
    from deepcritical.cli.search import render_search_json, render_search_table
    from deepcritical.run.search import run_search

    configure_logging(verbose=verbose)
    settings = settings_from(
        sources=sources, demo_mode=demo or None, max_results_per_source=max_results, library_collection=collection
    )
    if store:
        checked_preflight(settings)
    outcome = run_async(run_search(query, settings, max_results=settings.max_results_per_source, store=store))
    if as_json:
        sys.stdout.write(json.dumps(render_search_json(outcome), indent=2, ensure_ascii=False) + "\n")
    else:
        render_search_table(outcome, out, err)
    result = outcome.result
    if not result.sources_searched:
        disabled = "; ".join(f"{name}: {reason}" for name, reason in result.disabled.items())
        fail(f"no source could be searched ({disabled or 'none is enabled'})", EXIT_FAILED)
    if not result.answered_sources:
        fail("no source answered: " + "; ".join(result.errors), EXIT_FAILED)


@app.command()
def research(
    question: Annotated[str | None, typer.Argument(help="The research question (not with --resume).")] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Where to write report.md and run.json (default: $DEEPCRITICAL_HOME/runs/RUN_ID)."),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option("--resume", help="Continue the killed or interrupted run whose folder this is.", metavar="OUT"),
    ] = None,
    max_iterations: MaxIterations = None,
    model: ModelName = None,
    output_mode: OutputModeOption = None,
    demo: Demo = False,
    demo_sources: DemoSources = False,
    sources: Sources = None,
    collection: Collection = None,
    no_llm: NoLlm = False,
    no_recall: NoRecall = False,
    reader: ReaderOption = None,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Research QUESTION: plan, search, judge, repeat; then write a cited report."""
    # The question and the options are checked before the run's modules load: a refusal takes no time.
    if resume is not None and question is not None:
        fail("--resume continues the question its run was asked: give --resume OUT or a QUESTION, not both")
    if resume is not None and out_dir is not None and out_dir.resolve() != resume.resolve():
        fail("--out: a resumed run writes into its own folder (--resume OUT); leave --out out")
    if resume is None and question is None:
        fail("missing QUESTION: give the research question, or --resume OUT to continue a run")
    if out_dir is not None and str(out_dir) == "-":
        fail("--out -: a run writes a folder (report.md, run.json, figures), not one stream: name a folder")
    question = require_text(question, "question") if question is not None else ""
    from deepcritical.cli.research import resumable_request, run_research
    from deepcritical.run import progress

    configure_logging(verbose=verbose)
    request = run_request(
        question, demo, demo_sources, max_iterations, model, output_mode, sources, collection, no_llm, no_recall, reader
    )
    if resume is not None:
        try:
            request = resumable_request(resume, request)
        except ConfigError as error:
            fail(str(error))
    settings = run_settings(request)
    if settings.demo_mode and request.model is not None:
        err.print(
            f"note: demo mode uses its deterministic stand-in models; --model {one_line(request.model)} is not used",
            markup=False,
        )
    checked_preflight(settings)
    made = _missing_directories(out_dir) if out_dir is not None else []
    try:
        done = run_async(
            run_research(request, settings, out_dir=out_dir, console=None if quiet else err, resume_from=resume)
        )
    finally:  # interrupted (Ctrl+C) or stopped before any output: leave no empty --out folder behind
        _remove_if_empty(made)
    outcome, report_path, run_path = done.outcome, done.report_path, done.record_path
    out.print(f"report: {report_path}\nrun record: {run_path}", markup=False, highlight=False)
    if quiet and outcome.verdict is not None:  # without progress, the answer is said nowhere else
        out.print(f"answer: {progress.answer_text(outcome.verdict)}", markup=False, highlight=False)
    if outcome.error:
        # One line of at most 300 characters (with "error: "): the error cut between words; run.json has it whole.
        after = f"; the whole error and what it collected: {run_path}"
        shown_error = shorten(outcome.error, max(300 - len("error: the run failed ()") - len(after), 60), on_word=True)
        fail(f"the run failed ({shown_error}){after}", EXIT_FAILED)
    if outcome.degraded:
        err.print(
            "warning: part of the model's work was done in code because the model failed "
            f"({quantity(len(outcome.degraded_reasons), 'time')}); the report says where",
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_DEGRADED)


@app.command()
def batch(
    file: Annotated[
        Path,
        typer.Argument(help="Questions: one per line, or a .csv / .jsonl file with a 'question' column."),
    ],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out", help="A folder per question and summary.csv go here (default: $DEEPCRITICAL_HOME/runs/FILE-NAME)."
        ),
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", min=1, max=32, help="Questions researched at once.")] = 1,
    max_iterations: MaxIterations = None,
    model: ModelName = None,
    output_mode: OutputModeOption = None,
    demo: Demo = False,
    demo_sources: DemoSources = False,
    sources: Sources = None,
    collection: Collection = None,
    no_llm: NoLlm = False,
    no_recall: NoRecall = False,
    reader: ReaderOption = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar; print only the summary line.")] = False,
    verbose: Verbose = False,
) -> None:
    """Research every question of FILE: a folder each, --jobs at a time, then summary.csv. A rerun skips
    the questions that succeeded and resumes the ones that were cut off."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from deepcritical.cli.batch import exit_code, plan_batch, read_questions, run_batch, summary_line

    configure_logging(verbose=verbose)
    if out_dir is not None and str(out_dir) == "-":
        fail("--out -: a batch writes a folder per question and summary.csv, not one stream: name a folder")
    try:
        questions = read_questions(file)
    except ConfigError as error:
        fail(str(error))
    request = run_request(
        "", demo, demo_sources, max_iterations, model, output_mode, sources, collection, no_llm, no_recall, reader
    )
    settings = run_settings(request)
    from deepcritical.run.request import runs_folder

    target = out_dir if out_dir is not None else runs_folder(settings) / (file.stem or "batch")
    checked_preflight(settings)
    try:
        ensure_writable(target)
    except ConfigError as error:
        fail(str(error))
    plans = plan_batch(questions, target)
    if settings.demo_mode:
        err.print("DEMO MODE: sources and model are local stand-ins; every piece of evidence is synthetic.")
    progress = Progress(
        TextColumn("questions"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        TimeElapsedColumn(),
        console=err,
        disable=quiet,
    )
    bar = progress.add_task("batch", total=len(plans), failed=0)
    failures = 0

    def done(row: Any) -> None:
        nonlocal failures
        failures += row.exit_status == 1
        progress.update(bar, advance=1, failed=failures)

    with progress:
        rows = run_async(run_batch(plans, settings, target, jobs=jobs, on_done=done, request=request))
    code = exit_code(rows)
    line = summary_line(rows, target / "summary.csv")
    if code == EXIT_OK:
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    else:
        err.print(f"batch: {line}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


add_front_end_commands(app)


@app.command("export")
def export_command(
    run_dir: Annotated[Path, typer.Argument(help="A research run's output directory (or its run.json).")],
    export_format: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            help="ris, bibtex, csljson, results-csv (the study-results table), or the report itself: markdown, "
            "html (a page to keep beside the run's files).",
            case_sensitive=False,
        ),
    ] = "ris",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file instead of standard output (- is standard output)."),
    ] = None,
    every_item: Annotated[
        bool, typer.Option("--all", help="Every collected item, not only the report's references.")
    ] = False,
) -> None:
    """Export a run's references (RIS, BibTeX or CSL-JSON), its study-results table (CSV) or its report
    (Markdown, an HTML page)."""
    from deepcritical.cli.export import export_formats, export_run
    from deepcritical.report.exports import EXPORT_FORMATS

    form = next((name for name in export_formats() if name == export_format.strip().lower()), None)
    if form is None:
        fail(f"unknown export format {export_format!r}: use one of {', '.join(export_formats())}")
    try:
        text, count = export_run(run_dir, form, every_item=every_item)
    except ConfigError as error:
        fail(str(error))
    if output is None or str(output) == "-":  # "-" is standard output, as for most commands
        sys.stdout.write(text)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as error:
        fail(f"cannot write {output}: {error.strerror or error}")
    if form in EXPORT_FORMATS:
        written = f"{count} {'result row(s)' if form == 'results-csv' else 'reference(s)'}"
    else:
        written = f"the report ({count} reference(s))"
    err.print(f"{written} written to {output}", markup=False, highlight=False)


def main() -> None:
    """Console-script entry point. Usage errors (a bad option value, a missing argument) get the same
    one-line message and exit code 2 as every other bad input, instead of a boxed panel. An argument that is
    not UTF-8 (Python keeps its undecodable bytes as lone surrogates, which no file or store takes) is
    refused before any command sees it, and so is a research question that would be refused (``cli.early``)."""
    if problem := refused_arguments(app, sys.argv[1:]):
        try:
            fail(problem)
        except typer.Exit as refused:
            sys.exit(refused.exit_code)
    try:
        code = app(standalone_mode=False)
    except TyperException as error:
        message = collapse_whitespace(error.format_message() if hasattr(error, "format_message") else str(error))
        if message:  # no message: the help text was the answer (no arguments given)
            err.print(f"error: {message} (see --help)", markup=False, soft_wrap=True)
        sys.exit(getattr(error, "exit_code", EXIT_USAGE))
    except typer.Abort:
        err.print("error: interrupted", markup=False)
        sys.exit(EXIT_INTERRUPTED)
    sys.exit(code if isinstance(code, int) else EXIT_OK)


if __name__ == "__main__":
    main()
