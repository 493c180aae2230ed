"""The options ``research``, ``batch`` and the serving commands share, and the one ``RunRequest`` the
run options make (the request every front end builds)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from deepcritical.cli.common import fail, settings_from
from deepcritical.options import DEFAULT_MODEL, OutputMode, ReaderName
from deepcritical.source_table import sources_help

if TYPE_CHECKING:
    from deepcritical.config import Settings
    from deepcritical.run.request import RunRequest

Demo = Annotated[bool, typer.Option("--demo", help="Run offline against synthetic stand-ins (no keys, no network).")]
SOURCES_HELP = f"{sources_help()} (default: DEEPCRITICAL_SOURCES)"
Sources = Annotated[str | None, typer.Option("--sources", help=SOURCES_HELP)]
Collection = Annotated[
    str | None,
    typer.Option("--collection", help="The document collection the library source searches (`library add`)."),
]
NoLlm = Annotated[
    bool, typer.Option("--no-llm", help="No language model: code planner, judge, extractive report and verdict.")
]
NoRecall = Annotated[bool, typer.Option("--no-recall", help="Do not recall evidence of earlier runs.")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Log progress details to stderr.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress output; print only the paths and the answer.")]
MaxIterations = Annotated[
    int | None, typer.Option("--max-iterations", min=1, max=20, help="Plan-search-judge rounds at most.")
]
ModelName = Annotated[str | None, typer.Option("--model", help=f"A pydantic-ai model name (default {DEFAULT_MODEL}).")]
OutputModeOption = Annotated[
    OutputMode | None,
    typer.Option("--output-mode", help="How the model gives structured answers (default DEEPCRITICAL_OUTPUT_MODE)."),
]
ReaderOption = Annotated[
    ReaderName | None,
    typer.Option(
        "--reader",
        help="How each study's result is read: linear, or transformer (better, slower; DEEPCRITICAL_READER).",
    ),
]
DemoSources = Annotated[
    bool, typer.Option("--demo-sources", help="Synthetic stand-in sources with the configured live model (offline).")
]


def run_request(
    question: str,
    demo: bool,
    demo_sources: bool,
    max_iterations: int | None,
    model: str | None,
    output_mode: OutputMode | None,
    sources: str | None,
    collection: str | None,
    no_llm: bool,
    no_recall: bool,
    reader: ReaderName | None = None,
) -> RunRequest:
    """The run request of the options ``research`` and ``batch`` share (the one every front end builds)."""
    from pydantic import ValidationError

    from deepcritical.run.request import RunRequest

    try:
        return RunRequest(
            question=question,
            demo=demo,
            demo_sources=demo_sources,
            max_iterations=max_iterations,
            model=model,
            output_mode=output_mode,
            sources=None if sources is None else [part.strip() for part in sources.split(",") if part.strip()],
            collection=collection,
            no_llm=no_llm,
            recall=False if no_recall else None,
            reader=reader,
        )
    except ValidationError as error:
        first = error.errors()[0]
        fail(f"--{str(first['loc'][0]).replace('_', '-')}: {first['msg']}")


def run_settings(request: RunRequest) -> Settings:
    """The settings of a request's run: the environment's, with the request's options named by their flags."""
    return settings_from(**request.overrides())
