"""``deepcritical eval``: the command line of the evaluation harness (``deepcritical.evaluation``): its options,
its refusals of bad input, the progress bar and the summary printed and written."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

from deepcritical.options import OutputMode

if TYPE_CHECKING:
    from rich.progress import Progress

    from deepcritical.evaluation.evidence_inference import Prompt
    from deepcritical.reading.results import ResultReader

T = TypeVar("T")
eval_app = typer.Typer(
    help="Score the research loop on questions with known answers (PubMedQA, SciFact, MedEvidence), and the result"
    " reader on doctors' readings of trials (Evidence Inference).",
    no_args_is_help=True,
)
err = Console(stderr=True, emoji=False)

Out = Annotated[Path | None, typer.Option("--out", help="Where predictions.jsonl and summary.json go (resumable).")]
Limit = Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N items.")]
NoLlm = Annotated[bool, typer.Option("--no-llm", help="No language model: the code planner, judge, report, verdict.")]
Model = Annotated[str | None, typer.Option("--model", help="A pydantic-ai model name, e.g. openai:local.")]
Mode = Annotated[OutputMode | None, typer.Option("--output-mode", help="How the model gives structured answers.")]
Iterations = Annotated[int, typer.Option("--max-iterations", min=1, max=20, help="Rounds per question.")]
Results = Annotated[int, typer.Option("--max", min=1, max=100, help="Passages per query from the collection.")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Log progress details to stderr.")]


def _out_folder(out: Path | None, default: str) -> Path:
    """The --out folder, made if missing; a one-line error and exit 2 when it cannot be one (a file is there)."""
    from deepcritical.cli.common import fail

    target = out or Path("eval") / default
    if target.exists() and not target.is_dir():
        fail(f"--out {target}: is a file, not a folder; give a folder for predictions.jsonl and summary.json")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        fail(f"--out {target}: cannot make the folder ({error.strerror or error})")
    return target


def _run(
    benchmark: Any,
    gold_file: Path,
    load: Any,
    out: Path | None,
    limit: int | None,
    overrides: dict[str, Any],
    verbose: bool,
) -> None:
    from deepcritical.cli.common import checked_preflight, fail, run_async, settings_from
    from deepcritical.evaluation import pubmedqa_scifact as evaluation
    from deepcritical.logs import configure_logging

    configure_logging(verbose=verbose)  # stdout carries the summary alone

    settings = settings_from(**overrides)
    checked_preflight(settings)
    try:
        questions, pool = load()
    except Exception as error:  # ConfigError from the readers; anything else is a bad file too
        fail(str(error))
    if not questions:
        fail(f"{gold_file}: no item to evaluate")
    target = _out_folder(out, benchmark)
    with _progress_bar(f"{benchmark}") as bar:
        task = bar.add_task(benchmark, total=min(len(questions), limit or len(questions)))
        timing = run_async(
            evaluation.predict(
                benchmark,
                questions,
                pool,
                settings,
                target,
                limit=limit,
                on_progress=lambda done, _total: bar.update(task, completed=done),
            )
        )
    summary = evaluation.score(benchmark, target / "predictions.jsonl", gold_file, timing)
    summary["settings"] = {"no_llm": settings.no_llm, "model": None if settings.no_llm else settings.model}
    summary["limit"] = limit
    _publish(target, summary)


def _publish(target: Path, summary: dict[str, Any]) -> None:
    """The summary in ``summary.json`` and on stdout; where both files are, on stderr."""
    (target / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    err.print(
        f"predictions: {target / 'predictions.jsonl'}; summary: {target / 'summary.json'}", markup=False, soft_wrap=True
    )


def _overrides(
    no_llm: bool, model: str | None, mode: OutputMode | None, iterations: int, results: int
) -> dict[str, Any]:
    return {
        "no_llm": no_llm or None,
        "model": model,
        "output_mode": mode,
        "max_iterations": iterations,
        "max_results_per_source": results,
    }


def _progress_bar(name: str) -> Progress:
    """The bar every evaluation shows on stderr: done of total, time spent and time left (rich loads here, on use)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn(name), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(), console=err
    )


@eval_app.command()
def pubmedqa(
    file: Annotated[Path, typer.Argument(help="PubMedQA items (ori_pqal.json format).")],
    out: Out = None,
    limit: Limit = None,
    no_llm: NoLlm = False,
    model: Model = None,
    output_mode: Mode = None,
    max_iterations: Iterations = 1,
    max_results: Results = 10,
    verbose: Verbose = False,
) -> None:
    """Research each QUESTION over the pool of every item's CONTEXTS; the verdict maps to yes/no/maybe."""
    from deepcritical.evaluation import pubmedqa_scifact as evaluation

    _run(
        "pubmedqa",
        file,
        lambda: evaluation.read_pubmedqa_inputs(file),
        out,
        limit,
        _overrides(no_llm, model, output_mode, max_iterations, max_results),
        verbose,
    )


