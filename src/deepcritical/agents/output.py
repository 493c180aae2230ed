"""How an agent asks a live model for its structured answer (the output mode), and which mode a run uses.

- ``tool``: the answer is the arguments of an output tool the model must call (OpenAI, Gemini, Anthropic).
- ``native``: the server gets the JSON schema (``response_format: json_schema``) and constrains decoding to it:
  grammar-constrained decoding in llama.cpp, vLLM and Ollama, structured outputs at OpenAI and Gemini.
- ``prompted``: the schema is in the prompt and the answer is JSON in the text, parsed and repaired. On an
  OpenAI-compatible server the server's JSON mode is asked for too, with the schema beside it, which llama.cpp
  turns into a grammar (``prompted (JSON mode)``).

``auto`` starts with native on an OpenAI-compatible base URL and with tool calling elsewhere. A server that
refuses a mode (HTTP 400/422 naming the feature, e.g. ``json_schema`` unsupported) hands the run to the next
mode, which the run keeps from then on: one ``OutputChoice`` per run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic_ai import Agent, NativeOutput, PromptedOutput, ToolOutput
from pydantic_ai.exceptions import ModelContextWindowExceededError, ModelHTTPError
from pydantic_ai.output import OutputSpec

from deepcritical.options import OutputMode
from deepcritical.text import shorten

OutputT = TypeVar("OutputT")
DepsT = TypeVar("DepsT")
Mode = Literal["tool", "native", "prompted"]


@dataclass(frozen=True)
class OutputStrategy:
    """One way of asking for a structured answer. ``json_mode`` (prompted only): also ask for the server's
    JSON mode, with the schema, which an OpenAI-compatible server may enforce as a grammar."""

    mode: Mode
    json_mode: bool = False

    @property
    def label(self) -> str:
        return f"{self.mode} (JSON mode)" if self.json_mode else self.mode


TOOL = OutputStrategy("tool")
NATIVE = OutputStrategy("native")
PROMPTED = OutputStrategy("prompted")
PROMPTED_JSON = OutputStrategy("prompted", json_mode=True)


def strategies(setting: OutputMode, *, openai_compatible: bool) -> tuple[OutputStrategy, ...]:
    """The modes a run tries, in order: the first one, then each fallback for a server that refuses."""
    prompted = (PROMPTED_JSON, PROMPTED) if openai_compatible else (PROMPTED,)
    if setting == "tool":
        return (TOOL,)
    if setting == "native":
        return (NATIVE,)
    if setting == "prompted":
        return prompted
    # auto. A small local model behind llama.cpp ignores tools but decodes under a schema's grammar.
    return (NATIVE, *prompted) if openai_compatible else (TOOL, PROMPTED)


def output_spec(output: type[OutputT], mode: Mode) -> OutputSpec[OutputT]:
    if mode == "native":
        return NativeOutput(output)
    if mode == "prompted":
        return PromptedOutput(output)
    return ToolOutput(output)


class OutputAgents(Generic[DepsT, OutputT]):
    """One agent per output mode, built when a run first needs it; the agents differ only in how they answer."""

    def __init__(self, build: Callable[[Mode], Agent[DepsT, OutputT]]) -> None:
        self._build = build
        self._agents: dict[Mode, Agent[DepsT, OutputT]] = {}

    def __call__(self, mode: Mode) -> Agent[DepsT, OutputT]:
        if mode not in self._agents:
            self._agents[mode] = self._build(mode)
        return self._agents[mode]


@dataclass
class OutputChoice:
    """The run's output mode: the current one of ``chain``, and a line for each mode a server refused."""

    chain: tuple[OutputStrategy, ...] = (TOOL,)
    position: int = 0
    refusals: list[str] = field(default_factory=list)

    @property
    def current(self) -> OutputStrategy:
        return self.chain[self.position]

    def fall_back(self, error: BaseException, redact: Callable[[str], str] = str) -> OutputStrategy | None:
        """The next mode if the server refused this one and there is a next; the run keeps it from now on.
        ``redact`` blanks secrets in the server's message before it is shortened."""
        if not refused(error) or self.position + 1 >= len(self.chain):
            return None
        refused_mode = self.current.label
        self.position += 1
        self.refusals.append(
            f"the model server refused {refused_mode} output ({short_http_error(error, redact=redact)}); "
            f"using {self.current.label} output for the rest of the run"
        )
        return self.current


# A refusal of an output mode names what it refuses; a 400 for anything else (a too-long prompt) is not one.
# llama.cpp's Python server answers an unsupported ``response_format`` with a 500 naming it.
REFUSAL_STATUSES = frozenset({400, 422, 500, 501})
FEATURE_WORDS = ("response_format", "json_schema", "json schema", "schema", "grammar", "structured", "tool", "function")
SERVER_ERROR_WORDS = ("response_format", "json_schema")


def refused(error: BaseException) -> bool:
    """True when the server refused how the answer was asked for, rather than the request's content."""
    if not isinstance(error, ModelHTTPError) or isinstance(error, ModelContextWindowExceededError):
        return False
    if error.status_code not in REFUSAL_STATUSES:
        return False
    text = f"{error.message} {_body_text(error.body)}".lower()
    words = SERVER_ERROR_WORDS if error.status_code >= 500 else FEATURE_WORDS
    return any(word in text for word in words)


def _body_text(body: object) -> str:
    if isinstance(body, str):
        return body
    try:
        return json.dumps(body, default=str)
    except (TypeError, ValueError):
        return str(body)


def short_http_error(error: BaseException, limit: int = 160, redact: Callable[[str], str] = str) -> str:
    """``HTTP 422: <the server's own message>``, on one line and shortened; ``redact`` is applied to the
    server's text before the cut, so a key the server echoed is blanked whole."""
    if not isinstance(error, ModelHTTPError):
        return shorten(redact(str(error)), limit)
    detail = redact(_server_message(error.body) or _body_text(error.body))
    detail = shorten(detail.split("\n\n")[0], limit)  # a server's traceback follows its message
    return f"HTTP {error.status_code}: {detail}" if detail else f"HTTP {error.status_code}"


def _server_message(body: object) -> str:
    """The human part of an error body: OpenAI's ``error.message``, FastAPI's ``detail[0].msg``, or ``message``."""
    if isinstance(body, dict):
        inner: Any = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
        detail = body.get("detail")
        if isinstance(detail, list) and detail and isinstance(detail[0], dict):
            where = ".".join(str(part) for part in detail[0].get("loc", []) if part != "body")
            return f"{where}: {detail[0].get('msg', '')}".strip(": ")
        if isinstance(detail, str):
            return detail
        if isinstance(body.get("message"), str):
            return str(body["message"])
    return ""
