"""Model resolution: the right provider with the key from settings, or a ConfigError naming the variable;
an OpenAI-compatible server over Chat Completions (from either base-URL variable), never another API; and
the output modes a run tries, in order."""

from __future__ import annotations

from datetime import date

import pytest
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.profiles import ModelDeprecation, ModelProfile

from deepcritical.agents.models import AgentModels, deprecation_note, live_models, model_line, normalize_model_name
from deepcritical.agents.output import NATIVE, PROMPTED, PROMPTED_JSON, TOOL
from deepcritical.config import Settings, load_settings
from deepcritical.errors import ConfigError
from deepcritical.options import DEFAULT_MODEL
from deepcritical.reading.results import ResultReader
from deepcritical.run import setup
from deepcritical.sources.factory import make_http_client


def settings(**values: object) -> Settings:
    # Built from explicit values only: no .env, and no keys from the environment of the machine.
    blank = {"GOOGLE_API_KEY": None, "OPENAI_API_KEY": None, "ANTHROPIC_API_KEY": None}
    return Settings(_env_file=None, **{**blank, **values})  # type: ignore[arg-type]


def resolve_models(configured: Settings) -> AgentModels:
    return setup.agent_models(configured, make_http_client(), ResultReader.load())


@pytest.fixture(autouse=True)
def no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("google:gemini-3.5-flash-lite", "GOOGLE_API_KEY"),
        ("google-gla:gemini-3.5-flash-lite", "GOOGLE_API_KEY"),
        ("openai:gpt-4o-mini", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
    ],
)
def test_a_live_model_without_its_key_names_the_variable(model: str, variable: str) -> None:
    with pytest.raises(ConfigError, match=variable):
        resolve_models(settings(DEEPCRITICAL_MODEL=model))


def test_google_gla_is_an_alias_of_google() -> None:
    assert normalize_model_name("google-gla:gemini-3.5-flash-lite") == ("google", "gemini-3.5-flash-lite")
    models = resolve_models(settings(DEEPCRITICAL_MODEL="google-gla:gemini-3.5-flash-lite", GOOGLE_API_KEY="g-key"))
    assert isinstance(models.brain, GoogleModel)
    assert models.brain.model_name == "gemini-3.5-flash-lite"
    assert models.name == "google:gemini-3.5-flash-lite"


def test_the_default_model_is_one_its_provider_has_not_deprecated() -> None:
    """pydantic-ai's profile of the default model carries no deprecation: the day a provider announces one
    (and pydantic-ai records it), this fails, and DEFAULT_MODEL moves to what the provider recommends."""
    models = resolve_models(settings(GOOGLE_API_KEY="g-key"))
    assert models.name == DEFAULT_MODEL
    assert models.brain.profile.get("deprecation") is None, deprecation_note(models.brain)


def test_a_deprecated_model_is_named_in_one_line_with_what_answers_it_and_what_replaces_it() -> None:
    deprecated = FunctionModel(
        lambda *_: ModelResponse(parts=[]),
        profile=ModelProfile(
            deprecation=ModelDeprecation(
                source_url="https://example.org/deprecations",
                retirement_date=date(2026, 12, 1),
                replacement="new-model",
                rerouted_to="lite-model",
            )
        ),
    )
    configured = settings(DEEPCRITICAL_MODEL="google-gla:old-model")
    assert model_line(configured, deprecated) == (
        "model google:old-model · deprecated by its provider (retirement 2026-12-01; from then answered by "
        "lite-model; recommended instead: new-model): set DEEPCRITICAL_MODEL to another"
    )
    current = FunctionModel(lambda *_: ModelResponse(parts=[]))
    assert model_line(configured, current) == model_line(configured, None) == "model google:old-model"


def test_keys_are_passed_to_the_provider_explicitly() -> None:
    openai = resolve_models(settings(DEEPCRITICAL_MODEL="openai:gpt-4o-mini", OPENAI_API_KEY="sk-from-settings"))
    assert isinstance(openai.brain, OpenAIResponsesModel)
    assert openai.brain.client.api_key == "sk-from-settings"
    anthropic = resolve_models(settings(DEEPCRITICAL_MODEL="anthropic:claude-x", ANTHROPIC_API_KEY="ak-settings"))
    assert isinstance(anthropic.brain, AnthropicModel)
    assert anthropic.brain.client.api_key == "ak-settings"


def test_an_openai_compatible_server_needs_no_key_and_speaks_chat_completions() -> None:
    models = resolve_models(
        settings(DEEPCRITICAL_MODEL="openai:llama3.1", DEEPCRITICAL_OPENAI_BASE_URL="http://localhost:11434/v1")
    )
    assert isinstance(models.brain, OpenAIChatModel)
    assert str(models.brain.client.base_url).startswith("http://localhost:11434/v1")
    assert models.endpoint is not None
    assert models.endpoint.url == "http://localhost:11434/v1/models"
    assert models.endpoint.headers == {}  # no key, no Authorization header