@eval_app.command()
def scifact(
    claims: Annotated[Path, typer.Option("--claims", help="SciFact claims (JSON Lines: id, claim).")],
    corpus: Annotated[Path, typer.Option("--corpus", help="The SciFact corpus (BEIR JSON Lines).")],
    out: Out = None,
    limit: Limit = None,
    no_llm: NoLlm = False,
    model: Model = None,
    output_mode: Mode = None,
    max_iterations: Iterations = 1,
    max_results: Results = 10,
    verbose: Verbose = False,
) -> None:
    """Research each claim over the corpus; the verdict maps to SUPPORT/REFUTE/NEI."""
    from deepcritical.evaluation import pubmedqa_scifact as evaluation

    _run(
        "scifact",
        claims,
        lambda: (evaluation.read_scifact_inputs(claims), evaluation.corpus_documents(corpus)),
        out,
        limit,
        _overrides(no_llm, model, output_mode, max_iterations, max_results),
        verbose,
    )


@eval_app.command("evidence-inference")
def evidence_inference(
    prompts: Annotated[Path, typer.Argument(help="Prompts CSV: PromptID, PMCID, Outcome, Intervention, Comparator.")],
    articles: Annotated[
        Path,
        typer.Option("--articles", help="Folder with abstracts/PMC….txt and fulltext/PMC….txt (either may lack)."),
    ],
    annotations: Annotated[
        Path | None,
        typer.Option("--annotations", help="The doctors' labels (annotations.csv), read only to score predictions."),
    ] = None,
    out: Out = None,
    limit: Limit = None,
    no_llm: NoLlm = False,
    reader: Annotated[
        str,
        typer.Option(
            "--reader",
            help="linear (the run's reader, fast) or transformer (the fine-tuned re-ranker and classifier, slower).",
        ),
    ] = "linear",
    split: Annotated[
        str | None,
        typer.Option(
            "--split",
            help="Only the prompts of articles of this split (train, validation, ...), by splits.csv in --articles.",
        ),
    ] = None,
    verbose: Verbose = False,
) -> None:
    """Read each trial's result for its prompt's comparison and outcome with the trained result reader."""
    from deepcritical.cli.common import fail
    from deepcritical.evaluation import evidence_inference as harness
    from deepcritical.evaluation.predictions import add_session_time
    from deepcritical.logs import configure_logging

    del no_llm  # the result reader is code: the same with or without --no-llm
    configure_logging(verbose=verbose)
    items, splits, chosen_reader = _inference_inputs(prompts, articles, annotations, reader, split)
    chosen_prompts = items[:limit] if limit else items
    if annotations is not None:  # can it score any of them? Its labels' values are read only once all are predicted
        _or_fail(lambda: harness.check_annotations(annotations, {prompt.id for prompt in chosen_prompts}))
    if not any(harness.has_article(articles, prompt.pmcid) for prompt in chosen_prompts):
        fail(f"--articles {articles}: no prompt's article is there (expected fulltext/PMC….txt or abstracts/PMC….txt)")
    target = _out_folder(out, "evidence-inference")
    _or_fail(lambda: harness.check_reader(target, reader))
    with _progress_bar("evidence-inference") as bar:
        task = bar.add_task("evidence-inference", total=min(len(items), limit or len(items)))
        seconds = harness.predict(
            items,
            articles,
            target,
            limit=limit,
            reader=chosen_reader,
            reader_name=reader,
            on_progress=lambda done, _total: bar.update(task, completed=done),
        )
    # The sessions that wrote to this folder, as the other eval commands count them.
    spent = add_session_time(target / "timing.json", 0.0, seconds)
    ids = {prompt.id for prompt in chosen_prompts}
    summary = _or_fail(lambda: harness.score(target / "predictions.jsonl", annotations, ids, reader))
    summary |= {
        "sessions": int(spent["sessions"]),
        "session_seconds": round(seconds, 2),
        "split": split,
        "limit": limit,
    }
    _note_inference_caveats(summary, chosen_prompts, splits, articles)
    _publish(target, summary)


def _or_fail(action: Callable[[], T]) -> T:
    """What ``action`` returns; its ConfigError, a one-line error and exit 2."""
    from deepcritical.cli.common import fail
    from deepcritical.errors import ConfigError

    try:
        return action()
    except ConfigError as error:
        fail(str(error))


