"""The live (non-demo) LLM path end to end, without the network: the real Orchestrator, the stand-in sources
(``--demo-sources``), the real store and agents, and real pydantic-ai models whose SDKs send their requests
through the run's one ``httpx2.AsyncClient``, to a scripted model speaking the real wire format of an
OpenAI-compatible server (in each output mode), Gemini ``generateContent`` or Anthropic Messages."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx2
import pytest

from deepcritical.errors import ConfigError
from deepcritical.reading.frame import frame_question
from deepcritical.sources.query import with_terms
from helpers.llm_server import (
    BRAIN_QUERIES,
    FABRICATED_ID,
    FABRICATED_URL,
    INVENTED_CLAIM,
    LlmServer,
    answer_for,
    live_settings,
    research,
    scripted,
)
from helpers.llm_wires import OPENAI, OPENAI_PROMPTED, WIRES, Ask, Reply, Wire
from helpers.research_fakes import QUESTION

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("plain_logs")]
SEARCHED = [with_terms(query, frame_question(QUESTION).required) for query in BRAIN_QUERIES]

CITED = re.compile(r"Evidence id: `([^`]+)`")


@pytest.fixture(autouse=True)
def no_provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing from the machine: the providers must run on what the settings pass them.
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def no_request_leaves_by_another_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model that bypassed the run's client would reach the network through httpx2's own transport."""

    async def refuse(self: httpx2.AsyncHTTPTransport, request: httpx2.Request) -> httpx2.Response:
        raise AssertionError(f"a request bypassed the run's client: {request.method} {request.url}")

    monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", refuse)


@pytest.mark.parametrize("wire", WIRES)
async def test_a_live_model_runs_the_research_through_the_runs_client(wire: Wire, tmp_path: Path) -> None:
    server = LlmServer(wire)
    run = await research(server, tmp_path)
    outcome = run.outcome

    assert outcome.error is None
    assert outcome.errors == []
    assert not outcome.degraded
    assert outcome.stop_reason == "sufficient"
    assert outcome.demo  # the sources were the stand-ins
    assert not outcome.report_fallback

    # The start-up check asked the model server first, before any search.
    assert wire.is_models(server.requests[0])
    assert sum(wire.is_models(request) for request in server.requests) == 1

    # The Brain searched, then finished; the Judge judged once; the Report was sent back twice for its
    # fabricated id (the output validator) and accepted on its last attempt.
    assert [agent for agent, _ in server.replies] == ["brain", "brain", "judge", "report", "report", "report"]
    assert outcome.searches[0].queries == SEARCHED  # the Brain's queries, each keeping the question's condition
    assert outcome.plans[0].queries == BRAIN_QUERIES
    assert {"pubmed", "searxng"} <= set(outcome.searches[0].sources_answered)

    # Each agent was asked in the run's output mode, with its own max_tokens.
    expected_mode = {"openai": {"auto": "native", "tool": "tool", "prompted": "prompted"}}.get(wire.name, {})
    mode = expected_mode.get(wire.output_mode, "tool")
    assert {ask.mode for ask in server.asks} == {mode}
    assert outcome.output_mode == ("prompted (JSON mode)" if mode == "prompted" else mode)
    limits = {"brain": 4096, "judge": 4096, "report": 8192}
    assert all(ask.max_tokens == limits[ask.agent] for ask in server.asks)
    if wire.name == "openai":
        # What llama.cpp reads: max_tokens, never max_completion_tokens.
        assert all("max_completion_tokens" not in json.loads(request.content) for request in server.llm_requests)
    if mode in ("native", "prompted"):
        judge = next(ask for ask in server.asks if ask.agent == "judge")
        # The schema a grammar is built from carries the bounds: bounded numbers as lists of values (which
        # every grammar engine enforces) and list lengths; no string lengths, which break llama.cpp's grammars.
        properties = judge.output_schema["properties"]
        score = properties["mechanism"]["properties"]["score"]
        assert (score["minimum"], score["maximum"], score["enum"]) == (0, 10, list(range(11)))
        assert properties["confidence"]["enum"] == [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]
        assert properties["gaps"]["maxItems"] == 6
        assert "maxLength" not in json.dumps(judge.output_schema)
        brain = next(ask for ask in server.asks if ask.agent == "brain" and ask.output_schema)
        assert brain.output_schema["properties"]["queries"]["minItems"] == 1
        assert all(ask.json_mode == (mode == "prompted") for ask in server.asks)

    # The Judge cited ids it read from its evidence block; they are kept.
    judged = server.prompt_ids["judge"]
    assert judged
    assert outcome.assessments[0].cited_ids == judged[:3]

    # The report: the real ids stay, the fabricated id, the invented claim and the URL are gone.
    collected = {item["id"] for item in run.record["evidence"]}
    cited = set(CITED.findall(run.markdown))
    assert set(server.prompt_ids["report"][:2]) <= cited <= collected
    assert not re.search(rf"{FABRICATED_ID}\b", run.markdown)
    assert FABRICATED_URL not in run.markdown
    assert INVENTED_CLAIM not in run.markdown
    assert FABRICATED_ID in outcome.citation_audit.dropped_ids

    # Usage is what the server reported, request by request, and per agent.
    assert run.record["llm_usage"] == {
        "requests": 6,
        "failed_requests": 0,
        "input_tokens": sum(prompt for prompt, _ in server.usage),
        "output_tokens": sum(completion for _, completion in server.usage),
    }
    agents = run.record["llm_agents"]
    assert {name: (row["requests"], row["outputs_validated"], row["fallbacks"]) for name, row in agents.items()} == {
        "brain": (2, 1, 0),
        "judge": (1, 1, 0),
        "report": (3, 3, 0),  # three answers fit the schema; the citation check sent two back
    }

    # Every LLM request went through the run's client, carried the key, and had the LLM timeout rather
    # than the run client's 30 s; the key is in no output.
    for request in server.llm_requests:
        assert wire.sent_key(request) == wire.key
        assert request.extensions["timeout"]["read"] == 120.0
    assert wire.key not in run.raw
    assert wire.key not in run.markdown
    assert run.sleeps == []


