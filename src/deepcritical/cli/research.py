"""``deepcritical research``: checks what a run needs before it starts, runs the question through
``run.execute.run_to_folder``, and shows its progress events one line each, coloured."""

from __future__ import annotations

from pathlib import Path

import httpx2
from rich.console import Console
from rich.text import Text

from deepcritical.appraisal.readers import load_reader
from deepcritical.cli.folders import ensure_writable
from deepcritical.config import Settings
from deepcritical.errors import ConfigError, EmbeddingError, MissingKeyError
from deepcritical.evidence import EmbeddingService
from deepcritical.evidence.chroma import store_directory
from deepcritical.evidence.resources import Resources
from deepcritical.run import progress
from deepcritical.run.checkpoint import read_checkpoint
from deepcritical.run.events import ProgressEvent
from deepcritical.run.execute import FolderRun, run_to_folder
from deepcritical.run.request import RunRequest
from deepcritical.run.store import RunStore
from deepcritical.text import one_line

DEMO_BANNER = "DEMO MODE: sources and model are local stand-ins; every piece of evidence is synthetic."
DEMO_SOURCES_BANNER = "DEMO SOURCES: the sources are local stand-ins and every piece of evidence is synthetic"
DEMO_LIBRARY_LINE = (
    "note: the library source searches the demo store ({store}), not your own library: run without --demo to "
    "search your papers"
)
STYLES: dict[progress.Tone, str] = {
    "plain": "",
    "strong": "bold",
    "heading": "bold cyan",
    "warning": "yellow",
    "good": "green",
}


def describe(event: ProgressEvent) -> Text | None:
    """The event's progress line, coloured. Built from spans, never parsed as markup, so outside text
    (already one line without control characters) cannot style the terminal."""
    spans = progress.describe(event)
    if spans is None:
        return None
    line = Text()
    for text, tone in spans:
        line.append(text, style=STYLES[tone])
    return line


def preflight(settings: Settings) -> None:
    """Check at start what would otherwise fail only when the first evidence is stored or read: the embedding
    model's directory, the result reader (``--reader transformer``: its weights and base model) and, for the
    embedded store, that its home and the store directory itself are writable."""
    try:
        EmbeddingService.for_settings(settings).check_available()
    except EmbeddingError as error:
        raise ConfigError(f"DEEPCRITICAL_EMBEDDING_MODEL: {error}") from error
    load_reader(settings.reader, settings.named("reader"))
    check_store_directory(settings)


def check_store_directory(settings: Settings) -> None:
    """The embedded store needs its home and its own directory (``$DEEPCRITICAL_HOME/chroma``) writable."""
    if not settings.chroma_host:
        ensure_writable(settings.home, "DEEPCRITICAL_HOME")
        ensure_writable(store_directory(settings), "DEEPCRITICAL_HOME: the evidence store directory")


async def run_research(
    request: RunRequest,
    settings: Settings,
    *,
    out_dir: Path | None,
    console: Console | None,
    resume_from: Path | None = None,
    resources: Resources | None = None,
) -> FolderRun:
    """Run one question to the end, checkpointing into its folder after every stage; ``report.md`` and
    ``run.json`` are written even when the run failed. ``resume_from``: continue the run of that folder
    (``request`` is then ``resumable_request``'s, with any option given again). ``resources``: the process's
    (a batch's, shared by its questions); by default the run builds its own."""
    target = resume_from or out_dir
    if target is not None:
        ensure_writable(target)
    if console is not None and settings.demo_mode:
        console.print(f"[bold yellow]{DEMO_BANNER}[/]")
        if "library" in settings.sources:
            console.print(DEMO_LIBRARY_LINE.format(store=store_directory(settings)), markup=False, highlight=False)
    elif console is not None and settings.demo_sources:
        console.print(f"[bold yellow]{DEMO_SOURCES_BANNER}[/]")
    if console is not None and not settings.demo_mode and not settings.no_llm:
        console.print(await _model_line(settings), highlight=False, markup=False)

    def show(event: ProgressEvent) -> None:
        if console is not None and (line := describe(event)) is not None:
            console.print(line, highlight=False)

    return await run_to_folder(
        request.question,
        settings,
        folder=target,
        on_event=show,
        resume=resume_from is not None,
        request=request,
        resources=resources,
    )


async def _model_line(settings: Settings) -> str:
    """``agents.models.model_line``: said before anything that could fail on the model (its key, its server),
    so that the model that will answer is named whatever happens next. A name that is no model is an error
    here; a missing key is the run's to report, after this line."""
    from deepcritical.agents.models import PREFLIGHT_TIMEOUT_SECONDS, build_model, model_line

    # The model is built to read its profile; nothing is sent (a timeout of its own only so that no SDK
    # warns of httpx's default 5 s).
    async with httpx2.AsyncClient(timeout=PREFLIGHT_TIMEOUT_SECONDS) as client:
        try:
            model, _ = build_model(settings, client)
        except MissingKeyError:
            return one_line(model_line(settings, None))
    return one_line(model_line(settings, model))


def resumable_request(folder: Path, given: RunRequest) -> RunRequest:
    """The request of the run in ``folder``, as its folder recorded it when it started (demo mode included),
    with the options ``given`` again on the command line; a ConfigError when there is nothing to resume."""
    store = RunStore(folder)
    try:
        recorded = store.request()
    except ConfigError as error:
        raise ConfigError(f"--resume {folder}: {error}") from None
    if recorded is None or ((folder / "run.json").is_file() and not store.has_checkpoint()):
        # A run of a version that recorded no request resumes from its checkpoint's question; a finished
        # run, a folder that is not a run's or none at all is refused, before anything starts.
        recorded = RunRequest(question=read_checkpoint(folder).question)
    again = given.model_dump(exclude_defaults=True, exclude={"question"})
    return RunRequest.model_validate(recorded.model_dump() | again)