def _inference_inputs(
    prompts: Path, articles: Path, annotations: Path | None, reader: str, split: str | None
) -> tuple[list[Prompt], dict[str, str], ResultReader]:
    """The prompts to read (of ``split`` when given), the articles' splits and the reader; a one-line error and
    exit 2 for a missing folder or file, a prompts file with no prompt, an unknown reader or split."""
    from deepcritical.cli.common import fail
    from deepcritical.evaluation import evidence_inference as harness

    if not articles.is_dir():
        fail(f"--articles {articles}: not a folder")
    if annotations is not None and not annotations.is_file():
        fail(f"--annotations {annotations}: no such file")
    items = _or_fail(lambda: harness.read_prompts(prompts))
    if not items:
        fail(f"{prompts}: no prompt to evaluate")
    from deepcritical.reading.results import ResultReader

    if reader not in ("linear", "transformer"):
        fail(f"--reader {reader}: choose linear or transformer")
    try:
        chosen = ResultReader.load("transformer" if reader == "transformer" else "linear")
    except FileNotFoundError as error:
        fail(str(error))
    splits = harness.split_of(articles)
    if split is not None:
        if not splits:
            fail(f"--split {split}: no splits.csv in {articles} says which article is in which split")
        if split not in set(splits.values()):
            fail(f"--split {split}: splits.csv names {', '.join(sorted(set(splits.values())))}")
        items = [prompt for prompt in items if splits.get(prompt.pmcid) == split]
        if not items:
            fail(f"--split {split}: no prompt's article is in that split")
    return items, splits, chosen


def _note_inference_caveats(
    summary: dict[str, Any], chosen_prompts: Sequence[Prompt], splits: dict[str, str], articles: Path
) -> None:
    """On stderr, what qualifies the score: prompts from the articles the shipped reader was trained on (their
    score is in-sample, not a measure; counted in the summary too) and prompts whose article is missing."""
    in_sample = sum(splits.get(prompt.pmcid) == "train" for prompt in chosen_prompts)
    if in_sample:
        summary["in_sample_prompts"] = in_sample
        err.print(
            f"note: {in_sample} of {len(chosen_prompts)} prompt(s) are from the train articles the reader was trained "
            "on: their score is in-sample (--split validation scores held-out articles only)",
            markup=False,
            soft_wrap=True,
        )
    if summary["articles_missing"]:
        err.print(
            f"note: {summary['articles_missing']} prompt(s) had no article under {articles}: read as not reported",
            markup=False,
            soft_wrap=True,
        )


@eval_app.command()
def medevidence(
    questions: Annotated[Path, typer.Argument(help="MedEvidence questions (JSON Lines: id, question, ...).")],
    studies: Annotated[
        Path, typer.Option("--studies", help="Folder with each question's studies: ID/studies.jsonl (title, abstract).")
    ],
    out: Out = None,
    limit: Limit = None,
    no_llm: NoLlm = False,
    model: Model = None,
    output_mode: Mode = None,
    max_iterations: Iterations = 1,
    max_results: Results = 30,
    both_ways: Annotated[
        bool,
        typer.Option("--both-ways", help="Also ask each question's 'reduce' phrasing; the two answers should agree."),
    ] = False,
    verbose: Verbose = False,
) -> None:
    """Research each question over its own studies only (a collection per question); its answer (higher, lower,
    no difference, uncertain effect, insufficient data) and GRADE certainty are scored against the review's."""
    from deepcritical.cli.common import checked_preflight, fail, run_async, settings_from
    from deepcritical.evaluation import medevidence as harness
    from deepcritical.logs import configure_logging

    configure_logging(verbose=verbose)
    settings = settings_from(**_overrides(no_llm, model, output_mode, max_iterations, max_results))
    checked_preflight(settings)
    items = _or_fail(lambda: harness.read_medevidence_inputs(questions, studies))
    if not items:
        fail(f"{questions}: no question to evaluate")
    target = _out_folder(out, "medevidence")
    with _progress_bar("medevidence") as bar:
        task = bar.add_task("medevidence", total=min(len(items), limit or len(items)))
        timing = run_async(
            harness.predict(
                items,
                settings,
                target,
                limit=limit,
                both_ways=both_ways,
                on_progress=lambda done, _total: bar.update(task, completed=done),
            )
        )
    summary = harness.score(target / "predictions.jsonl", questions, timing)
    summary["settings"] = {"no_llm": settings.no_llm, "model": None if settings.no_llm else settings.model}
    summary["limit"] = limit
    _publish(target, summary)