async def test_the_timeout_and_max_tokens_come_from_the_settings(tmp_path: Path) -> None:
    server = LlmServer(OPENAI)
    await research(
        server,
        tmp_path,
        DEEPCRITICAL_LLM_TIMEOUT=7.5,
        DEEPCRITICAL_BRAIN_MAX_TOKENS=300,
        DEEPCRITICAL_JUDGE_MAX_TOKENS=400,
        DEEPCRITICAL_REPORT_MAX_TOKENS=500,
    )
    assert {(ask.agent, ask.max_tokens) for ask in server.asks} == {("brain", 300), ("judge", 400), ("report", 500)}
    assert {request.extensions["timeout"]["read"] for request in server.llm_requests} == {7.5}


async def test_a_native_brain_that_only_answers_still_searches_its_queries(tmp_path: Path) -> None:
    # Under a grammar a model cannot call tools: the queries in its answer are searched.
    def no_tools(ask: Ask, ids: list[str]) -> Reply:
        return Reply(text=json.dumps(answer_for(ask, ids)))

    run = await research(LlmServer(OPENAI, script=no_tools), tmp_path)
    assert run.outcome.searches[0].queries == SEARCHED
    assert not run.outcome.degraded
    assert run.outcome.error is None


async def test_a_server_that_refuses_json_schema_is_asked_in_json_mode_for_the_rest_of_the_run(tmp_path: Path) -> None:
    server = LlmServer(OPENAI, refuse_json_schema=True)
    run = await research(server, tmp_path)

    # One refusal, then every request of every agent in prompted JSON mode, with the schema beside it.
    assert server.replies[0] == ("brain", 500)  # refused, and not retried
    assert [ask.mode for ask in server.asks] == ["native", *["prompted"] * (len(server.asks) - 1)]
    assert all(ask.json_mode and ask.output_schema["properties"] for ask in server.asks[1:])
    assert run.outcome.output_mode == "prompted (JSON mode)"
    (refusal,) = run.outcome.output_mode_refusals
    assert refusal == (
        "the model server refused native output (HTTP 500: 1 validation error: {'type': 'literal_error', 'loc': "
        "('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': "
        "'json_sche…); using prompted (JSON mode) output for the rest of the run"
    )
    assert refusal in run.warnings
    # A refused mode is not a model failure: the model did the work.
    assert run.outcome.errors == []
    assert not run.outcome.degraded
    assert run.outcome.stop_reason == "sufficient"


