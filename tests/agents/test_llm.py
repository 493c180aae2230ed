"""Model resolution: the right provider with the key from settings, or a ConfigError naming the variable."""

from __future__ import annotations

import pytest
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel

from deepcritical.agents.models import normalize_model_name, resolve_models
from deepcritical.config import Settings
from deepcritical.errors import ConfigError


def settings(**values: object) -> Settings:
    # Built from explicit values only: no .env, and no keys from the environment of the machine.
    blank = {"GOOGLE_API_KEY": None, "OPENAI_API_KEY": None, "ANTHROPIC_API_KEY": None}
    return Settings(_env_file=None, **{**blank, **values})  # type: ignore[call-arg]


@pytest.fixture(autouse=True)
def no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("google:gemini-2.5-flash", "GOOGLE_API_KEY"),
        ("google-gla:gemini-2.5-flash", "GOOGLE_API_KEY"),
        ("openai:gpt-4o-mini", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
    ],
)
def test_a_live_model_without_its_key_names_the_variable(model: str, variable: str) -> None:
    with pytest.raises(ConfigError, match=variable):
        resolve_models(settings(DEEPCRITICAL_MODEL=model))


def test_google_gla_is_an_alias_of_google() -> None:
    assert normalize_model_name("google-gla:gemini-2.5-flash") == ("google", "gemini-2.5-flash")
    models = resolve_models(settings(DEEPCRITICAL_MODEL="google-gla:gemini-2.5-flash", GOOGLE_API_KEY="g-key"))
    assert isinstance(models.brain, GoogleModel)
    assert models.brain.model_name == "gemini-2.5-flash"
    assert models.name == "google:gemini-2.5-flash"


def test_keys_are_passed_to_the_provider_explicitly() -> None:
    openai = resolve_models(settings(DEEPCRITICAL_MODEL="openai:gpt-4o-mini", OPENAI_API_KEY="sk-from-settings"))
    assert isinstance(openai.brain, OpenAIResponsesModel)
    assert openai.brain.client.api_key == "sk-from-settings"
    anthropic = resolve_models(settings(DEEPCRITICAL_MODEL="anthropic:claude-x", ANTHROPIC_API_KEY="ak-settings"))
    assert isinstance(anthropic.brain, AnthropicModel)
    assert anthropic.brain.client.api_key == "ak-settings"


def test_an_openai_compatible_server_needs_no_key() -> None:
    models = resolve_models(
        settings(DEEPCRITICAL_MODEL="openai:llama3.1", DEEPCRITICAL_OPENAI_BASE_URL="http://localhost:11434/v1")
    )
    assert isinstance(models.brain, OpenAIChatModel)
    assert str(models.brain.client.base_url).startswith("http://localhost:11434/v1")


def test_demo_mode_uses_the_function_models_and_no_key() -> None:
    models = resolve_models(settings(DEMO_MODE=True))
    assert all(isinstance(model, FunctionModel) for model in (models.brain, models.judge, models.report))


@pytest.mark.parametrize("model", ["gemini-2.5-flash", ":x", "google:"])
def test_a_malformed_model_name_is_a_config_error(model: str) -> None:
    with pytest.raises(ConfigError, match="provider:model"):
        resolve_models(settings(DEEPCRITICAL_MODEL=model))


def test_an_unknown_provider_is_a_config_error_not_a_fallback() -> None:
    with pytest.raises(ConfigError, match="nosuchprovider"):
        resolve_models(settings(DEEPCRITICAL_MODEL="nosuchprovider:model"))
