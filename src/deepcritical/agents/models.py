"""The live language model: one pydantic-ai model built from ``DEEPCRITICAL_MODEL`` (``provider:name``),
its key passed explicitly from the settings. A live model without its key fails here, at start, naming
the variable to set; there is no silent fallback to another provider or another API.

Every model is handed the run's own ``httpx2.AsyncClient`` (any other pydantic-ai provider through
pydantic-ai's provider factory, with ``DEEPCRITICAL_MODEL_API_KEY`` as its key when set): one connection
pool, one transport, and tests that see the LLM traffic in the same ``MockTransport`` as the searches.

An OpenAI-compatible server (``DEEPCRITICAL_OPENAI_BASE_URL`` or ``OPENAI_BASE_URL``: Ollama, llama.cpp,
vLLM) is spoken to over Chat Completions, with ``max_tokens`` (what these servers read), and with bounded
numbers in the output schemas spelled as the list of allowed values, which every grammar engine enforces.

``check_endpoint`` is the start-up check that the model server answers, before any search."""

from __future__ import annotations

import inspect
import ipaddress
import warnings
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx2
from pydantic import SecretStr
from pydantic_ai.exceptions import DeprecatedModelWarning, UserError
from pydantic_ai.models import Model, infer_model
from pydantic_ai.profiles import merge_profile
from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer, OpenAIModelProfile
from pydantic_ai.providers import Provider, infer_provider, infer_provider_class
from pydantic_ai.settings import ModelSettings

from deepcritical.agents.output import TOOL, OutputStrategy, strategies
from deepcritical.config import Settings
from deepcritical.errors import ConfigError, MissingKeyError
from deepcritical.options import DEFAULT_MODEL
from deepcritical.text import collapse_whitespace, one_line

# pydantic-ai 2 renamed these providers; older names keep working here.
LEGACY_PROVIDERS = {"google-gla": "google", "gemini": "google", "google-vertex": "google-cloud"}
OPENAI_URL = "https://api.openai.com/v1"
GEMINI_URL = "https://generativelanguage.googleapis.com/v1beta"
ANTHROPIC_URL = "https://api.anthropic.com/v1"
BASE_URL_VARIABLE = "DEEPCRITICAL_OPENAI_BASE_URL"
# The start-up check is one small GET; a server that takes longer to list its models is not answering.
PREFLIGHT_TIMEOUT_SECONDS = 10.0
# Bounded numbers with at most this many allowed values are sent as the list of values.
MAX_ENUM_VALUES = 21


@dataclass(frozen=True)
class ModelEndpoint:
    """Where the start-up check asks whether the model server answers. ``headers`` carry the key."""

    url: str
    variable: str  # what to set when nothing answers there (a local server's address)
    key_variable: str | None = None  # what to check when the key is refused
    model: str | None = None  # set when ``url`` names the model, so a 404 means the model is unknown
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    model_variable: str = "DEEPCRITICAL_MODEL"  # how the user named the model (``--model`` when typed)
    hosted: bool = False  # a provider's API: when it does not answer, the network is at fault, not a setting

    @property
    def shown_url(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}{parts.path}"


@dataclass(frozen=True)
class AgentModels:
    """The Brain's, the Judge's and the Report's models; ``output_modes`` are the output modes the run tries
    in order (agents/output.py); ``endpoint`` is checked at start (None: nothing to check)."""

    brain: Model
    judge: Model
    report: Model
    name: str
    output_modes: tuple[OutputStrategy, ...] = (TOOL,)
    endpoint: ModelEndpoint | None = None
    # The Report "model" writes the extractive report in code (the demo's): its brief is then restated from the
    # run's own counted set and verdict, as a code fallback's is.
    report_in_code: bool = False


