"""``deepcritical research``: checks what a run needs before it starts, runs the question, renders its
progress events as one line each, and writes the outputs."""

from __future__ import annotations

import tempfile
from pathlib import Path

from rich.console import Console

from deepcritical.cli.terminal import shown
from deepcritical.config import Settings
from deepcritical.errors import ConfigError, EmbeddingError, ResearchError
from deepcritical.events import (
    IterationStarted,
    JudgeFinished,
    QueriesPlanned,
    ReportWritten,
    RunStarted,
    RunWarning,
    SearchFinished,
)
from deepcritical.evidence import EmbeddingService
from deepcritical.evidence.chroma import store_directory
from deepcritical.outputs import FALLBACK_EXPLANATIONS
from deepcritical.run import setup
from deepcritical.run.checkpoint import folder_sink, read_checkpoint, remove_checkpoint
from deepcritical.run.events import ProgressEvent, RunFinished
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.outcome import ResearchOutcome, new_run_id
from deepcritical.run.record import write_outputs

DEMO_BANNER = "DEMO MODE: sources and model are local stand-ins; every piece of evidence is synthetic."
DEMO_SOURCES_BANNER = (
    "DEMO SOURCES: the sources are local stand-ins and every piece of evidence is synthetic; the model is live: {model}"
)


def describe(event: ProgressEvent) -> str | None:
    """One line of Rich markup per event; every value from outside goes through ``shown``."""
    if isinstance(event, RunStarted):
        sources = ", ".join(event.sources) or "none"
        disabled = "".join(
            f"\n  [yellow]disabled[/] {shown(name)}: {shown(reason)}" for name, reason in event.sources_disabled.items()
        )
        output = f" · output {shown(event.output_mode)}" if event.output_mode else ""
        return (
            f"[bold]run {shown(event.run_id)}[/] · model {shown(event.model)}{output} · sources {shown(sources)}"
            f"{disabled}"
        )
    if isinstance(event, IterationStarted):
        return f"\n[bold cyan]iteration {event.iteration}/{event.max_iterations}[/]"
    if isinstance(event, QueriesPlanned):
        built = " (built in code)" if event.by == "code" else ""
        return f"  queries{built}: " + "; ".join(shown(query) for query in event.queries)
    if isinstance(event, SearchFinished):
        failed = "".join(
            f"\n  [yellow]source failed[/] {shown(k)}: {shown(v)}" for k, v in event.sources_failed.items()
        )
        capped = " [yellow](evidence cap reached)[/]" if event.capped else ""
        return (
            f"  searched {shown(', '.join(event.sources_answered)) or 'no source'}: {event.found} found, "
            f"{event.kept} kept, {event.deduplicated} duplicates dropped, "
            f"{event.related} recalled from earlier runs; "
            f"{event.total_evidence} in the run{capped}{failed}"
        )
    if isinstance(event, JudgeFinished):
        scores = ", ".join(f"{shown(name)} {score}/10" for name, score in event.scores.items())
        verdict = "[green]sufficient[/]" if event.sufficient else "[yellow]not yet sufficient[/]"
        gaps = f"\n  gaps: {shown('; '.join(event.gaps))}" if event.gaps else ""
        who = "judge, computed in code" if event.by == "code" else "judge"
        return f"  {who} ({event.items_judged} items): {scores} · {verdict}, confidence {event.confidence:.2f}{gaps}"
    if isinstance(event, ReportWritten):
        how = f"built in code ({FALLBACK_EXPLANATIONS[event.fallback_reason]})" if event.fallback_reason else "written"
        return (
            f"\n[bold]report {how}[/]: {event.findings} findings, {event.contrary} contrary, "
            f"{event.references} references; citations dropped {event.dropped_citations}, "
            f"repaired {event.repaired_citations}"
        )
    if isinstance(event, RunWarning):
        return f"  [yellow]warning[/] {shown(event.message)}"
    if isinstance(event, RunFinished):
        outcome = event.outcome
        seconds = outcome.timings.get("total", 0.0)
        usage = outcome.llm_usage
        failed = f" ({usage.failed_requests} failed)" if usage.failed_requests else ""
        return (
            f"stopped: {shown(outcome.stop_reason)} after {outcome.iterations} iteration(s), "
            f"{len(outcome.evidence)} evidence items, {usage.requests} LLM requests{failed}, {seconds:.1f} s"
        )
    return None


def ensure_writable(directory: Path, what: str = "--out") -> None:
    """Fail before the run, not after it, when its outputs could not be written."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as error:
        raise ConfigError(f"{what} {directory}: cannot write there ({error.strerror or error})") from error


def preflight(settings: Settings) -> None:
    """Check at start what would otherwise fail only when the first evidence is stored: the embedding
    model's directory and, for the embedded store, that its home and the store directory itself are
    writable."""
    try:
        EmbeddingService(settings.embedding_model).check_available()
    except EmbeddingError as error:
        raise ConfigError(f"DEEPCRITICAL_EMBEDDING_MODEL: {error}") from error
    check_store_directory(settings)


def check_store_directory(settings: Settings) -> None:
    """The embedded store needs its home and its own directory (``$DEEPCRITICAL_HOME/chroma``) writable."""
    if not settings.chroma_host:
        ensure_writable(settings.home, "DEEPCRITICAL_HOME")
        ensure_writable(store_directory(settings), "DEEPCRITICAL_HOME: the evidence store directory")


async def run_research(
    question: str,
    settings: Settings,
    *,
    out_dir: Path | None,
    console: Console | None,
    resume_from: Path | None = None,
) -> tuple[ResearchOutcome, tuple[Path, Path]]:
    """Run one question to the end, checkpointing into its folder after every stage; write ``report.md``
    and ``run.json`` even when the run failed. ``resume_from``: continue the run whose folder that is."""
    resume = read_checkpoint(resume_from) if resume_from is not None else None
    run_id = resume.run_id if resume is not None else new_run_id()
    target = resume_from or out_dir or Path("runs") / run_id
    ensure_writable(target)
    if console is not None and settings.demo_mode:
        console.print(f"[bold yellow]{DEMO_BANNER}[/]")
    elif console is not None and settings.demo_sources:
        console.print(f"[bold yellow]{shown(DEMO_SOURCES_BANNER.format(model=settings.model))}[/]")
    async with setup.http_client(settings) as client:
        orchestrator = Orchestrator(settings, client=client)
        outcome: ResearchOutcome | None = None
        events = orchestrator.run(question, run_id=run_id, checkpoint=folder_sink(target), resume=resume)
        async for event in events:
            if console is not None and (line := describe(event)) is not None:
                console.print(line, highlight=False)
            if isinstance(event, RunFinished):
                outcome = event.outcome
    if outcome is None:
        raise ResearchError("the run ended without an outcome")
    try:
        paths = write_outputs(outcome, target)
    except OSError as error:
        raise ResearchError(f"cannot write the report to {target}: {error.strerror or error}") from error
    remove_checkpoint(target)  # run.json is written: the run is over, nothing is left to resume
    return outcome, paths
