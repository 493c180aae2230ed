"""The wire formats of the LLM providers, as a scripted local server speaks them: OpenAI Chat Completions
(an OpenAI-compatible server, in each output mode), Gemini ``generateContent`` and Anthropic Messages
(streamed as server-sent events, as pydantic-ai asks), and each provider's model-listing endpoint, which the
start-up check asks."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx2
import pytest

from deepcritical.options import DEFAULT_MODEL

OPENAI_KEY = "sk-live-test-5f2c9a7e41d8"
GOOGLE_KEY = "AIza-live-test-7d1e4b9c2a6f"
ANTHROPIC_KEY = "sk-ant-live-test-3b8e6d0f9c1a"
BRAIN_TOOLS = {"search", "term_context", "recall"}
PROMPTED_MARKER = "Always respond with a JSON object"

Agent = Literal["brain", "judge", "report"]
Mode = Literal["tool", "native", "prompted"]


@dataclass
class Ask:
    """What one request asked of the model."""

    agent: Agent
    mode: Mode
    tools: dict[str, dict[str, Any]]  # function tools (and the output tool, in tool mode) -> JSON schema
    user_text: str
    called: list[str]  # tools the model already called in this conversation
    output_tool: str | None = None
    output_schema: dict[str, Any] = field(default_factory=dict)
    json_mode: bool = False  # prompted, with the server's JSON mode and the schema beside it
    max_tokens: int | None = None


@dataclass(frozen=True)
class Reply:
    """A tool call (``tool`` and ``args``) or a text answer (``text``)."""

    tool: str | None = None
    args: dict[str, Any] | None = None
    text: str | None = None


def _agent(properties: set[str], text: str = "") -> Agent:
    if "mechanism" in properties or '"mechanism"' in text:
        return "judge"
    if "key_findings" in properties or '"key_findings"' in text:
        return "report"
    return "brain"


@dataclass(frozen=True)
class Wire:
    """One provider's wire format: where it posts, how tools, calls and answers are spelled, and where its
    models are listed."""

    name: str
    model: str
    llm_host: str
    key: str
    output_mode: str = "auto"

    @property
    def model_id(self) -> str:
        return self.model.partition(":")[2]

    def settings(self) -> dict[str, object]:
        mode = {"DEEPCRITICAL_OUTPUT_MODE": self.output_mode}
        if self.name == "openai":
            return {
                "DEEPCRITICAL_MODEL": self.model,
                "DEEPCRITICAL_OPENAI_BASE_URL": f"http://{self.llm_host}/v1",
                "OPENAI_API_KEY": self.key,
                **mode,
            }
        if self.name == "anthropic":
            return {"DEEPCRITICAL_MODEL": self.model, "ANTHROPIC_API_KEY": self.key, **mode}
        return {"DEEPCRITICAL_MODEL": self.model, "GOOGLE_API_KEY": self.key, **mode}

    def is_llm(self, request: httpx2.Request) -> bool:
        if request.method != "POST":
            return False
        if self.name == "openai":
            return request.url.path == "/v1/chat/completions"
        if self.name == "anthropic":
            return request.url.path == "/v1/messages"
        return request.url.path == f"/v1beta/models/{self.model_id}:generateContent"

    def is_models(self, request: httpx2.Request) -> bool:
        """The start-up check's request: the server's model list, or the configured model's entry."""
        if request.method != "GET":
            return False
        if self.name == "openai":
            return request.url.path == "/v1/models"
        if self.name == "anthropic":
            return request.url.path == "/v1/models/claude-sonnet-4-6"
        return request.url.path == f"/v1beta/models/{self.model_id}"

    def models_answer(self) -> dict[str, Any]:
        if self.name == "openai":
            return {"object": "list", "data": [{"id": "local-model", "object": "model", "owned_by": "me"}]}
        if self.name == "anthropic":
            return {"type": "model", "id": "claude-sonnet-4-6", "display_name": "Claude Sonnet 4.6"}
        return {"name": f"models/{self.model_id}", "displayName": self.model_id}

    def sent_key(self, request: httpx2.Request) -> str:
        if self.name == "gemini":
            return request.headers.get("x-goog-api-key", "")
        if self.name == "anthropic" and "x-api-key" in request.headers:
            return request.headers["x-api-key"]
        # The Anthropic SDK (2.x) sends its key as a bearer token too, not as ``x-api-key``.
        return request.headers.get("authorization", "").removeprefix("Bearer ")

    def read(self, body: dict[str, Any]) -> Ask:
        if self.name == "openai":
            return self._read_openai(body)
        if self.name == "anthropic":
            return self._read_anthropic(body)
        return self._read_gemini(body)

    def _read_openai(self, body: dict[str, Any]) -> Ask:
        tools = {tool["function"]["name"]: tool["function"]["parameters"] for tool in body.get("tools", [])}
        messages = body["messages"]
        texts = [m["content"] for m in messages if isinstance(m.get("content"), str)]
        user = [m["content"] for m in messages if m["role"] == "user" and isinstance(m["content"], str)]
        system = "\n".join(m["content"] for m in messages if m["role"] == "system" and isinstance(m["content"], str))
        called = [
            c["function"]["name"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []
        ]
        rf = body.get("response_format") or {}
        max_tokens = body.get("max_tokens", body.get("max_completion_tokens"))
        if rf.get("type") == "json_schema":
            schema = rf["json_schema"]["schema"]
            ask = Ask(_agent(set(schema.get("properties", {}))), "native", tools, "\n".join(user), called)
            ask.output_schema = schema
        elif rf.get("type") == "json_object" or PROMPTED_MARKER in system:
            schema = rf.get("schema", {})
            ask = Ask(_agent(set(schema.get("properties", {})), system), "prompted", tools, "\n".join(user), called)
            ask.output_schema, ask.json_mode = schema, rf.get("type") == "json_object"
        else:
            output = next((name for name in tools if name not in BRAIN_TOOLS), None)
            properties = set(tools.get(output or "", {}).get("properties", {}))
            ask = Ask(_agent(properties), "tool", tools, "\n".join(user), called, output_tool=output)
        assert texts, "a request without messages"
        ask.max_tokens = max_tokens
        return ask

    def _read_anthropic(self, body: dict[str, Any]) -> Ask:
        tools = {tool["name"]: tool["input_schema"] for tool in body.get("tools", [])}
        blocks = [
            (m["role"], {"type": "text", "text": m["content"]} if isinstance(m["content"], str) else block)
            for m in body["messages"]
            for block in ([m["content"]] if isinstance(m["content"], str) else m["content"])
        ]
        user = [block["text"] for role, block in blocks if role == "user" and block.get("type") == "text"]
        called = [block["name"] for role, block in blocks if role == "assistant" and block.get("type") == "tool_use"]
        output = next(name for name in tools if name not in BRAIN_TOOLS)
        properties = set(tools[output].get("properties", {}))
        ask = Ask(_agent(properties), "tool", tools, "\n".join(user), called, output_tool=output)
        ask.max_tokens = body.get("max_tokens")
        return ask

    def _read_gemini(self, body: dict[str, Any]) -> Ask:
        declarations = [d for tool in body.get("tools", []) for d in tool.get("functionDeclarations", [])]
        tools = {
            d["name"]: d.get("parameters_json_schema") or d.get("parametersJsonSchema") or {} for d in declarations
        }
        parts = [(c.get("role"), part) for c in body["contents"] for part in c.get("parts", [])]
        user = [part["text"] for role, part in parts if role == "user" and "text" in part]
        called = [part["functionCall"]["name"] for role, part in parts if role == "model" and "functionCall" in part]
        output = next(name for name in tools if name not in BRAIN_TOOLS)
        properties = set(tools[output].get("properties", {}))
        ask = Ask(_agent(properties), "tool", tools, "\n".join(user), called, output_tool=output)
        ask.max_tokens = (body.get("generationConfig") or {}).get("maxOutputTokens")
        return ask

    def answer(self, number: int, reply: Reply, usage: tuple[int, int]) -> dict[str, Any]:
        prompt, completion = usage
        if self.name == "openai":
            message: dict[str, Any] = {"role": "assistant", "content": reply.text}
            if reply.tool is not None:
                arguments = json.dumps(reply.args)
                message["tool_calls"] = [
                    {
                        "id": f"call_{number}",
                        "type": "function",
                        "function": {"name": reply.tool, "arguments": arguments},
                    }
                ]
            return {
                "id": f"chatcmpl-{number}",
                "object": "chat.completion",
                "created": 1_760_000_000 + number,
                "model": "local-model",
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool else "stop"}],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            }
        assert reply.tool is not None, f"{self.name} is scripted in tool mode only"
        if self.name == "anthropic":
            return {
                "id": f"msg_{number}",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [{"type": "tool_use", "id": f"toolu_{number}", "name": reply.tool, "input": reply.args}],
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": {"input_tokens": prompt, "output_tokens": completion},
            }
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"functionCall": {"name": reply.tool, "args": reply.args}}]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": prompt,
                "candidatesTokenCount": completion,
                "totalTokenCount": prompt + completion,
            },
            "modelVersion": self.model_id,
            "responseId": f"resp-{number}",
        }

    def error(self, status: int) -> dict[str, Any]:
        # Real providers echo (part of) a rejected key; the run must still never record it.
        message = f"Incorrect API key provided: {self.key}" if status == 401 else "The server had an error"
        if self.name == "openai":
            return {"error": {"message": message, "type": "invalid_request_error", "code": None}}
        if self.name == "anthropic":
            kind = "authentication_error" if status == 401 else "api_error"
            return {"type": "error", "error": {"type": kind, "message": message}}
        return {
            "error": {"code": status, "message": message, "status": "UNAUTHENTICATED" if status == 401 else "INTERNAL"}
        }


