"""The research loop: it stops on sufficiency and on each budget, survives LLM and store failures, and
always ends with a cited report and a run record. Fakes for the sources and the store; real agents."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, get_args

import httpx2
import pytest
import structlog
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from deepcritical.agents.models import AgentModels
from deepcritical.appraisal.framing import parse_brief, parse_evidence
from deepcritical.config import Settings
from deepcritical.demo.models import demo_models
from deepcritical.errors import ResearchError, StoreError
from deepcritical.events import JudgeFinished, QueriesPlanned, ReportWritten, RunStarted, RunWarning
from deepcritical.models import SourceFailure
from deepcritical.outputs import FALLBACK_EXPLANATIONS, FallbackReason, Verdict
from deepcritical.run.events import ProgressEvent, RunFinished
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.run.progress import progress_line
from deepcritical.run.record import write_outputs
from deepcritical.run.setup import assemble
from helpers.research_fakes import (
    CORPUS,
    QUESTION,
    STRONG_CORPUS,
    FakeClock,
    FakeEngine,
    FakeHandler,
    FakeStore,
    assert_cited,
    corpus_evidence,
    demo_settings,
    insufficient,
)

pytestmark = pytest.mark.usefixtures("plain_logs")


def failing(status: int, body: str = "provider error") -> FunctionModel:
    def fail(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ModelHTTPError(status, "fake-model", body)

    return FunctionModel(fail)


def models(*, brain: Any = None, judge: Any = None, report: Any = None) -> AgentModels:
    demo_brain, demo_judge, demo_report = demo_models()
    return AgentModels(brain=brain or demo_brain, judge=judge or demo_judge, report=report or demo_report, name="test")


class Harness:
    def __init__(self, settings: Settings | None = None, **options: Any) -> None:
        self.settings = settings or demo_settings()
        self.store = options.pop("store", None) or FakeStore()
        self.handler = options.pop("handler", None) or FakeHandler(STRONG_CORPUS)
        self.clock = options.pop("clock", None) or FakeClock()
        self.waits: list[float] = []
        self.models = options.pop("models", None)
        self.events: list[ProgressEvent] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    async def run(self, question: str = QUESTION) -> ResearchOutcome:
        async with httpx2.AsyncClient() as client:
            parts = assemble(
                self.settings,
                client,
                models=self.models,
                store=self.store,
                handler=self.handler,
                research_engine=FakeEngine(),
                clock=self.clock,
                sleep=self.sleep,
            )
            orchestrator = Orchestrator(parts)
            async for event in orchestrator.run(question):
                self.events.append(event)
        last = self.events[-1]
        assert isinstance(last, RunFinished)
        return last.outcome

    def kinds(self) -> list[str]:
        return [event.kind for event in self.events]


async def test_stops_when_the_judge_finds_the_evidence_sufficient() -> None:
    harness = Harness()
    outcome = await harness.run()
    assert outcome.stop_reason == "sufficient"
    assert outcome.iterations == 1
    assert harness.kinds() == [
        "run_started",
        "iteration_started",
        "queries_planned",
        "search_finished",
        "judge_finished",
        "report_written",
        "run_finished",
    ]
    assert_cited(outcome)
    assert not outcome.report_fallback
    assert {"pubmed", "web", "searxng"} <= set(outcome.sources)
    assert set(outcome.timings) >= {"search", "embedding_dedup", "planning", "judge", "report", "total"}
    assert outcome.llm_usage.requests == 5  # brain 3 (context, search, output), judge 1, report 1
    assert "## Why the run stopped" in outcome.markdown
    assert "DEMO MODE" in outcome.markdown


async def test_low_confidence_does_not_count_as_sufficient() -> None:
    harness = Harness(demo_settings(DEEPCRITICAL_CONFIDENCE=1.0, DEEPCRITICAL_MAX_ITERATIONS=2))
    outcome = await harness.run()
    assert outcome.assessments[0].sufficient
    assert outcome.stop_reason == "max_iterations"
    assert outcome.iterations == 2


async def test_stops_after_max_iterations_with_the_judges_queries_run() -> None:
    harness = Harness(demo_settings(DEEPCRITICAL_MAX_ITERATIONS=3), models=models(judge=FunctionModel(insufficient)))
    outcome = await harness.run()
    assert outcome.stop_reason == "max_iterations"
    assert outcome.iterations == 3
    assert len(outcome.assessments) == 3
    assert len(outcome.plans) == 3
    assert (
        "metformin dementia trial Alzheimer's disease" in harness.handler.queries
    )  # the judge's query, condition kept
    assert len(harness.handler.queries) == len(set(harness.handler.queries))  # no query runs twice
    assert_cited(outcome)


async def test_stops_at_the_evidence_cap() -> None:
    settings = demo_settings(DEEPCRITICAL_MAX_EVIDENCE=3)
    harness = Harness(settings, models=models(judge=FunctionModel(insufficient)))
    outcome = await harness.run()
    assert outcome.stop_reason == "max_evidence"
    assert len(outcome.evidence) == 3
    assert len(harness.store.items) == 3
    assert outcome.iterations == 1


async def test_stops_when_the_time_budget_is_spent_and_still_reports() -> None:
    clock = FakeClock()
    settings = demo_settings(DEEPCRITICAL_MAX_SECONDS=100)

    def slow_search(_query: str) -> None:
        clock.now = 1085  # past the loop's deadline (80 s after the start), inside the report's share

    harness = Harness(settings, clock=clock, handler=FakeHandler(STRONG_CORPUS, on_execute=slow_search))
    outcome = await harness.run()
    assert outcome.stop_reason == "time_budget"
    assert outcome.assessments == []  # the judge never ran
    assert not outcome.report_fallback
    assert_cited(outcome)


async def test_no_time_left_for_the_report_gives_the_extractive_report() -> None:
    clock = FakeClock()

    def very_slow_search(_query: str) -> None:
        clock.now += 1000

    harness = Harness(clock=clock, handler=FakeHandler(STRONG_CORPUS, on_execute=very_slow_search))
    outcome = await harness.run()
    assert outcome.stop_reason == "time_budget"
    assert outcome.report_fallback
    assert_cited(outcome)


async def test_a_hung_source_is_cut_off_by_the_time_budget() -> None:
    never = asyncio.Event()

    class HungHandler(FakeHandler):
        async def execute(self, query: str, max_results_per_tool: int = 10) -> Any:
            await never.wait()

    harness = Harness(demo_settings(DEEPCRITICAL_MAX_SECONDS=0.05), handler=HungHandler())
    outcome = await harness.run()
    assert outcome.stop_reason == "time_budget"
    assert "time budget" in " ".join(e.message for e in harness.events if e.kind == "warning")  # type: ignore[union-attr]


async def test_stops_when_the_llm_request_budget_is_spent() -> None:
    harness = Harness(demo_settings(DEEPCRITICAL_MAX_LLM_REQUESTS=5))
    outcome = await harness.run()
    assert outcome.stop_reason == "llm_budget"
    assert outcome.evidence  # the brain searched before its budget ran out
    assert outcome.llm_usage.requests <= 5
    assert not outcome.report_fallback  # the report had its reserve
    assert_cited(outcome)


async def test_a_transient_llm_error_is_retried() -> None:
    brain, _, _ = demo_models()
    calls: list[int] = []

    async def flaky(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(1)
        if len(calls) == 1:
            raise ModelHTTPError(503, "fake-model", "overloaded")
        assert brain.function is not None
        return await brain.function(messages, info)  # type: ignore[no-any-return, misc]

    harness = Harness(models=models(brain=FunctionModel(flaky)))
    outcome = await harness.run()
    assert outcome.stop_reason == "sufficient"
    assert harness.waits == [1.0]
    assert outcome.errors == []


async def test_a_failing_judge_and_report_are_stood_in_for_by_code_and_the_run_says_so() -> None:
    harness = Harness(models=models(judge=failing(401), report=failing(500)))
    outcome = await harness.run()
    judged = [event for event in harness.events if isinstance(event, JudgeFinished)]
    assert {event.by for event in judged} == {"code"}
    # The assessment computed in code never ends the research: the loop goes on to its iteration budget.
    assert outcome.stop_reason == "max_iterations"
    assert all(assessment.sufficient for assessment in outcome.assessments)
    assert outcome.error is None
    assert outcome.degraded
    assert any("Judge's model failed" in reason for reason in outcome.degraded_reasons)
    assert any("report was built in code" in reason for reason in outcome.degraded_reasons)
    assert outcome.report_fallback
    assert_cited(outcome)
    assert outcome.errors.count("judge: the model server answered HTTP 401: provider error") == 3
    assert any(error.startswith("report: the model server answered HTTP 500") for error in outcome.errors)
    assert len(harness.waits) == 2  # the 500 was retried twice; the 401 was not retried
    assert "done in code because the language model failed" in outcome.markdown


async def test_a_model_that_keeps_failing_ends_the_loop_after_consecutive_failures() -> None:
    # A confidence the code-built assessment does not reach, so only the failures can end the loop.
    settings = demo_settings(DEEPCRITICAL_MAX_ITERATIONS=5, DEEPCRITICAL_CONFIDENCE=0.99)
    harness = Harness(settings, models=models(brain=failing(401), judge=failing(401), report=failing(401)))
    outcome = await harness.run()
    assert outcome.stop_reason == "llm_failed"
    # iteration 1: the Brain fails (1), the Judge fails (2); iteration 2: the Brain fails (3) and the loop ends
    assert outcome.iterations == 2
    assert len([error for error in outcome.errors if not error.startswith("report")]) == 3
    assert outcome.evidence  # each failed Brain turn still searched, with queries built in code
    assert outcome.error is None
    assert outcome.degraded
    assert outcome.report_fallback_reason == "report_failed"


async def test_a_model_failure_between_successes_does_not_end_the_loop() -> None:
    judge_calls: list[int] = []

    def judge_fails_once(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        judge_calls.append(1)
        if len(judge_calls) == 1:
            raise ModelHTTPError(401, "fake-model", "flaky")
        return insufficient(messages, info)

    settings = demo_settings(DEEPCRITICAL_MAX_ITERATIONS=3, DEEPCRITICAL_CONFIDENCE=0.99)
    harness = Harness(settings, models=models(judge=FunctionModel(judge_fails_once)))
    outcome = await harness.run()
    assert outcome.stop_reason == "max_iterations"
    assert outcome.iterations == 3
    assert len(judge_calls) == 3
    assert [event.by for event in harness.events if isinstance(event, JudgeFinished)] == ["code", "model", "model"]


async def test_a_crash_in_the_report_stage_fails_the_run_but_keeps_an_extractive_report() -> None:
    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise TypeError("a bug, not a model failure")

    harness = Harness(models=models(report=FunctionModel(broken)))
    outcome = await harness.run()
    assert outcome.error is not None
    assert outcome.error.startswith("the report stage crashed: report: TypeError")
    assert outcome.report_fallback_reason == "report_crashed"
    assert_cited(outcome)
    assert "The report stage crashed" in outcome.markdown


async def test_a_store_failure_choosing_the_reports_evidence_fails_the_run_but_keeps_the_report() -> None:
    store = FakeStore()
    judge_selection = store.select_for_judge

    async def fails_for_the_report(query: str, k: int) -> list[Any]:
        if k > harness.settings.judge_max_items:  # the report's selection is wider than the Judge's
            raise StoreError("connection refused")
        return await judge_selection(query, k)

    store.select_for_judge = fails_for_the_report  # type: ignore[method-assign]
    harness = Harness(store=store)
    outcome = await harness.run()
    assert outcome.error == "choosing the report's evidence failed: connection refused"
    assert not outcome.report_fallback  # the Report agent still wrote it, from the most relevant items
    assert outcome.report_pool
    assert outcome.verdict is not None
    assert outcome.verdict.label != "insufficient"
    assert_cited(outcome)


async def test_the_verdict_given_to_the_report_writer_is_the_one_the_run_states() -> None:
    told: list[dict[str, Any]] = []
    _, _, demo_report = demo_models()

    async def listening(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = next(
            part.content
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, UserPromptPart)
        )
        told.append(parse_brief(str(prompt))["verdict_in_code"])
        return await demo_report.function(messages, info)  # type: ignore[misc]

    outcome = await Harness(models=models(report=FunctionModel(listening))).run()
    assert outcome.verdict is not None
    assert outcome.verdict.by == "code"
    assert told == [
        {
            "label": outcome.verdict.label,
            "answer": outcome.verdict.answer,
            "certainty": outcome.verdict.certainty,
            "confidence": outcome.verdict.confidence,
            "rests_on": outcome.verdict.evidence_ids,
            "method": outcome.verdict.method,
        }
    ]


async def test_a_crash_keeps_the_evidence_and_still_finishes_with_a_record(tmp_path: Path) -> None:
    store = FakeStore()
    later = [corpus_evidence(70 + i, f"Metformin and dementia: a later finding number {i}.") for i in range(3)]
    handler = FakeHandler(answer=lambda query: later if "dementia" in query else CORPUS)
    harness = Harness(models=models(judge=FunctionModel(insufficient)), store=store, handler=handler)
    harness.settings = demo_settings(DEEPCRITICAL_MAX_ITERATIONS=2)
    real_add = store.add
    added: list[int] = []

    async def add_then_fail(evidence: Any) -> int:
        if added:
            raise StoreError("disk full")
        added.append(1)
        return await real_add(evidence)

    store.add = add_then_fail  # type: ignore[method-assign]
    outcome = await harness.run()
    finished = harness.events[-1]
    assert isinstance(finished, RunFinished)
    assert finished.error == "StoreError: disk full"
    assert outcome.stop_reason == "error"
    assert outcome.evidence
    assert {item.id for item in outcome.evidence} == set(store.items)
    assert_cited(outcome)
    report_path, run_path = write_outputs(outcome, tmp_path / "out")
    assert json.loads(run_path.read_text())["error"] == "StoreError: disk full"
    assert report_path.read_text().startswith("# ")


async def test_no_evidence_ends_in_a_report_that_says_so() -> None:
    harness = Harness(
        handler=FakeHandler(
            answer=lambda _query: [], failures=[SourceFailure(source="pubmed", reason="HTTP 500 after 3 attempt(s)")]
        )
    )
    outcome = await harness.run()
    assert outcome.stop_reason == "no_evidence"
    assert outcome.report.answer_brief.startswith("No evidence was found")
    assert outcome.evidence == []
    assert outcome.report.references == []
    assert "pubmed: HTTP 500" in outcome.markdown
    assert harness.kinds().count("warning") == 3


async def test_the_run_id_is_bound_to_every_log_line() -> None:
    capture = structlog.testing.LogCapture()
    structlog.configure(processors=[structlog.contextvars.merge_contextvars, capture])
    try:
        outcome = await Harness().run()
    finally:
        structlog.reset_defaults()
    assert capture.entries
    assert {entry.get("run_id") for entry in capture.entries} == {outcome.run_id}


async def test_stopping_the_consumer_early_cancels_the_run() -> None:
    searching, cancelled = asyncio.Event(), asyncio.Event()

    class HangingHandler(FakeHandler):
        async def execute(self, query: str, max_results_per_tool: int = 10) -> Any:
            searching.set()
            try:
                await asyncio.Event().wait()  # a source that never answers
            except asyncio.CancelledError:
                cancelled.set()
                raise

    store = FakeStore()
    async with httpx2.AsyncClient() as client:
        orchestrator = Orchestrator(
            assemble(demo_settings(), client, store=store, handler=HangingHandler(), research_engine=FakeEngine())
        )
        stream = orchestrator.run(QUESTION)
        kinds = []
        async for event in stream:
            kinds.append(event.kind)
            if event.kind == "queries_planned":
                await searching.wait()
                break
        await stream.aclose()  # type: ignore[attr-defined]
    assert kinds[-1] == "queries_planned"
    assert cancelled.is_set()  # the search in flight was cancelled, not left running
    assert store.items == {}


async def test_no_secret_reaches_the_run_record_or_the_report(tmp_path: Path) -> None:
    secrets = {
        "GOOGLE_API_KEY": "AIza-google-secret-1",
        "OPENAI_API_KEY": "sk-openai-secret-2",
        "ANTHROPIC_API_KEY": "ak-anthropic-secret-3",
        "NCBI_API_KEY": "ncbi-secret-4",
        "YOU_API_KEY": "you-secret-5",
    }
    settings = Settings(_env_file=None, **secrets)  # type: ignore[arg-type]
    leaky = failing(500, body=f"bad key {secrets['GOOGLE_API_KEY']}")  # a provider echoing the key back
    harness = Harness(settings, models=models(judge=leaky))
    outcome = await harness.run()
    report_path, run_path = write_outputs(outcome, tmp_path)
    written = report_path.read_text() + run_path.read_text() + (tmp_path / "report.json").read_text()
    events = "".join(event.model_dump_json() for event in harness.events)
    assert outcome.errors
    assert "***" in outcome.errors[0]
    for value in secrets.values():
        assert value not in written
        assert value not in events
    record = json.loads(run_path.read_text())
    assert record["settings"]["google_api_key"] == "set"
    assert record["degraded"] is True
    assert {item["id"] for item in record["evidence"]} >= set(record["report"]["references"])


async def test_the_store_is_kept_open_when_the_caller_owns_it() -> None:
    harness = Harness()
    await harness.run()
    assert not harness.store.closed
    assert {item.id for item in CORPUS} == set(harness.store.items)


@pytest.mark.parametrize("question", ["", "   "])
async def test_an_empty_question_is_refused(question: str) -> None:
    with pytest.raises(ResearchError, match="empty"):
        await Harness().run(question)


async def test_a_store_that_will_not_open_fails_the_run_once_it_has_said_it_started() -> None:
    async def no_store(settings: Settings, run_id: str, question: str) -> Any:
        raise StoreError("cannot open the evidence store")

    async with httpx2.AsyncClient() as client:
        orchestrator = Orchestrator(
            assemble(
                demo_settings(),
                client,
                open_store=no_store,
                handler=FakeHandler(STRONG_CORPUS),
                research_engine=FakeEngine(),
            )
        )
        events: list[ProgressEvent] = []

        async def consume() -> None:
            async for event in orchestrator.run(QUESTION):
                events.append(event)

        with pytest.raises(StoreError, match="cannot open"):
            await consume()
    # The start is said before the store opens (a server's concurrent runs each show it at once); nothing
    # after it: no search, no report.
    assert [type(event) for event in events] == [RunStarted]


def warnings_of(harness: Harness) -> list[str]:
    return [event.message for event in harness.events if isinstance(event, RunWarning)]


async def test_a_brain_that_fails_before_searching_still_gets_evidence_from_queries_built_in_code() -> None:
    harness = Harness(models=models(brain=failing(401)))
    outcome = await harness.run()
    assert outcome.stop_reason == "sufficient"  # the Judge went on to assess what the code-built search found
    assert QUESTION.rstrip("?") in harness.handler.queries  # the code-built queries start from the question itself
    assert outcome.evidence
    assert outcome.error is None
    assert outcome.degraded
    assert [event.by for event in harness.events if isinstance(event, QueriesPlanned)] == ["code"]
    assert_cited(outcome)
    assert any("queries built in code" in message for message in warnings_of(harness))


@pytest.mark.parametrize("requests", [2, 4])
async def test_a_tiny_llm_request_budget_still_ends_with_evidence(requests: int) -> None:
    harness = Harness(demo_settings(DEEPCRITICAL_MAX_LLM_REQUESTS=requests))
    outcome = await harness.run()
    assert outcome.stop_reason == "llm_budget"
    assert outcome.evidence
    assert outcome.llm_usage.requests <= requests
    assert outcome.error is None
    assert_cited(outcome)


@pytest.mark.parametrize(
    ("settings", "brain", "stop", "says"),
    [
        (demo_settings(), failing(401), "llm_failed", "the language model failed"),
        (demo_settings(DEEPCRITICAL_MAX_LLM_REQUESTS=1), None, "llm_budget", "request budget"),
    ],
)
async def test_no_evidence_because_the_llm_stopped_the_run_is_a_failed_run(
    tmp_path: Path, settings: Settings, brain: Any, stop: str, says: str
) -> None:
    harness = Harness(settings, models=models(brain=brain), handler=FakeHandler(answer=lambda _query: []))
    outcome = await harness.run()
    assert outcome.stop_reason == stop
    assert outcome.evidence == []
    assert outcome.error is not None
    assert says in outcome.error
    finished = harness.events[-1]
    assert isinstance(finished, RunFinished)
    assert finished.error == outcome.error
    report_path, run_path = write_outputs(outcome, tmp_path)  # the report and the record are still written
    assert json.loads(run_path.read_text())["error"] == outcome.error
    assert report_path.read_text().startswith("# ")


async def test_no_evidence_without_an_llm_failure_is_not_a_failed_run() -> None:
    outcome = await Harness(handler=FakeHandler(answer=lambda _query: [])).run()
    assert outcome.stop_reason == "no_evidence"
    assert outcome.error is None


def cites_nothing(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    finding = {"statement": "Metformin cures everything.", "evidence_ids": ["pmid:99999999"]}
    args = {"question": QUESTION, "answer_brief": "Yes.", "key_findings": [finding]}
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


@pytest.mark.parametrize(
    ("options", "reason", "note"),
    [
        ({"handler": FakeHandler(answer=lambda _query: [])}, "no_evidence", None),
        ({"models": models(report=failing(400))}, "report_failed", "The Report agent failed"),
        (
            {"models": models(report=FunctionModel(cites_nothing))},
            "no_cited_findings",
            "findings cited collected evidence",
        ),
    ],
)
async def test_the_report_event_says_why_the_report_was_built_in_code(
    options: dict[str, Any], reason: str, note: str | None
) -> None:
    harness = Harness(**options)
    outcome = await harness.run()
    written = next(event for event in harness.events if isinstance(event, ReportWritten))
    assert written.fallback
    assert written.fallback_reason == reason
    assert outcome.report_fallback_reason == reason
    if note is not None:
        assert any(note in limitation for limitation in outcome.report.limitations)
    if reason == "no_evidence":
        assert not any("Report agent" in limitation for limitation in outcome.report.limitations)


def test_every_fallback_reason_has_an_explanation() -> None:
    assert set(FALLBACK_EXPLANATIONS) == set(get_args(FallbackReason))


async def test_a_report_whose_valid_findings_are_all_contrary_is_kept() -> None:
    def only_contrary(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        first = messages[0]
        assert isinstance(first, ModelRequest)
        prompt = next(part.content for part in first.parts if isinstance(part, UserPromptPart))
        assert isinstance(prompt, str)
        item = parse_evidence(prompt)[0]
        finding = {"statement": "Metformin did not improve cognition.", "evidence_ids": [item.id]}
        args = {
            "question": QUESTION,
            "answer_brief": "Probably not.",
            "key_findings": [],
            "contrary_evidence": [finding],
        }
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    harness = Harness(models=models(report=FunctionModel(only_contrary)))
    outcome = await harness.run()
    written = next(event for event in harness.events if isinstance(event, ReportWritten))
    assert not outcome.report_fallback
    assert written.fallback_reason is None
    assert outcome.report.answer_brief == "Probably not."
    assert [finding.statement for finding in outcome.report.contrary_evidence] == [
        "Metformin did not improve cognition."
    ]
    assert not any("extractive" in limitation for limitation in outcome.report.limitations)


PUBMED_DOWN = SourceFailure(source="pubmed", reason="cannot connect to eutils.ncbi.nlm.nih.gov")
WEB_DOWN = SourceFailure(source="web", reason="cannot connect to duckduckgo.com")


async def test_no_evidence_because_no_source_answered_is_a_failed_run() -> None:
    down = [PUBMED_DOWN, WEB_DOWN]
    harness = Harness(handler=FakeHandler(answer=lambda _query: [], failures=down, sources=("pubmed", "web")))
    outcome = await harness.run()
    assert outcome.stop_reason == "no_evidence"
    assert outcome.error is not None
    assert outcome.error.startswith("no source answered any search: ")
    assert "pubmed: cannot connect" in outcome.error
    assert "web: cannot connect" in outcome.error
    assert "\n" not in outcome.error
    assert "pubmed: pubmed" not in outcome.markdown
    assert "link removed" not in outcome.markdown  # the hosts in the errors are shown, escaped, not removed
    assert "Source problem, pubmed: cannot connect to eutils.ncbi.nlm.nih.gov" in outcome.markdown
    finished = harness.events[-1]
    assert isinstance(finished, RunFinished)
    assert finished.error == outcome.error


async def test_evidence_recalled_from_earlier_runs_alone_never_makes_a_run_succeed() -> None:
    down = [PUBMED_DOWN, WEB_DOWN]
    store = FakeStore(library=CORPUS)  # an earlier run found all of these
    handler = FakeHandler(answer=lambda _query: [], failures=down, sources=("pubmed", "web"))
    recalling = demo_settings().model_copy(update={"recall": True})  # the demo preset alone never recalls
    harness = Harness(recalling, store=store, handler=handler)
    outcome = await harness.run()
    assert outcome.evidence
    assert set(outcome.recalled_ids) == {item.id for item in outcome.evidence}
    assert outcome.error is not None
    assert outcome.error.startswith("no source answered any search: ")
    assert "recalled from an earlier run" in outcome.markdown
    finished = [event for event in harness.events if event.kind == "search_finished"]
    assert finished
    assert all(event.kept == 0 for event in finished)  # type: ignore[union-attr]


async def test_when_both_the_model_and_every_source_fail_both_are_named() -> None:
    down = [PUBMED_DOWN]
    handler = FakeHandler(answer=lambda _query: [], failures=down, sources=("pubmed",))
    broken = models(brain=failing(401), judge=failing(401), report=failing(401))
    harness = Harness(demo_settings(DEEPCRITICAL_MAX_ITERATIONS=5), handler=handler, models=broken)
    outcome = await harness.run()
    assert outcome.stop_reason == "llm_failed"
    assert outcome.error is not None
    assert "the language model failed" in outcome.error
    assert "no source answered any search: pubmed: cannot connect" in outcome.error


async def test_sources_that_answered_with_nothing_relevant_are_not_a_failed_run() -> None:
    harness = Harness(
        handler=FakeHandler(
            answer=lambda _query: [], failures=[SourceFailure(source="pubmed", reason="HTTP 500 after 3 attempt(s)")]
        )
    )
    outcome = await harness.run()
    assert outcome.stop_reason == "no_evidence"
    assert outcome.error is None


async def test_run_started_names_the_searched_sources_and_the_disabled_ones_apart() -> None:
    handler = FakeHandler(STRONG_CORPUS, sources=("pubmed", "web"))
    handler.unavailable = {"you": "YOU_API_KEY is not set"}
    harness = Harness(handler=handler)
    await harness.run()
    started = harness.events[0]
    assert isinstance(started, RunStarted)
    assert started.sources == ["pubmed", "web"]
    assert started.sources_disabled == {"you": "YOU_API_KEY is not set"}


async def test_code_only_stages_run_without_any_model_request_and_are_not_degraded() -> None:
    events: list[ProgressEvent] = []
    async with httpx2.AsyncClient() as client:
        parts = assemble(
            demo_settings(DEEPCRITICAL_MAX_ITERATIONS=2),
            client,
            code_only=True,
            store=FakeStore(),
            handler=FakeHandler(),
            research_engine=FakeEngine(),
        )
        assert parts.models is None
        events = [event async for event in Orchestrator(parts).run(QUESTION)]
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    outcome = finished.outcome
    assert outcome.error is None
    assert outcome.llm_usage.requests == 0
    assert outcome.stop_reason == "max_iterations"  # only the Judge's model may call the evidence sufficient
    assert outcome.report_fallback_reason == "code_only"
    assert not outcome.degraded
    planned = [event.by for event in events if isinstance(event, QueriesPlanned)]
    assert planned
    assert set(planned) == {"code"}
    assert [event.by for event in events if isinstance(event, JudgeFinished)] == ["code", "code"]
    assert_cited(outcome)


async def test_the_finished_runs_line_opens_with_its_answer_and_certainty() -> None:
    harness = Harness()
    await harness.run()
    finished = harness.events[-1]
    assert isinstance(finished, RunFinished)
    verdict = finished.outcome.verdict
    assert verdict is not None
    assert verdict.answer is not None
    assert verdict.certainty is not None
    answer, stopped = (progress_line(finished) or "").split("\n")
    assert answer == f"answer: {verdict.headline} · the outcome: {verdict.answer} · GRADE certainty {verdict.certainty}"
    assert stopped.startswith("stopped: sufficient")
    unanswered = Verdict(label="insufficient", confidence=0.0, rationale="Insufficient: nothing names colchicine.")
    nothing = RunFinished(outcome=finished.outcome.model_copy(update={"verdict": unanswered}))
    assert (progress_line(nothing) or "").startswith("answer: Insufficient: nothing names colchicine.\nstopped:")
