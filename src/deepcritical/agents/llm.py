"""Which model each agent uses. Demo mode: the deterministic FunctionModels. Otherwise one pydantic-ai
model built from ``DEEPCRITICAL_MODEL`` (``provider:name``), with its key passed explicitly from the
settings. A live model without its key fails here, at start, naming the variable to set; there is no
silent fallback to another provider."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import SecretStr
from pydantic_ai.exceptions import UserError
from pydantic_ai.models import Model, infer_model

from deepcritical.agents.demo_models import demo_models
from deepcritical.config import Settings
from deepcritical.errors import ConfigError

# pydantic-ai 2 renamed these providers; older names keep working here.
LEGACY_PROVIDERS = {"google-gla": "google", "gemini": "google", "google-vertex": "google-cloud"}


@dataclass(frozen=True)
class AgentModels:
    brain: Model
    judge: Model
    report: Model
    name: str


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


def build_model(settings: Settings) -> Model:
    """One live model from ``settings.model``."""
    provider, name = normalize_model_name(settings.model)
    label = f"{provider}:{name}"
    if provider == "google":
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        return GoogleModel(
            name, provider=GoogleProvider(api_key=_key(settings.google_api_key, "GOOGLE_API_KEY", label))
        )
    if provider in ("openai", "openai-chat", "openai-responses"):
        from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider

        if settings.openai_base_url is not None:
            # A local OpenAI-compatible server (Ollama, llama.cpp, vLLM) speaks Chat Completions and may need no key.
            key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "not-needed"
            base_url = str(settings.openai_base_url)
            return OpenAIChatModel(name, provider=OpenAIProvider(base_url=base_url, api_key=key))
        key = _key(settings.openai_api_key, "OPENAI_API_KEY", label)
        if provider == "openai-chat":
            return OpenAIChatModel(name, provider=OpenAIProvider(api_key=key))
        return OpenAIResponsesModel(name, provider=OpenAIProvider(api_key=key))
    if provider == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        key = _key(settings.anthropic_api_key, "ANTHROPIC_API_KEY", label)
        return AnthropicModel(name, provider=AnthropicProvider(api_key=key))
    # Any other pydantic-ai provider reads its own environment variables.
    try:
        return infer_model(label)
    except (UserError, ImportError, ValueError) as error:
        raise ConfigError(f"cannot use DEEPCRITICAL_MODEL={settings.model!r}: {error}") from error


def resolve_models(settings: Settings) -> AgentModels:
    """The models for the Brain, the Judge and the Report."""
    if settings.demo_mode:
        brain, judge, report = demo_models()
        return AgentModels(brain=brain, judge=judge, report=report, name="demo (deterministic FunctionModels)")
    model = build_model(settings)
    provider, name = normalize_model_name(settings.model)
    return AgentModels(brain=model, judge=model, report=model, name=f"{provider}:{name}")
