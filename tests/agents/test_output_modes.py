"""The pieces of the live-model path on their own: the output-mode chain and what counts as a refusal, the
cleaning of text answers, one-line schema-mismatch messages, and the retry policy for timeouts (at most
one retry, and the abandoned connection closed, against a real loopback server)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from pydantic import ValidationError
from pydantic_ai.exceptions import (
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelServerError,
    ModelTimeoutError,
)
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from deepcritical.agents.calls import run_agent
from deepcritical.agents.judge import build_judge
from deepcritical.agents.messages import describe_mismatch, describe_model_error, mismatch_message
from deepcritical.agents.models import live_models
from deepcritical.agents.observer import clean_answer
from deepcritical.agents.output import NATIVE, PROMPTED, PROMPTED_JSON, OutputAgents, OutputChoice, refused
from deepcritical.config import Settings
from deepcritical.outputs import Assessment, BrainTurn
from deepcritical.sources.factory import make_http_client
from helpers.llm_server import LLAMA_CPP_REFUSAL
from helpers.research_fakes import make_deps

VALID = {"queries": ["metformin dementia"], "rationale": "Drug and disease."}


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(VALID),
        f"<think>I should answer {{in JSON}}.</think>{json.dumps(VALID)}",
        f"<THINK>\nlong thoughts\n</THINK>\n\n{json.dumps(VALID)}",
        f"```json\n{json.dumps(VALID)}\n```",
        f"Sure! Here is the JSON you asked for:\n{json.dumps(VALID)}\nLet me know if you need more.",
        '{"queries": ["metformin dementia",], "rationale": "Drug and disease.",}',  # trailing commas
        "{'queries': ['metformin dementia'], 'rationale': 'Drug and disease.'}",  # single quotes
        '{"queries": ["metformin dementia"], "rationale": "Drug and disease.',  # cut off by max_tokens
        f"{json.dumps(VALID)}\n{json.dumps({'queries': ['other']})}",  # two answers: the first counts
    ],
)
def test_a_text_answer_is_cleaned_into_the_json_object_it_holds(text: str) -> None:
    assert BrainTurn.model_validate_json(clean_answer(text)) == BrainTurn.model_validate(VALID)


@pytest.mark.parametrize("text", ["I think the score is five.", "<html><body>502 Bad Gateway</body></html>", ""])
def test_text_without_a_json_object_is_left_for_validation_to_name(text: str) -> None:
    assert clean_answer(text) == text


def test_an_unclosed_reasoning_block_is_not_mistaken_for_the_answer() -> None:
    # Cut off while thinking: nothing of the thinking may pass as the answer.
    assert clean_answer('<think>maybe {"queries": ["x"]} would do') == '<think>maybe {"queries": ["x"]} would do'


def _mismatch(model: type[BrainTurn] | type[Assessment], data: object) -> str:
    with pytest.raises(ValidationError) as raised:
        model.model_validate(data) if isinstance(data, dict) else model.model_validate_json(str(data))
    return describe_mismatch(raised.value)


def test_a_schema_mismatch_is_one_short_line() -> None:
    aspect = {"score": 5, "reason": "x"}
    judged = {"mechanism": aspect, "clinical": aspect, "safety": aspect, "sufficient": True, "confidence": 5}
    assert mismatch_message("judge", _mismatch(Assessment, judged)) == (
        "the Judge's answer did not fit its schema: confidence must be at most 1, got 5"
    )
    nested = {**judged, "confidence": 0.5, "clinical": {"score": -1, "reason": "x"}}
    assert _mismatch(Assessment, nested) == "clinical.score must be at least 0, got -1"
    assert _mismatch(Assessment, {**judged, "confidence": 0.5, "safety": None}) == "safety must be an object, got none"
    assert _mismatch(BrainTurn, {"rationale": "x"}) == "queries is missing"
    assert _mismatch(BrainTurn, "I would search for metformin.") == "it was not JSON: 'I would search for metformin.'"
    several = _mismatch(Assessment, {"sufficient": "perhaps"})
    assert several.startswith("mechanism is missing (and ")
    assert "\n" not in several
    assert mismatch_message("brain", "answered in prose instead of calling its output tool") == (
        "the Brain answered in prose instead of calling its output tool"
    )


LLAMA_CPP_422 = {
    "detail": [{"loc": ["body", "response_format", "type"], "msg": "Input should be 'text' or 'json_object'"}]
}


@pytest.mark.parametrize(
    ("error", "is_refusal"),
    [
        (ModelHTTPError(422, "m", LLAMA_CPP_422), True),
        (ModelHTTPError(400, "m", {"error": {"message": "response_format json_schema is not supported"}}), True),
        (ModelHTTPError(400, "m", {"error": {"message": "'tool_choice' required is not supported"}}), True),
        (ModelHTTPError(400, "m", {"error": {"message": "messages must alternate user and assistant"}}), False),
        (ModelContextWindowExceededError("m", "the prompt and the function schema are too long"), False),
        (ModelHTTPError(500, "m", LLAMA_CPP_REFUSAL), True),  # what llama-cpp-python really answers
        (ModelHTTPError(500, "m", {"error": {"message": "the grammar cache crashed the server"}}), False),
        (ModelServerError("m", "schema"), False),
    ],
)
def test_only_a_refusal_of_the_output_mode_moves_the_run_to_the_next(error: Exception, is_refusal: bool) -> None:
    assert refused(error) is is_refusal
    choice = OutputChoice((NATIVE, PROMPTED_JSON, PROMPTED))
    assert (choice.fall_back(error) is not None) is is_refusal
    assert choice.current == (PROMPTED_JSON if is_refusal else NATIVE)


def test_the_last_mode_has_nothing_to_fall_back_to() -> None:
    choice = OutputChoice((PROMPTED_JSON, PROMPTED))
    refusal = ModelHTTPError(400, "m", {"error": {"message": "response_format json_object is not supported"}})
    assert choice.fall_back(refusal) == PROMPTED
    assert choice.fall_back(refusal) is None
    assert choice.refusals == [
        "the model server refused prompted (JSON mode) output (HTTP 400: response_format json_object is not "
        "supported); using prompted output for the rest of the run"
    ]


def test_model_errors_read_as_one_line() -> None:
    html = ModelHTTPError(502, "m", "<html>\n<body>\n<h1>502 Bad Gateway</h1>\n</body>\n</html>")
    assert (
        describe_model_error(html)
        == "the model server answered HTTP 502: <html> <body> <h1>502 Bad Gateway</h1> </body> </html>"
    )
    assert describe_model_error(ModelTimeoutError("m", "Request timed out.")) == (
        "the model did not answer in time (DEEPCRITICAL_LLM_TIMEOUT)"
    )


@dataclass
class Calls:
    count: int = 0


def _failing(error: Exception, calls: Calls) -> FunctionModel:
    async def fail(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.count += 1
        raise error

    return FunctionModel(fail)


@pytest.mark.parametrize(
    ("error", "attempts"), [(ModelTimeoutError("m", "timed out"), 2), (ModelServerError("m", "x"), 3)]
)
async def test_a_timed_out_request_is_retried_once_and_a_server_error_twice(error: Exception, attempts: int) -> None:
    deps = make_deps()
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    deps.sleep = sleep
    calls = Calls()
    with pytest.raises(type(error)):
        await run_agent(OutputAgents(build_judge), "judge this", deps=deps, model=_failing(error, calls), name="judge")
    assert calls.count == attempts
    assert len(slept) == attempts - 1
    stats = deps.state.agent("judge")
    assert (stats.requests, stats.failed_requests) == (attempts, attempts)


@dataclass
class SilentServer:
    """A loopback server that reads each request and never answers, noting when the client hangs up."""

    accepted: int = 0
    closed: asyncio.Queue[int] = field(default_factory=asyncio.Queue)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        number = self.accepted
        while await reader.read(4096):  # the request, then nothing until the client closes the connection
            pass
        await self.closed.put(number)
        writer.close()


@pytest.fixture
async def silent_server() -> AsyncIterator[tuple[SilentServer, int]]:
    server = SilentServer()
    listening = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    async with listening:
        yield server, port


async def test_a_timed_out_request_hangs_up_so_the_server_can_stop_generating(
    silent_server: tuple[SilentServer, int],
) -> None:
    server, port = silent_server
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        DEEPCRITICAL_MODEL="openai:local",
        DEEPCRITICAL_OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1",
        DEEPCRITICAL_LLM_TIMEOUT=0.3,
        OPENAI_API_KEY=None,
    )
    deps = make_deps(settings)
    deps.output = OutputChoice((NATIVE,))

    async def no_wait(seconds: float) -> None:
        return None

    deps.sleep = no_wait
    async with make_http_client() as client:
        model = live_models(settings, client).judge
        with pytest.raises(ModelTimeoutError):
            await run_agent(OutputAgents(build_judge), "judge this", deps=deps, model=model, name="judge")
        # Two attempts, each on a connection the client closed when it gave up: the server is told.
        hung_up = {await asyncio.wait_for(server.closed.get(), 10) for _ in range(2)}
    assert server.accepted == 2
    assert hung_up == {1, 2}


def test_a_compatible_servers_schemas_keep_bounds_a_grammar_can_enforce() -> None:
    from deepcritical.agents.models import GrammarSchemaTransformer
    from deepcritical.outputs import ResearchReport

    report = GrammarSchemaTransformer(ResearchReport.model_json_schema()).walk()
    text = json.dumps(report)
    # No string lengths (llama.cpp's Python server expands each into one nested rule per character, and a
    # report's grammar then aborts the server) and no references left to resolve.
    assert "maxLength" not in text
    assert "$ref" not in text
    findings = report["properties"]["key_findings"]
    assert (findings["minItems"], findings["maxItems"]) == (1, 10)
    assert findings["items"]["properties"]["evidence_ids"]["maxItems"] == 10
    brain = GrammarSchemaTransformer(BrainTurn.model_json_schema()).walk()
    assert (brain["properties"]["queries"]["minItems"], brain["properties"]["queries"]["maxItems"]) == (1, 5)