class GrammarSchemaTransformer(OpenAIJsonSchemaTransformer):
    """Output schemas for an OpenAI-compatible server, shaped for the grammar engines behind them. They
    enforce ``enum`` but not always ``minimum``/``maximum`` (llama.cpp's converter ignores them), so a bounded
    integer becomes its list of values and a number between 0 and 1 one of 0, 0.1, ..., 1. A string's
    ``maxLength`` is left out: llama.cpp's Python server expands it into one nested rule per character, and a
    report's schema then makes its grammar parser abort (the server dies); ``max_tokens`` bounds the answer
    instead, and a longer string is trimmed on validation. Definitions are inlined."""

    def __init__(self, schema: dict[str, Any], *, strict: bool | None = None) -> None:
        super().__init__(schema, strict=strict)
        self.prefer_inlined_defs = True

    def transform(self, schema: dict[str, Any]) -> dict[str, Any]:
        schema = super().transform(schema)
        if schema.get("type") == "string":
            schema.pop("maxLength", None)
        low, high = schema.get("minimum"), schema.get("maximum")
        if "enum" in schema or not isinstance(low, int | float) or not isinstance(high, int | float):
            return schema
        if schema.get("type") == "integer" and 0 <= high - low < MAX_ENUM_VALUES:
            schema["enum"] = list(range(int(low), int(high) + 1))
        elif schema.get("type") == "number" and (low, high) == (0, 1):
            schema["enum"] = [0, *(round(tenth / 10, 1) for tenth in range(1, 10)), 1]
        return schema


def live_model_settings(settings: Settings) -> ModelSettings:
    # The SDKs retry on their own (OpenAI and Anthropic twice) with sleeps nobody can see or inject;
    # ``agents.calls.run_agent`` owns retrying instead, honouring Retry-After, logging, and using the run's sleep.
    # A model may think for minutes before its first byte, while the run's client times out after 30 s (right
    # for a search API); each model request carries its own timeout, DEEPCRITICAL_LLM_TIMEOUT.
    return ModelSettings(max_retries=0, timeout=settings.llm_timeout)


def normalize_model_name(name: str, named: str = "DEEPCRITICAL_MODEL") -> tuple[str, str]:
    """``provider:model`` with legacy provider names mapped, e.g. ``google-gla:x`` -> ``("google", "x")``.
    ``named`` is how the user gave the name (``--model`` or the variable), for the message."""
    provider, sep, model = name.strip().partition(":")
    if not sep or not provider or not model:
        raise ConfigError(f"{named} must look like 'provider:model' (e.g. {DEFAULT_MODEL!r}), got {name!r}")
    provider = provider.strip().lower()
    return LEGACY_PROVIDERS.get(provider, provider), model.strip()


def _key(value: SecretStr | None, variable: str, model: str) -> str:
    if value is None or not value.get_secret_value().strip():
        local = (
            "; for a local OpenAI-compatible server (llama.cpp, Ollama, vLLM) set DEEPCRITICAL_OPENAI_BASE_URL "
            "instead (e.g. http://127.0.0.1:8080/v1), which needs no key"
            if variable == "OPENAI_API_KEY"
            else ""
        )
        raise MissingKeyError(
            f"the model {model!r} needs an API key: set {variable}{local} (or use --demo to run offline)"
        )
    return value.get_secret_value()


def _compatible_server(settings: Settings, name: str, client: httpx2.AsyncClient | None) -> tuple[Model, ModelEndpoint]:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    base_url = str(settings.openai_base_url).rstrip("/")
    if (
        settings.openai_api_key is not None
        and settings.openai_base_url is not None
        and settings.openai_base_url.username
    ):
        # httpx turns the URL's user:password into the request's one Authorization header: the key would
        # never be sent, and every call would fail as unauthorised.
        raise ConfigError(
            f"{BASE_URL_VARIABLE}: its user:password would be sent instead of OPENAI_API_KEY (a request has one "
            "Authorization header); leave one of them out"
        )
    # A local server (Ollama, llama.cpp, vLLM) may need no key; the SDK insists on one.
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "not-needed"
    provider = OpenAIProvider(base_url=base_url, api_key=key, http_client=client)
    profile = merge_profile(
        provider.model_profile(name),
        OpenAIModelProfile(
            openai_chat_supports_max_completion_tokens=False,  # llama.cpp reads max_tokens only
            supports_json_object_output=False,  # JSON mode is asked for with its schema (agents/observer.py)
            json_schema_transformer=GrammarSchemaTransformer,
        ),
    )
    model = OpenAIChatModel(name, provider=provider, profile=profile, settings=live_model_settings(settings))
    headers = {"Authorization": f"Bearer {key}"} if settings.openai_api_key else {}
    endpoint = ModelEndpoint(
        f"{base_url}/models", f"{BASE_URL_VARIABLE} (or OPENAI_BASE_URL)", "OPENAI_API_KEY", headers=headers
    )
    return model, endpoint