def test_openai_base_url_is_honoured_for_chat_completions(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    # The variable every OpenAI tool reads selects the compatible server, never the Responses API.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    monkeypatch.setenv("DEEPCRITICAL_MODEL", "openai:smollm2")
    monkeypatch.chdir(str(tmp_path))
    models = resolve_models(load_settings())
    assert isinstance(models.brain, OpenAIChatModel)
    assert str(models.brain.client.base_url).startswith("http://127.0.0.1:8080/v1")
    # The project's own variable wins over the generic one.
    monkeypatch.setenv("DEEPCRITICAL_OPENAI_BASE_URL", "http://127.0.0.1:9090/v1")
    assert str(load_settings().openai_base_url) == "http://127.0.0.1:9090/v1"


def test_a_key_and_a_password_in_the_base_url_are_refused_together() -> None:
    """httpx sends the URL's user:password as Basic auth in place of the Bearer key: every call would fail."""
    url = "http://admin:Pq7Zx9Lm2Vw4@127.0.0.1:9090/v1"
    with pytest.raises(ConfigError, match=r"^DEEPCRITICAL_OPENAI_BASE_URL: its user:password would be sent") as raised:
        resolve_models(
            settings(DEEPCRITICAL_MODEL="openai:x", DEEPCRITICAL_OPENAI_BASE_URL=url, OPENAI_API_KEY="sk-x1")
        )
    assert "Pq7Z" not in str(raised.value)
    # Without a key, the URL's credentials are how a proxy in front of a local server is reached.
    models = resolve_models(settings(DEEPCRITICAL_MODEL="openai:x", DEEPCRITICAL_OPENAI_BASE_URL=url))
    assert isinstance(models.brain, OpenAIChatModel)


def test_the_responses_api_with_a_base_url_is_refused_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match=r"DEEPCRITICAL_OPENAI_BASE_URL.*Chat Completions"):
        resolve_models(
            settings(DEEPCRITICAL_MODEL="openai-responses:x", DEEPCRITICAL_OPENAI_BASE_URL="http://localhost:1/v1")
        )


def test_the_official_api_never_takes_its_base_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # Settings that say "no base URL" (e.g. from a caller): the SDK must not read OPENAI_BASE_URL behind their back.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    configured = settings(
        DEEPCRITICAL_MODEL="openai:gpt-4o-mini", OPENAI_API_KEY="sk-x", DEEPCRITICAL_OPENAI_BASE_URL=None
    )
    assert configured.openai_base_url is None
    models = resolve_models(configured)
    assert str(models.brain.client.base_url) == "https://api.openai.com/v1/"


@pytest.mark.parametrize(
    ("mode", "base_url", "expected"),
    [
        ("auto", "http://localhost:8080/v1", (NATIVE, PROMPTED_JSON, PROMPTED)),
        ("auto", None, (TOOL, PROMPTED)),
        ("tool", "http://localhost:8080/v1", (TOOL,)),
        ("native", None, (NATIVE,)),
        ("prompted", "http://localhost:8080/v1", (PROMPTED_JSON, PROMPTED)),
        ("prompted", None, (PROMPTED,)),
    ],
)
def test_the_output_modes_a_run_tries(mode: str, base_url: str | None, expected: tuple[object, ...]) -> None:
    configured = settings(
        DEEPCRITICAL_MODEL="openai:m",
        OPENAI_API_KEY="sk-x",
        DEEPCRITICAL_OPENAI_BASE_URL=base_url,
        DEEPCRITICAL_OUTPUT_MODE=mode,
    )
    assert live_models(configured).output_modes == expected


def test_an_unknown_output_mode_is_a_config_error(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.chdir(str(tmp_path))
    monkeypatch.setenv("DEEPCRITICAL_OUTPUT_MODE", "json")
    with pytest.raises(ConfigError, match="DEEPCRITICAL_OUTPUT_MODE"):
        load_settings()


def test_demo_mode_uses_the_function_models_and_no_key() -> None:
    models = resolve_models(settings(DEMO_MODE=True))
    assert all(isinstance(model, FunctionModel) for model in (models.brain, models.judge, models.report))
    assert models.endpoint is None
    assert models.output_modes == (TOOL,)


def test_demo_sources_keep_the_live_model_and_drop_real_source_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    configured = settings(
        DEEPCRITICAL_DEMO_SOURCES=True,
        DEEPCRITICAL_MODEL="openai:m",
        DEEPCRITICAL_OPENAI_BASE_URL="http://127.0.0.1:8080/v1",
        NCBI_API_KEY="real-ncbi-key",
    ).demo_sources_preset()
    assert configured.stand_in_sources
    assert not configured.demo_mode
    assert configured.ncbi_api_key is None
    assert isinstance(resolve_models(configured).brain, OpenAIChatModel)


@pytest.mark.parametrize("model", ["gemini-2.5-flash", ":x", "google:"])
def test_a_malformed_model_name_is_a_config_error(model: str) -> None:
    with pytest.raises(ConfigError, match="provider:model"):
        resolve_models(settings(DEEPCRITICAL_MODEL=model))


def test_an_unknown_provider_is_a_config_error_not_a_fallback() -> None:
    with pytest.raises(ConfigError, match="nosuchprovider"):
        resolve_models(settings(DEEPCRITICAL_MODEL="nosuchprovider:model"))