async def test_reasoning_blocks_and_prose_around_the_json_are_removed_before_parsing(tmp_path: Path) -> None:
    def thinking(ask: Ask, ids: list[str]) -> Reply:
        reply = scripted(ask, ids)
        if reply.text is None:
            return reply
        # A reasoning model's habits: thinking first, prose around the object, a trailing comma.
        body = reply.text[:-1] + ",}"
        return Reply(text=f"<think>The user wants JSON. {{not: json}}</think>\nSure! Here it is:\n{body}\nDone.")

    run = await research(LlmServer(OPENAI_PROMPTED, script=thinking), tmp_path)
    assert run.outcome.errors == []
    assert not run.outcome.degraded
    assert run.outcome.assessments[0].confidence == 0.9
    assert all(row["outputs_refused"] == 0 for row in run.record["llm_agents"].values())


async def test_an_answer_that_breaks_the_schema_is_one_line_in_the_progress_and_the_record(tmp_path: Path) -> None:
    def overconfident(ask: Ask, ids: list[str]) -> Reply:
        reply = scripted(ask, ids)
        if ask.agent == "judge" and reply.text is not None:
            return Reply(text=reply.text.replace('"confidence": 0.9', '"confidence": 5'))
        return reply

    run = await research(LlmServer(OPENAI, script=overconfident), tmp_path, DEEPCRITICAL_MAX_ITERATIONS=1)
    message = "judge: the Judge's answer did not fit its schema: confidence must be at most 1, got 5"
    assert run.outcome.errors == [message]
    assert message in run.warnings
    assert run.record["errors"] == [message]
    assert "validation error" not in run.raw
    # The Judge was asked three times (the agent's own retries), then the code assessed the evidence.
    judge = run.record["llm_agents"]["judge"]
    assert (judge["requests"], judge["outputs_refused"], judge["outputs_validated"], judge["fallbacks"]) == (3, 3, 0, 1)
    assert run.outcome.degraded
    assert any("the assessment was computed in code" in reason for reason in run.outcome.degraded_reasons)


@pytest.mark.parametrize("wire", WIRES)
async def test_a_server_error_from_the_model_is_retried(wire: Wire, tmp_path: Path) -> None:
    server = LlmServer(wire, statuses=[500])
    run = await research(server, tmp_path)

    # The SDKs do not retry on their own (``max_retries=0``): the run retries, once, with its own sleep.
    assert server.replies[:2] == [("brain", 500), ("brain", 200)]
    assert run.sleeps == [1.0]
    assert run.outcome.errors == []
    assert run.outcome.stop_reason == "sufficient"
    # The failed request was sent, so it is counted.
    assert run.record["llm_usage"]["requests"] == 7
    assert run.record["llm_usage"]["failed_requests"] == 1
    assert run.record["llm_agents"]["brain"]["requests"] == 3


@pytest.mark.parametrize("wire", WIRES)
async def test_a_rejected_key_ends_the_run_with_a_report_not_a_traceback(wire: Wire, tmp_path: Path) -> None:
    server = LlmServer(wire, permanent=401)
    run = await research(server, tmp_path)
    outcome = run.outcome

    # A 401 is not retried: one request per agent call, and no waiting. The loop goes on with code standing
    # in for the model (a code-built search, a code-built assessment that never ends the research on its
    # own) until the third failure in a row ends it, and the report is built in code.
    assert server.replies == [("brain", 401), ("judge", 401), ("brain", 401), ("report", 401)]
    assert run.sleeps == []
    # One line each, the provider's own message, the echoed key redacted.
    assert outcome.errors == [
        f"{stage}: the model server answered HTTP 401: Incorrect API key provided: ***"
        for stage in ("planning", "judge", "planning", "report")
    ]
    assert outcome.stop_reason == "llm_failed"
    assert run.record["llm_usage"]["requests"] == 4
    assert run.record["llm_usage"]["failed_requests"] == 4
    assert {name: row["fallbacks"] for name, row in run.record["llm_agents"].items()} == {
        "brain": 2,
        "judge": 1,
        "report": 1,
    }
    assert outcome.evidence
    assert outcome.error is None
    assert outcome.degraded
    assert outcome.report_fallback_reason == "report_failed"
    cited = set(CITED.findall(run.markdown))
    assert cited
    assert cited <= {item["id"] for item in run.record["evidence"]}
    # The provider echoed the key in its error; the run recorded the error without it.
    assert wire.key not in run.raw
    assert wire.key not in run.markdown