def _provider(name: str, settings: Settings, client: httpx2.AsyncClient | None) -> Provider[Any]:
    """Any other pydantic-ai provider, built by pydantic-ai's own provider table but handed the run's client
    and, when ``DEEPCRITICAL_MODEL_API_KEY`` is set, its key (else it reads its own variable, e.g.
    ``GROQ_API_KEY``). A provider whose constructor takes neither is built as pydantic-ai builds it."""
    if name.startswith("gateway/"):
        return infer_provider(name)
    provider_class = infer_provider_class(name)
    accepts = inspect.signature(provider_class.__init__).parameters
    options: dict[str, Any] = {}
    if client is not None and "http_client" in accepts:
        options["http_client"] = client
    if settings.model_api_key is not None and "api_key" in accepts:
        options["api_key"] = settings.model_api_key.get_secret_value()
    return provider_class(**options)


def build_model(settings: Settings, client: httpx2.AsyncClient | None = None) -> tuple[Model, ModelEndpoint | None]:
    """One live model from ``settings.model``, and where to check that it answers; with ``client``, its
    requests go through that client."""
    provider, name = normalize_model_name(settings.model, settings.named("model"))
    label = f"{provider}:{name}"
    model_settings = live_model_settings(settings)
    if provider == "google":
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        key = _key(settings.google_api_key, "GOOGLE_API_KEY", label)
        google = GoogleProvider(api_key=key, http_client=client)
        endpoint = ModelEndpoint(
            f"{GEMINI_URL}/models/{name}",
            "GOOGLE_API_KEY",
            "GOOGLE_API_KEY",
            name,
            {"x-goog-api-key": key},
            settings.named("model"),
            hosted=True,
        )
        return GoogleModel(name, provider=google, settings=model_settings), endpoint
    if provider in ("openai", "openai-chat", "openai-responses"):
        from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider

        if settings.openai_base_url is not None:
            if provider == "openai-responses":
                raise ConfigError(
                    f"{label}: an OpenAI-compatible server ({BASE_URL_VARIABLE} or OPENAI_BASE_URL) is spoken to "
                    "over Chat Completions; use 'openai:' or 'openai-chat:', or unset the base URL"
                )
            return _compatible_server(settings, name, client)
        key = _key(settings.openai_api_key, "OPENAI_API_KEY", label)
        # The base URL is explicit so that the SDK never picks one up from the environment on its own.
        openai = OpenAIProvider(base_url=OPENAI_URL, api_key=key, http_client=client)
        bearer = {"Authorization": f"Bearer {key}"}
        endpoint = ModelEndpoint(
            f"{OPENAI_URL}/models/{name}",
            "OPENAI_API_KEY",
            "OPENAI_API_KEY",
            name,
            bearer,
            settings.named("model"),
            hosted=True,
        )
        if provider == "openai-chat":
            return OpenAIChatModel(name, provider=openai, settings=model_settings), endpoint
        return OpenAIResponsesModel(name, provider=openai, settings=model_settings), endpoint
    if provider == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        key = _key(settings.anthropic_api_key, "ANTHROPIC_API_KEY", label)
        anthropic = AnthropicProvider(api_key=key, http_client=client)
        headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
        endpoint = ModelEndpoint(
            f"{ANTHROPIC_URL}/models/{name}",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_API_KEY",
            name,
            headers,
            settings.named("model"),
            hosted=True,
        )
        return AnthropicModel(name, provider=anthropic, settings=model_settings), endpoint
    try:
        model = infer_model(label, provider_factory=lambda name: _provider(name, settings, client))
    except (UserError, ImportError, ValueError) as error:
        raise ConfigError(f"cannot use {settings.named('model')} {settings.model!r}: {error}") from error
    except Exception as error:  # a provider's SDK refusing to start (google-vertex: no credentials)
        # Each SDK raises its own kind (google.auth's DefaultCredentialsError, botocore's NoCredentialsError):
        # all say the provider is not set up on this machine, in one line naming the model.
        reason = one_line(str(error)) or type(error).__name__
        raise ConfigError(
            f"cannot use {settings.named('model')} {settings.model!r}: {type(error).__name__}: {reason}"
        ) from None
    return model, _reachable_endpoint(model, settings)


