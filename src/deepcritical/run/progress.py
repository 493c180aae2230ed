"""A run's progress in words: one line per event, as spans of plain text with a tone. The front ends
decide how a tone looks (the command line colours it, MCP and logs join the text); every value from
outside is one line without control characters. ``event_line`` is the one wording of a recorded event:
the run store keeps it with the event (``line``), and the page and MCP show it as it is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from deepcritical.events import (
    IterationStarted,
    JudgeFinished,
    QueriesPlanned,
    ReportWritten,
    RunStarted,
    RunWarning,
    SearchFinished,
)
from deepcritical.outputs import FALLBACK_EXPLANATIONS, Verdict
from deepcritical.run.events import ProgressEvent, RunFinished
from deepcritical.text import one_line, quantity, shorten

Tone = Literal["plain", "strong", "heading", "warning", "good"]
Span = tuple[str, Tone]


def _t(text: str) -> Span:
    """Outside text: one line, no control characters."""
    return one_line(text), "plain"


def describe(event: ProgressEvent) -> list[Span] | None:
    """The event's line as spans (None: the event is not shown)."""
    if isinstance(event, RunStarted):
        output = [(" · output ", "plain"), _t(event.output_mode)] if event.output_mode else []
        spans: list[Span] = [("run ", "strong"), (one_line(event.run_id), "strong"), (" · model ", "plain")]
        spans += [_t(event.model), *output, (" · sources ", "plain"), _t(", ".join(event.sources) or "none")]
        for name, reason in event.sources_disabled.items():
            spans += [("\n  ", "plain"), ("disabled", "warning"), (" ", "plain"), _t(name), (": ", "plain"), _t(reason)]
        return spans
    if isinstance(event, IterationStarted):
        return [("\n", "plain"), (f"iteration {event.iteration}/{event.max_iterations}", "heading")]
    if isinstance(event, QueriesPlanned):
        built = " (built in code)" if event.by == "code" else ""
        return [(f"  queries{built}: ", "plain"), _t("; ".join(one_line(query) for query in event.queries))]
    if isinstance(event, SearchFinished):
        spans = [("  searched ", "plain"), _t(", ".join(event.sources_answered) or "no source")]
        spans.append(
            (
                f": {event.found} found, {event.kept} kept, {event.related} recalled from earlier runs; "
                f"{event.total_evidence} in the run ({event.records_identified} records identified, "
                f"{event.duplicates_removed} duplicates removed, as the study flow counts them)",
                "plain",
            )
        )
        if event.capped:
            spans += [(" ", "plain"), ("(evidence cap reached)", "warning")]
        for name, error in event.sources_failed.items():
            spans += [("\n  ", "plain"), ("source failed", "warning"), (" ", "plain"), _t(name), (": ", "plain")]
            spans.append(_t(error))
        return spans
    if isinstance(event, JudgeFinished):
        scores = ", ".join(f"{one_line(name)} {score}/10" for name, score in event.scores.items())
        who = "judge, computed in code" if event.by == "code" else "judge"
        verdict: Span = ("sufficient", "good") if event.sufficient else ("not yet sufficient", "warning")
        spans = [(f"  {who} ({event.items_judged} items): ", "plain"), _t(scores), (" · ", "plain"), verdict]
        spans.append((f", confidence {event.confidence:.2f}", "plain"))
        if event.gaps:
            spans += [("\n  gaps: ", "plain"), _t("; ".join(event.gaps))]
        return spans
    if isinstance(event, ReportWritten):
        how = f"built in code ({FALLBACK_EXPLANATIONS[event.fallback_reason]})" if event.fallback_reason else "written"
        return [
            ("\n", "plain"),
            (f"report {how}", "strong"),
            (
                f": {event.findings} findings, {event.contrary} contrary, {event.references} references; "
                f"citations dropped {event.dropped_citations}, repaired {event.repaired_citations}",
                "plain",
            ),
        ]
    if isinstance(event, RunWarning):
        return [
            ("  ", "plain"),
            (event.level, "warning" if event.level == "warning" else "plain"),
            (" ", "plain"),
            _t(event.message),
        ]
    if isinstance(event, RunFinished):
        outcome = event.outcome
        seconds = outcome.timings.get("total", 0.0)
        usage = outcome.llm_usage
        failed = f" ({usage.failed_requests} failed)" if usage.failed_requests else ""
        return [
            *_answer(outcome.verdict),
            ("stopped: ", "plain"),
            _t(outcome.stop_reason),
            (
                f" after {quantity(outcome.iterations, 'iteration')}, {len(outcome.evidence)} evidence items, "
                f"{usage.requests} LLM requests{failed}, {seconds:.1f} s",
                "plain",
            ),
        ]
    return None


def answer_text(verdict: Verdict) -> str:
    """The run's answer as the report opens with it (``Verdict.stated``), cut between words to one terminal line's
    worth: the progress output's last line and ``research --quiet``'s."""
    return shorten(verdict.stated, 300, on_word=True)


def _answer(verdict: Verdict | None) -> list[Span]:
    return [("answer: ", "strong"), _t(answer_text(verdict)), ("\n", "plain")] if verdict else []


def plain(spans: list[Span]) -> str:
    return "".join(text for text, _ in spans)


def progress_line(event: ProgressEvent) -> str | None:
    """The event's line as plain text (None: not shown)."""
    spans = describe(event)
    return plain(spans) if spans is not None else None


_EVENT = TypeAdapter[ProgressEvent](ProgressEvent)


def event_line(data: Mapping[str, Any]) -> str:
    """A recorded event's line, plain and trimmed: the run service's own events (``queued``, ``run_ended``)
    and every progress event as the command line words it; an event no wording knows is its kind."""
    kind = str(data.get("kind", "message"))
    if kind == "queued":
        return f"waiting in the queue, position {data.get('position')}"
    if kind == "run_ended":
        error = data.get("error")
        return f"run ended: {data.get('status')}" + (f" ({one_line(str(error))})" if error else "")
    try:
        line = progress_line(_EVENT.validate_python(data))
    except ValidationError:
        return kind
    return line.strip() if line else kind