async def test_nothing_listening_at_the_base_url_fails_before_any_search(tmp_path: Path) -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    settings = live_settings(OPENAI, tmp_path / "home")
    searched: list[str] = []

    def stand_ins(request: httpx2.Request) -> httpx2.Response:
        searched.append(str(request.url))
        return httpx2.Response(500)

    from deepcritical.demo.transport import StandInRouter
    from deepcritical.run.orchestrator import Orchestrator
    from deepcritical.run.setup import assemble
    from deepcritical.sources.factory import make_http_client

    router = StandInRouter(httpx2.MockTransport(refuse), stand_ins=httpx2.MockTransport(stand_ins))
    async with make_http_client(router) as client:
        with pytest.raises(ConfigError) as raised:
            await Orchestrator(assemble(settings, client)).research("Does metformin help?")
    assert str(raised.value) == (
        "the model server at http://llm.local/v1/models does not answer (connection refused): start it, "
        "or set DEEPCRITICAL_OPENAI_BASE_URL (or OPENAI_BASE_URL)"
    )
    assert searched == []


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (401, {"error": {"message": "bad key"}}, "refused the API key (HTTP 401): check OPENAI_API_KEY"),
        (404, {"error": {"message": "no such model"}}, None),  # a compatible server need not list models
    ],
)
async def test_the_start_up_check_names_what_to_fix(
    status: int, body: dict[str, Any], expected: str | None, tmp_path: Path
) -> None:
    from deepcritical.agents.models import check_endpoint, live_models

    settings = live_settings(OPENAI, tmp_path / "home")
    models = live_models(settings)
    assert models.endpoint is not None
    async with httpx2.AsyncClient(
        transport=httpx2.MockTransport(lambda _: httpx2.Response(status, json=body))
    ) as client:
        if expected is None:
            await check_endpoint(models.endpoint, client)
        else:
            with pytest.raises(ConfigError, match=re.escape(expected)):
                await check_endpoint(models.endpoint, client)


@pytest.mark.parametrize("wire", ["GEMINI", "ANTHROPIC", "OPENAI_HOSTED"])
async def test_a_hosted_api_that_does_not_answer_points_at_the_network_not_at_a_key(wire: str, tmp_path: Path) -> None:
    """With GOOGLE_API_KEY set, an unreachable Gemini said "start it, or set GOOGLE_API_KEY"."""
    from deepcritical.agents.models import check_endpoint, live_models
    from helpers import llm_wires

    if wire == "OPENAI_HOSTED":  # the OpenAI API itself: a key and no base URL
        settings = live_settings(OPENAI, tmp_path / "home").model_copy(update={"openai_base_url": None})
    else:
        settings = live_settings(getattr(llm_wires, wire), tmp_path / "home")
    models = live_models(settings)
    assert models.endpoint is not None

    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("[Errno -3] Temporary failure in name resolution", request=request)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(refuse)) as client:
        with pytest.raises(ConfigError) as raised:
            await check_endpoint(models.endpoint, client)
    message = str(raised.value)
    assert message.endswith(
        "does not answer ([Errno -3] Temporary failure in name resolution): check this "
        "machine's connection to it (or its proxy, HTTPS_PROXY)"
    )
    assert "API_KEY" not in message
    assert "start it" not in message


