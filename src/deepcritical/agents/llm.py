"""Which model each agent uses. Demo mode: the deterministic FunctionModels. Otherwise one pydantic-ai
model built from ``DEEPCRITICAL_MODEL`` (``provider:name``), with its key passed explicitly from the
settings. A live model without its key fails here, at start, naming the variable to set; there is no
silent fallback to another provider.

Given the run's ``httpx.AsyncClient``, the OpenAI, Google and Anthropic models send every request
through it. Their SDKs are built on ``httpx2`` (the Anthropic SDK rejects an ``httpx`` client outright;
the others accept one only with a deprecation warning), so each gets a thin ``httpx2`` client whose
transport hands the request to the run's client: one connection pool, one transport, and tests that
see the LLM traffic in the same ``MockTransport`` as the searches."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import httpx2
from pydantic import SecretStr
from pydantic_ai.exceptions import UserError
from pydantic_ai.models import Model, infer_model
from pydantic_ai.settings import ModelSettings

from deepcritical.agents.demo_models import demo_models
from deepcritical.config import Settings
from deepcritical.errors import ConfigError

# pydantic-ai 2 renamed these providers; older names keep working here.
LEGACY_PROVIDERS = {"google-gla": "google", "gemini": "google", "google-vertex": "google-cloud"}

# A model may think for minutes before its first byte, while the run's client times out after 30 s (right
# for a search API). Every SDK takes its per-request timeout from the client it is given (Google pins the
# read timeout into its HttpOptions), so the bridge client carries the LLM timeout and the bridge forwards
# it to the run's client with each request. The run's time budget still bounds every stage.
LLM_CONNECT_TIMEOUT = 10.0
LLM_TIMEOUT = httpx2.Timeout(120.0, connect=LLM_CONNECT_TIMEOUT)
# The SDKs retry on their own (OpenAI and Anthropic twice) with sleeps nobody can see or inject;
# ``agents.calls.run_agent`` owns retrying instead, honouring Retry-After, logging, and using the run's sleep.
LIVE_MODEL_SETTINGS = ModelSettings(max_retries=0)
# httpx frames the forwarded body itself; and the bridge hands on the response body decoded, so the
# response's own framing and encoding no longer describe it.
_REQUEST_FRAMING = frozenset({"content-length", "transfer-encoding"})
_RESPONSE_FRAMING = _REQUEST_FRAMING | {"content-encoding"}


@dataclass(frozen=True)
class AgentModels:
    brain: Model
    judge: Model
    report: Model
    name: str


def _as_httpx2_error(error: httpx.RequestError, request: httpx2.Request) -> httpx2.RequestError:
    """The ``httpx2`` twin of an ``httpx`` error, so the SDKs map it (timeout, connection) as their own."""
    kind = getattr(httpx2, type(error).__name__, None)
    twin: type[httpx2.RequestError] = (
        kind if isinstance(kind, type) and issubclass(kind, httpx2.RequestError) else httpx2.TransportError
    )
    return twin(str(error), request=request)


class _RunClientStream(httpx2.AsyncByteStream):
    def __init__(self, response: httpx.Response, request: httpx2.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.aiter_bytes():
                yield chunk
        except httpx.RequestError as error:
            raise _as_httpx2_error(error, self._request) from error

    async def aclose(self) -> None:
        await self._response.aclose()


def _timeout(request: httpx2.Request) -> httpx.Timeout:
    """The request's own timeout; google-genai sends one figure for every phase, so connecting is capped:
    a server that has not accepted the connection within seconds is down, not thinking."""
    phases = request.extensions.get("timeout")
    if not isinstance(phases, dict):
        return httpx.Timeout(LLM_TIMEOUT.read, connect=LLM_CONNECT_TIMEOUT)
    connect = phases.get("connect")
    connect = LLM_CONNECT_TIMEOUT if connect is None else min(float(connect), LLM_CONNECT_TIMEOUT)
    return httpx.Timeout(connect=connect, read=phases.get("read"), write=phases.get("write"), pool=phases.get("pool"))


class RunClientTransport(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport that sends each request through the run's ``httpx.AsyncClient``, with
    the request's own timeout. Closing it leaves the run's client open: the run owns that client."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self._client = client

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        outgoing = self._client.build_request(
            request.method,
            str(request.url),
            headers=[(k, v) for k, v in request.headers.multi_items() if k not in _REQUEST_FRAMING],
            content=await request.aread(),
            timeout=_timeout(request),
        )
        try:
            response = await self._client.send(outgoing, stream=True, follow_redirects=False)
        except httpx.RequestError as error:
            raise _as_httpx2_error(error, request) from error
        return httpx2.Response(
            response.status_code,
            headers=[(k, v) for k, v in response.headers.multi_items() if k not in _RESPONSE_FRAMING],
            stream=_RunClientStream(response, request),
            extensions={
                key: response.extensions[key] for key in ("http_version", "reason_phrase") if key in response.extensions
            },
        )


def llm_http_client(client: httpx.AsyncClient) -> httpx2.AsyncClient:
    """The ``httpx2`` face of the run's client for the provider SDKs. It holds no connections of its own,
    so it needs no closing; ``trust_env`` is off because the run's client already applied the environment."""
    return httpx2.AsyncClient(transport=RunClientTransport(client), timeout=LLM_TIMEOUT, trust_env=False)


