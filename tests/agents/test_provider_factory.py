"""Any pydantic-ai provider beyond the three the project names (OpenRouter here) is built through
pydantic-ai's provider factory with the run's one client and the key from DEEPCRITICAL_MODEL_API_KEY, and a
key such a provider reads from its own environment variable is redacted like every configured secret."""

from __future__ import annotations

import json

import httpx2
import pytest
from pydantic_ai import Agent

from deepcritical.agents.models import build_model, check_endpoint
from deepcritical.config import Settings
from deepcritical.errors import ConfigError
from deepcritical.redaction import Redactor

KEY = "sk-or-v1-explicit-key-0123456789"


def chat_completion(text: str) -> dict[str, object]:
    return {
        "id": "gen-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "meta-llama/llama-3-8b-instruct",
        "provider": "DeepInfra",  # OpenRouter names the upstream that answered
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }


@pytest.fixture(autouse=True)
def no_provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)


async def test_another_provider_speaks_through_the_runs_client_with_the_explicit_key() -> None:
    seen: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=chat_completion("four"))

    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, DEEPCRITICAL_MODEL="openrouter:meta-llama/llama-3-8b-instruct", DEEPCRITICAL_MODEL_API_KEY=KEY
    )
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(answer)) as client:
        model, endpoint = build_model(settings, client)
        result = await Agent(model).run("What is two plus two?")
    assert result.output == "four"
    assert endpoint is not None
    assert (endpoint.url, endpoint.headers, endpoint.hosted) == ("https://openrouter.ai/api/v1/", {}, True)
    assert [request.url.host for request in seen] == ["openrouter.ai"]
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert json.loads(seen[0].content)["model"] == "meta-llama/llama-3-8b-instruct"


async def test_without_the_setting_the_provider_reads_its_own_variable_and_says_which() -> None:
    settings = Settings(_env_file=None, DEEPCRITICAL_MODEL="openrouter:meta-llama/llama-3-8b-instruct")  # type: ignore[call-arg]
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(lambda _: httpx2.Response(500))) as client:
        with pytest.raises(ConfigError, match="OPENROUTER_API_KEY"):
            build_model(settings, client)


def test_a_key_a_provider_reads_from_the_environment_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk_environment_secret_0123456789")
    monkeypatch.setenv("HF_TOKEN", "hf_environment_token_abcdefghij")
    redact = Redactor.for_settings(Settings(_env_file=None))  # type: ignore[call-arg]
    text = redact("401 for key gsk_environment_secret_0123456789 and hf_environment_token_abcdefghij")
    assert "environment_secret" not in text
    assert "environment_token" not in text
    assert text.count("***") == 2


async def test_another_providers_server_is_checked_at_start_by_its_base_url_alone() -> None:
    # No key is sent to the base URL (how this provider sends it is its SDK's), so a 401 there is an answer.
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, DEEPCRITICAL_MODEL="openrouter:meta-llama/llama-3-8b-instruct", DEEPCRITICAL_MODEL_API_KEY=KEY
    )
    asked: list[httpx2.Request] = []

    def unauthorised(request: httpx2.Request) -> httpx2.Response:
        asked.append(request)
        return httpx2.Response(401, json={"error": "no key"})

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(unauthorised)) as client:
        _, endpoint = build_model(settings, client)
        assert endpoint is not None
        await check_endpoint(endpoint, client)
    assert "authorization" not in asked[0].headers
    assert KEY not in str(asked[0].headers)

    def unreachable(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(unreachable)) as client:
        with pytest.raises(ConfigError, match=r"openrouter\.ai/api/v1/ does not answer .*connection to it"):
            await check_endpoint(endpoint, client)


async def test_a_local_providers_server_that_does_not_answer_is_one_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://127.0.0.1:9/v1")
    settings = Settings(_env_file=None, DEEPCRITICAL_MODEL="ollama:llama3.2")  # type: ignore[call-arg]

    def unreachable(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(unreachable)) as client:
        _, endpoint = build_model(settings, client)
        assert endpoint is not None
        assert not endpoint.hosted
        with pytest.raises(ConfigError, match=r"127\.0\.0\.1:9/v1/ does not answer .*start it"):
            await check_endpoint(endpoint, client)


def test_a_provider_whose_sdk_finds_no_credentials_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """``google-vertex:`` without credentials was a 60-line traceback from google.auth."""
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    def no_credentials(*args: object, **kwargs: object) -> None:
        raise DefaultCredentialsError("Your default credentials were not found. To set up ADC, see\nthe docs.")

    monkeypatch.setattr(google.auth, "default", no_credentials)  # no look at this machine's or a metadata server's
    for name in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings(_env_file=None, DEEPCRITICAL_MODEL="google-vertex:gemini-2.5-flash")  # type: ignore[call-arg]
    with pytest.raises(ConfigError) as refused:
        build_model(settings)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("cannot use DEEPCRITICAL_MODEL 'google-vertex:gemini-2.5-flash': DefaultCredentialsError")
    assert "credentials were not found" in message
