"""A pydantic-ai capability attached to every agent call: it shapes the request for the run's output mode,
cleans a text answer before it is parsed, and counts what happened (requests, failed requests, answers that
did and did not fit the schema) in the agent's ``AgentStats``."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any

import json_repair
from pydantic import ValidationError
from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ModelRetry
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.output import OutputContext

from deepcritical.agents.messages import describe_mismatch
from deepcritical.agents.output import OutputStrategy
from deepcritical.stages.state import AgentStats

# Reasoning models write their thinking first; an unclosed block (cut off by max_tokens) runs to the end.
THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
PROSE = "answered in prose instead of calling its output tool"


def clean_answer(text: str) -> str:
    """The JSON object in a text answer: reasoning blocks and Markdown fences removed, the object found in
    surrounding prose, and broken JSON (a trailing comma, single quotes, a cut-off end) repaired. Text with no
    JSON object in it is returned as it was, so that validation says what it was."""
    stripped = THINK_BLOCK.sub("", text).strip()
    parsed = json_repair.loads(stripped) if stripped else ""
    if isinstance(parsed, list):  # several objects in one answer: the first is the answer
        parsed = next((item for item in parsed if isinstance(item, dict)), parsed)
    return json.dumps(parsed) if isinstance(parsed, dict) else text


@dataclass
class CallObserver(AbstractCapability[Any]):
    """One per agent call. ``json_mode``: ask an OpenAI-compatible server for its JSON mode with the schema."""

    stats: AgentStats
    strategy: OutputStrategy
    last_mismatch: str | None = None

    async def prepare_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        if not self.strategy.json_mode or request_context.model_request_parameters.output_object is None:
            return request_context
        # The schema as the model's profile shapes it for this server (agents/models.py), as in native mode.
        output = request_context.model.customize_request_parameters(request_context.model_request_parameters)
        assert output.output_object is not None
        settings: dict[str, Any] = dict(request_context.model_settings or {})
        # llama.cpp (and servers like it) turn the schema beside ``json_object`` into a grammar.
        json_mode = {"type": "json_object", "schema": output.output_object.json_schema}
        settings["extra_body"] = {**(settings.get("extra_body") or {}), "response_format": json_mode}
        return dataclasses.replace(request_context, model_settings=settings)  # type: ignore[arg-type]

    async def on_model_request_error(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, error: Exception
    ) -> ModelResponse:
        # pydantic-ai counts only the answers it acted on; a request that failed was still sent.
        self.stats.requests += 1
        self.stats.failed_requests += 1
        raise error

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        said = any(isinstance(part, TextPart) and part.content.strip() for part in response.parts)
        called = any(isinstance(part, ToolCallPart) for part in response.parts)
        if self.strategy.mode == "tool" and said and not called:
            self.stats.outputs_refused += 1
            self.last_mismatch = PROSE
        return response

    async def before_output_validate(self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any) -> Any:
        if isinstance(output, str) and output_context.mode in ("native", "prompted"):
            return clean_answer(output)
        return output

    async def on_output_validate_error(
        self,
        ctx: RunContext[Any],
        *,
        output_context: OutputContext,
        output: Any,
        error: ValidationError | ModelRetry,
    ) -> Any:
        self.stats.outputs_refused += 1
        self.last_mismatch = describe_mismatch(error)
        raise error

    async def after_output_validate(self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any) -> Any:
        self.stats.outputs_validated += 1
        return output
