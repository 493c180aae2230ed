"""The live language model: one pydantic-ai model built from ``DEEPCRITICAL_MODEL`` (``provider:name``),
its key passed explicitly from the settings. A live model without its key fails here, at start, naming
the variable to set; there is no silent fallback to another provider.

The OpenAI, Google and Anthropic models are handed the run's own ``httpx2.AsyncClient``: one connection
pool, one transport, and tests that see the LLM traffic in the same ``MockTransport`` as the searches."""

from __future__ import annotations

from dataclasses import dataclass

import httpx2
from pydantic import SecretStr
from pydantic_ai.exceptions import UserError
from pydantic_ai.models import Model, infer_model
from pydantic_ai.settings import ModelSettings

from deepcritical.config import Settings
from deepcritical.errors import ConfigError

# pydantic-ai 2 renamed these providers; older names keep working here.
LEGACY_PROVIDERS = {"google-gla": "google", "gemini": "google", "google-vertex": "google-cloud"}

# A model may think for minutes before its first byte, while the run's client times out after 30 s (right
# for a search API); each model request carries its own, longer timeout. The run's time budget still bounds
# every stage.
LLM_TIMEOUT_SECONDS = 120.0


@dataclass(frozen=True)
class AgentModels:
    brain: Model
    judge: Model
    report: Model
    name: str


def live_model_settings() -> ModelSettings:
    # The SDKs retry on their own (OpenAI and Anthropic twice) with sleeps nobody can see or inject;
    # ``agents.calls.run_agent`` owns retrying instead, honouring Retry-After, logging, and using the run's sleep.
    return ModelSettings(max_retries=0, timeout=LLM_TIMEOUT_SECONDS)


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


def build_model(settings: Settings, client: httpx2.AsyncClient | None = None) -> Model:
    """One live model from ``settings.model``; with ``client``, its requests go through that client."""
    provider, name = normalize_model_name(settings.model)
    label = f"{provider}:{name}"
    model_settings = live_model_settings()
    if provider == "google":
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        key = _key(settings.google_api_key, "GOOGLE_API_KEY", label)
        google = GoogleProvider(api_key=key, http_client=client)
        return GoogleModel(name, provider=google, settings=model_settings)
    if provider in ("openai", "openai-chat", "openai-responses"):
        from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider

        if settings.openai_base_url is not None:
            # A local OpenAI-compatible server (Ollama, llama.cpp, vLLM) speaks Chat Completions and may need no key.
            key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "not-needed"
            local = OpenAIProvider(base_url=str(settings.openai_base_url), api_key=key, http_client=client)
            return OpenAIChatModel(name, provider=local, settings=model_settings)
        openai = OpenAIProvider(api_key=_key(settings.openai_api_key, "OPENAI_API_KEY", label), http_client=client)
        if provider == "openai-chat":
            return OpenAIChatModel(name, provider=openai, settings=model_settings)
        return OpenAIResponsesModel(name, provider=openai, settings=model_settings)
    if provider == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        key = _key(settings.anthropic_api_key, "ANTHROPIC_API_KEY", label)
        anthropic = AnthropicProvider(api_key=key, http_client=client)
        return AnthropicModel(name, provider=anthropic, settings=model_settings)
    # Any other pydantic-ai provider reads its own environment variables and uses its own HTTP client.
    try:
        return infer_model(label)
    except (UserError, ImportError, ValueError) as error:
        raise ConfigError(f"cannot use DEEPCRITICAL_MODEL={settings.model!r}: {error}") from error


def live_models(settings: Settings, client: httpx2.AsyncClient | None = None) -> AgentModels:
    """The one live model for the Brain, the Judge and the Report; its requests go through ``client``."""
    model = build_model(settings, client)
    provider, name = normalize_model_name(settings.model)
    return AgentModels(brain=model, judge=model, report=model, name=f"{provider}:{name}")