def normalize_model_name(name: str) -> tuple[str, str]:
    """``provider:model`` with legacy provider names mapped, e.g. ``google-gla:x`` -> ``("google", "x")``."""
    provider, sep, model = name.strip().partition(":")
    if not sep or not provider or not model:
        raise ConfigError(
            f"DEEPCRITICAL_MODEL must look like 'provider:model' (e.g. 'google:gemini-2.5-flash'), got {name!r}"
        )
    provider = provider.strip().lower()
    return LEGACY_PROVIDERS.get(provider, provider), model.strip()


def _key(value: SecretStr | None, variable: str, model: str) -> str:
    if value is None or not value.get_secret_value().strip():
        raise ConfigError(f"the model {model!r} needs an API key: set {variable} (or use --demo to run offline)")
    return value.get_secret_value()


def build_model(settings: Settings, client: httpx.AsyncClient | None = None) -> Model:
    """One live model from ``settings.model``; with ``client``, its requests go through that client."""
    provider, name = normalize_model_name(settings.model)
    label = f"{provider}:{name}"
    http_client = llm_http_client(client) if client is not None else None
    if provider == "google":
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        key = _key(settings.google_api_key, "GOOGLE_API_KEY", label)
        google = GoogleProvider(api_key=key, http_client=http_client)
        return GoogleModel(name, provider=google, settings=LIVE_MODEL_SETTINGS)
    if provider in ("openai", "openai-chat", "openai-responses"):
        from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider

        if settings.openai_base_url is not None:
            # A local OpenAI-compatible server (Ollama, llama.cpp, vLLM) speaks Chat Completions and may need no key.
            key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "not-needed"
            local = OpenAIProvider(base_url=str(settings.openai_base_url), api_key=key, http_client=http_client)
            return OpenAIChatModel(name, provider=local, settings=LIVE_MODEL_SETTINGS)
        openai = OpenAIProvider(api_key=_key(settings.openai_api_key, "OPENAI_API_KEY", label), http_client=http_client)
        if provider == "openai-chat":
            return OpenAIChatModel(name, provider=openai, settings=LIVE_MODEL_SETTINGS)
        return OpenAIResponsesModel(name, provider=openai, settings=LIVE_MODEL_SETTINGS)
    if provider == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        key = _key(settings.anthropic_api_key, "ANTHROPIC_API_KEY", label)
        anthropic = AnthropicProvider(api_key=key, http_client=http_client)
        return AnthropicModel(name, provider=anthropic, settings=LIVE_MODEL_SETTINGS)
    # Any other pydantic-ai provider reads its own environment variables and uses its own HTTP client.
    try:
        return infer_model(label)
    except (UserError, ImportError, ValueError) as error:
        raise ConfigError(f"cannot use DEEPCRITICAL_MODEL={settings.model!r}: {error}") from error


def resolve_models(settings: Settings, client: httpx.AsyncClient | None = None) -> AgentModels:
    """The models for the Brain, the Judge and the Report; live ones send their requests through ``client``."""
    if settings.demo_mode:
        brain, judge, report = demo_models()
        return AgentModels(brain=brain, judge=judge, report=report, name="demo (deterministic FunctionModels)")
    model = build_model(settings, client)
    provider, name = normalize_model_name(settings.model)
    return AgentModels(brain=model, judge=model, report=model, name=f"{provider}:{name}")