def _reachable_endpoint(model: Model, settings: Settings) -> ModelEndpoint | None:
    """Any other provider is checked at start for an answer at its base URL only: its models route and how
    it sends its key are its SDK's, so no key is sent and a refusal there says nothing about the key."""
    url = model.base_url
    parts = urlsplit(url or "")
    if parts.scheme not in ("http", "https"):
        return None
    return ModelEndpoint(
        parts.geturl(),
        settings.named("model"),
        model_variable=settings.named("model"),
        hosted=not _on_this_network(parts.hostname or ""),
    )


def _on_this_network(host: str) -> bool:
    """A server on this machine or its network (Ollama, vLLM) is one to start; a provider's API is not."""
    if host == "localhost" or host.endswith(".local"):
        return True
    try:
        return not ipaddress.ip_address(host).is_global
    except ValueError:
        return False  # a name: a provider's API


def deprecation_note(model: Model) -> str | None:
    """What a model's pydantic-ai profile says of its provider's deprecation, in a few words: when it retires,
    which model answers its requests from then, which the provider recommends instead. None: not deprecated."""
    deprecation = model.profile.get("deprecation")
    if deprecation is None:
        return None
    said = [f"retirement {deprecation.retirement_date.isoformat()}"] if deprecation.retirement_date else []
    if deprecation.rerouted_to:
        said.append(f"{'from then ' if deprecation.retirement_date else ''}answered by {deprecation.rerouted_to}")
    if deprecation.replacement:
        said.append(f"recommended instead: {deprecation.replacement}")
    return f"deprecated by its provider ({'; '.join(said) or deprecation.source_url})"


def model_line(settings: Settings, model: Model | None) -> str:
    """The line a live run starts with: the model that will answer, and on the same line, for a model its
    provider deprecated, what ``deprecation_note`` says and the setting that chooses another. ``model`` is
    None when it could not be built (a missing key): the line names it all the same, before the error."""
    provider, name = normalize_model_name(settings.model, settings.named("model"))
    note = deprecation_note(model) if model is not None else None
    return f"model {provider}:{name}" + (f" · {note}: set {settings.named('model')} to another" if note else "")


def live_models(settings: Settings, client: httpx2.AsyncClient | None = None) -> AgentModels:
    """The one live model for the Brain, the Judge and the Report; its requests go through ``client``.

    pydantic-ai warns at every request to a deprecated model (``DeprecatedModelWarning``, a Python warning
    amid the progress lines); the run's first line says it once instead (``model_line``)."""
    warnings.filterwarnings("ignore", category=DeprecatedModelWarning)
    model, endpoint = build_model(settings, client)
    provider, name = normalize_model_name(settings.model, settings.named("model"))
    compatible = settings.openai_base_url is not None and provider.startswith("openai")
    return AgentModels(
        brain=model,
        judge=model,
        report=model,
        name=f"{provider}:{name}",
        output_modes=strategies(settings.output_mode, openai_compatible=compatible),
        endpoint=endpoint,
    )


async def check_endpoint(endpoint: ModelEndpoint, client: httpx2.AsyncClient) -> None:
    """Fail at start, naming the URL and the variable, when the model server does not answer or refuses the
    key or the model. Any other answer means a server is there; the run's own requests tell the rest."""
    where = endpoint.shown_url
    try:
        response = await client.get(endpoint.url, headers=endpoint.headers, timeout=PREFLIGHT_TIMEOUT_SECONDS)
    except httpx2.HTTPError as error:
        reason = collapse_whitespace(str(error)) or type(error).__name__
        # A provider's API that does not answer is this machine's network (or its proxy), not a key to set:
        # "set GOOGLE_API_KEY" sent a user whose key was set looking in the wrong place.
        fix = (
            "check this machine's connection to it (or its proxy, HTTPS_PROXY)"
            if endpoint.hosted
            else f"start it, or set {endpoint.variable}"
        )
        raise ConfigError(f"the model server at {where} does not answer ({reason}): {fix}") from error
    text = response.text.lower()
    if endpoint.model is None and not endpoint.headers:
        return  # a base URL asked without a key: any answer means the server is there
    if response.status_code in (401, 403) or (response.status_code == 400 and "api key" in text):
        raise ConfigError(
            f"the model server at {where} refused the API key (HTTP {response.status_code}): "
            f"check {endpoint.key_variable or endpoint.variable}"
        )
    if response.status_code == 404 and endpoint.model is not None:
        raise ConfigError(
            f"the model server at {where} does not know the model {endpoint.model!r} (HTTP 404): "
            f"check {endpoint.model_variable}"
        )