OPENAI = Wire("openai", "openai:local-model", "llm.local", OPENAI_KEY)
OPENAI_TOOL = Wire("openai", "openai:local-model", "llm.local", OPENAI_KEY, output_mode="tool")
OPENAI_PROMPTED = Wire("openai", "openai:local-model", "llm.local", OPENAI_KEY, output_mode="prompted")
# The default model: a deprecated one would warn at every request.
GEMINI = Wire("gemini", DEFAULT_MODEL, "generativelanguage.googleapis.com", GOOGLE_KEY)
ANTHROPIC = Wire("anthropic", "anthropic:claude-sonnet-4-6", "api.anthropic.com", ANTHROPIC_KEY)
WIRES = [
    pytest.param(OPENAI, id="openai-compatible-auto-native"),
    pytest.param(OPENAI_TOOL, id="openai-compatible-tool"),
    pytest.param(OPENAI_PROMPTED, id="openai-compatible-prompted"),
    pytest.param(GEMINI, id="gemini"),
    pytest.param(ANTHROPIC, id="anthropic"),
]


def anthropic_events(message: dict[str, Any]) -> bytes:
    """A Messages API answer as Anthropic streams it (server-sent events, the tool input in pieces).
    pydantic-ai streams whenever a model's default ``max_tokens`` is above the SDK's non-streaming limit
    and the client has its own timeout, which the run's LLM requests have."""
    (block,) = message["content"]
    arguments = json.dumps(block["input"])
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {**block, "input": {}}},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": part}}
            for part in (arguments[: len(arguments) // 2], arguments[len(arguments) // 2 :])
        ),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": message["usage"]["output_tokens"]},
        },
        {"type": "message_stop"},
    ]
    return "".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events).encode()
