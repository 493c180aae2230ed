"""The wire formats of the LLM providers, as a scripted local server speaks them: OpenAI Chat Completions,
Gemini ``generateContent`` and Anthropic Messages (streamed as server-sent events, as pydantic-ai asks)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest

OPENAI_KEY = "sk-live-test-5f2c9a7e41d8"
GOOGLE_KEY = "AIza-live-test-7d1e4b9c2a6f"
ANTHROPIC_KEY = "sk-ant-live-test-3b8e6d0f9c1a"


@dataclass(frozen=True)
class Wire:
    """One provider's wire format: where it posts, and how tools, calls and answers are spelled."""

    name: str
    model: str
    llm_host: str
    key: str

    def settings(self) -> dict[str, object]:
        if self.name == "openai":
            return {
                "DEEPCRITICAL_MODEL": self.model,
                "DEEPCRITICAL_OPENAI_BASE_URL": f"http://{self.llm_host}/v1",
                "OPENAI_API_KEY": self.key,
            }
        if self.name == "anthropic":
            return {"DEEPCRITICAL_MODEL": self.model, "ANTHROPIC_API_KEY": self.key}
        return {"DEEPCRITICAL_MODEL": self.model, "GOOGLE_API_KEY": self.key}

    def is_llm(self, request: httpx2.Request) -> bool:
        if self.name == "openai":
            return request.url.path == "/v1/chat/completions"
        if self.name == "anthropic":
            return request.url.path == "/v1/messages"
        return request.url.path == "/v1beta/models/gemini-2.5-flash:generateContent"

    def sent_key(self, request: httpx2.Request) -> str:
        if self.name == "gemini":
            return request.headers.get("x-goog-api-key", "")
        # The Anthropic SDK (2.x) sends its key as a bearer token too, not as ``x-api-key``.
        return request.headers.get("authorization", "").removeprefix("Bearer ")

    def read(self, body: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], str, list[str]]:
        """The tools offered (name -> JSON schema), the user's text, and the tools the model already called."""
        if self.name == "openai":
            tools = {tool["function"]["name"]: tool["function"]["parameters"] for tool in body.get("tools", [])}
            messages = body["messages"]
            user = [m["content"] for m in messages if m["role"] == "user" and isinstance(m["content"], str)]
            called = [
                c["function"]["name"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []
            ]
            return tools, "\n".join(user), called
        if self.name == "anthropic":
            tools = {tool["name"]: tool["input_schema"] for tool in body.get("tools", [])}
            blocks = [
                (m["role"], {"type": "text", "text": m["content"]} if isinstance(m["content"], str) else block)
                for m in body["messages"]
                for block in ([m["content"]] if isinstance(m["content"], str) else m["content"])
            ]
            user = [block["text"] for role, block in blocks if role == "user" and block.get("type") == "text"]
            called = [
                block["name"] for role, block in blocks if role == "assistant" and block.get("type") == "tool_use"
            ]
            return tools, "\n".join(user), called
        declarations = [d for tool in body.get("tools", []) for d in tool.get("functionDeclarations", [])]
        tools = {
            d["name"]: d.get("parameters_json_schema") or d.get("parametersJsonSchema") or {} for d in declarations
        }
        parts = [(c.get("role"), part) for c in body["contents"] for part in c.get("parts", [])]
        user = [part["text"] for role, part in parts if role == "user" and "text" in part]
        called = [part["functionCall"]["name"] for role, part in parts if role == "model" and "functionCall" in part]
        return tools, "\n".join(user), called

    def answer(self, number: int, tool: str, args: dict[str, Any], usage: tuple[int, int]) -> dict[str, Any]:
        prompt, completion = usage
        if self.name == "openai":
            call = {
                "id": f"call_{number}",
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(args)},
            }
            return {
                "id": f"chatcmpl-{number}",
                "object": "chat.completion",
                "created": 1_760_000_000 + number,
                "model": "local-model",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                        "finish_reason": "tool_calls",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            }
        if self.name == "anthropic":
            return {
                "id": f"msg_{number}",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [{"type": "tool_use", "id": f"toolu_{number}", "name": tool, "input": args}],
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": {"input_tokens": prompt, "output_tokens": completion},
            }
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"functionCall": {"name": tool, "args": args}}]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": prompt,
                "candidatesTokenCount": completion,
                "totalTokenCount": prompt + completion,
            },
            "modelVersion": "gemini-2.5-flash",
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
GEMINI = Wire("gemini", "google:gemini-2.5-flash", "generativelanguage.googleapis.com", GOOGLE_KEY)
# The Anthropic SDK takes an httpx2 client only: this one proves the bridge carries it through the run's client.
ANTHROPIC = Wire("anthropic", "anthropic:claude-sonnet-4-6", "api.anthropic.com", ANTHROPIC_KEY)
WIRES = [
    pytest.param(OPENAI, id="openai-chat"),
    pytest.param(GEMINI, id="gemini"),
    pytest.param(ANTHROPIC, id="anthropic"),
]


def anthropic_events(message: dict[str, Any]) -> bytes:
    """A Messages API answer as Anthropic streams it (server-sent events, the tool input in pieces).
    pydantic-ai streams whenever a model's default ``max_tokens`` is above the SDK's non-streaming limit
    and the client has its own timeout, which the run's LLM client has."""
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