async def test_a_deprecated_model_answers_without_a_python_warning(
    tmp_path: Path, recwarn: pytest.WarningsRecorder
) -> None:
    """pydantic-ai warns at every request to a model its provider deprecated; the run names it once, in its
    first line (``model_line``), and the progress output carries no ``DeprecatedModelWarning``."""
    from pydantic_ai import DeprecatedModelWarning

    from deepcritical.agents.models import live_models
    from helpers.llm_wires import GOOGLE_KEY

    deprecated = Wire("gemini", "google:gemini-2.5-flash", "generativelanguage.googleapis.com", GOOGLE_KEY)
    # The premise: the installed pydantic-ai records this model's deprecation.
    assert live_models(live_settings(deprecated, tmp_path / "home")).brain.profile.get("deprecation") is not None
    server = LlmServer(deprecated)
    run = await research(server, tmp_path)
    assert run.outcome.error is None
    assert server.replies  # its requests were sent
    assert [str(w.message) for w in recwarn if issubclass(w.category, DeprecatedModelWarning)] == []


async def test_an_unknown_gemini_model_is_named_at_start(tmp_path: Path) -> None:
    from deepcritical.agents.models import check_endpoint, live_models
    from helpers.llm_wires import GEMINI

    models = live_models(live_settings(GEMINI, tmp_path / "home", DEEPCRITICAL_MODEL="google:gemini-9"))
    assert models.endpoint is not None
    not_found = httpx2.MockTransport(lambda _: httpx2.Response(404, json={"error": {"message": "not found"}}))
    async with httpx2.AsyncClient(transport=not_found) as client:
        with pytest.raises(ConfigError, match=r"does not know the model 'gemini-9' .*DEEPCRITICAL_MODEL"):
            await check_endpoint(models.endpoint, client)


async def test_a_disabled_source_is_named_once_at_start_and_never_as_a_failure(tmp_path: Path) -> None:
    from deepcritical.run.progress import progress_line

    settings = live_settings(OPENAI, tmp_path / "home").model_copy(update={"you_api_key": None})
    run = await research(LlmServer(OPENAI), tmp_path, settings=settings)
    lines = [line for event in run.events if (line := progress_line(event)) is not None]
    mentions = [line for line in lines if "YOU_API_KEY" in line or "source failed you" in line]
    assert len(mentions) == 1
    assert "\n  disabled you: YOU_API_KEY is not set" in mentions[0]
    assert mentions[0] == lines[0]  # in the run's first line
    assert not any("you" in step.sources_failed for step in run.outcome.searches)
    assert run.outcome.errors == []


async def test_evidence_recalled_from_an_earlier_run_is_labelled_and_never_makes_a_run_succeed(
    tmp_path: Path,
) -> None:
    first = await research(LlmServer(OPENAI), tmp_path, out="first")
    assert first.outcome.error is None

    def down(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(503, text="Service Unavailable")

    second = await research(LlmServer(OPENAI), tmp_path, stand_ins=down, out="second")
    outcome = second.outcome
    assert outcome.recalled_ids  # the library of the first run answered
    assert set(outcome.recalled_ids) == {item.id for item in outcome.evidence}
    assert outcome.error is not None
    assert outcome.error.startswith("no source answered any search")
    assert second.record["recalled_ids"] == outcome.recalled_ids
    assert "recalled from an earlier run" in second.markdown


async def test_three_model_failures_in_a_row_end_the_loop_and_nothing_claims_a_retry(tmp_path: Path) -> None:
    # One source, so the code-built assessment cannot reach the confidence threshold and the loop goes on.
    server = LlmServer(OPENAI, permanent=401)
    run = await research(server, tmp_path, DEEPCRITICAL_SOURCES="pubmed", DEEPCRITICAL_CONFIDENCE=0.95)
    assert server.replies == [("brain", 401), ("judge", 401), ("brain", 401), ("report", 401)]
    assert run.outcome.stop_reason == "llm_failed"
    assert run.outcome.iterations == 2
    assert "The language model failed on several calls in a row" in run.markdown
    # A 401 is not retried, and nothing says it was.
    assert run.sleeps == []
    claims_a_retry = re.compile(r"\bretr(?:y|ies|ied|ying)\b", re.IGNORECASE)
    assert not claims_a_retry.search(run.markdown)
    assert not claims_a_retry.search(json.dumps(run.record["errors"] + run.record["degraded_reasons"]))
