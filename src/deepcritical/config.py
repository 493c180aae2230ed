"""One typed settings tree, read from the environment and an optional ``.env``.

Demo mode is a preset (``Settings.demo_preset``), not a flag checked all over the code: it swaps
the transports and the model, nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

import platformdirs
from pydantic import (
    AliasChoices,
    AnyHttpUrl,
    Field,
    PositiveFloat,
    PositiveInt,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
)
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from deepcritical.errors import ConfigError, describe_invalid, without_credentials
from deepcritical.options import DEFAULT_MODEL, EmbeddingBackend, OutputMode, ReaderName, TimeRange
from deepcritical.setting_values import (
    BLANK_IS_UNSET,
    SPLIT_COMMAS,
    ApiToken,
    DateOrUnset,
    RedisUrl,
    Retention,
    SecretOrUnset,
    TextOrUnset,
    UrlOrUnset,
)
from deepcritical.source_settings import (
    ENDPOINT_PARTS,
    ENDPOINTS_FIELD,
    EndpointVariables,
    PubMedSettings,
    SearchSettings,
    SearxngSettings,
    SourceEndpoint,
    WebSettings,
    YouSettings,
    default_endpoints,
    endpoint_variable,
)
from deepcritical.source_table import (
    ALL_SOURCES,
    BY_NAME,
    DEMO_SEARXNG_URL,
    NCBI_EUTILS_URL,
    SourceName,
)


class Settings(BaseSettings):
    """Every knob DeepCritical reads. Each field's ``validation_alias`` is its environment variable."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")
    # The command-line flags that set fields (``{"model": "--model"}``): a message names what the user typed.
    _flags: dict[str, str] = PrivateAttr(default_factory=dict)

    demo_mode: bool = Field(default=False, validation_alias="DEMO_MODE")

    # Sources
    sources: Annotated[list[SourceName], NoDecode, SPLIT_COMMAS] = Field(
        default_factory=lambda: list(ALL_SOURCES), validation_alias="DEEPCRITICAL_SOURCES"
    )
    ncbi_api_key: SecretOrUnset = Field(default=None, validation_alias="NCBI_API_KEY")
    ncbi_email: TextOrUnset = Field(default=None, validation_alias="NCBI_EMAIL")
    ncbi_tool: str = Field(default="deepcritical", min_length=1, validation_alias="NCBI_TOOL")
    you_api_key: SecretOrUnset = Field(default=None, validation_alias="YOU_API_KEY")
    searxng_base_url: UrlOrUnset = Field(default=None, validation_alias="SEARXNG_BASE_URL")
    searxng_timeout: PositiveFloat = Field(default=BY_NAME["searxng"].timeout, validation_alias="SEARXNG_TIMEOUT")
    searxng_default_categories: Annotated[list[str], NoDecode, SPLIT_COMMAS] = Field(
        default_factory=lambda: ["general"], validation_alias="SEARXNG_DEFAULT_CATEGORIES"
    )
    searxng_default_language: TextOrUnset = Field(default=None, validation_alias="SEARXNG_DEFAULT_LANGUAGE")
    searxng_default_time_range: Annotated[TimeRange | None, BLANK_IS_UNSET] = Field(
        default=None, validation_alias="SEARXNG_DEFAULT_TIME_RANGE"
    )
    pubmed_timeout: PositiveFloat = Field(default=BY_NAME["pubmed"].timeout, validation_alias="PUBMED_TIMEOUT")
    web_timeout: PositiveFloat = Field(default=BY_NAME["web"].timeout, validation_alias="WEB_TIMEOUT")
    you_timeout: PositiveFloat = Field(default=BY_NAME["you"].timeout, validation_alias="YOU_TIMEOUT")
    # Each public JSON API of the source table by name, from its ``{NAME}_BASE_URL`` and ``{NAME}_TIMEOUT``
    # (``EndpointVariables`` reads them), so a new source needs no field here.
    endpoints: Annotated[dict[str, SourceEndpoint], NoDecode] = Field(
        default_factory=default_endpoints, validation_alias=ENDPOINTS_FIELD
    )
    max_results_per_source: PositiveInt = Field(default=10, le=100, validation_alias="DEEPCRITICAL_MAX_RESULTS")

    # Evidence store
    home: Path = Field(
        default_factory=lambda: Path(platformdirs.user_data_dir("deepcritical")), validation_alias="DEEPCRITICAL_HOME"
    )
    embedding_model: TextOrUnset = Field(default=None, validation_alias="DEEPCRITICAL_EMBEDDING_MODEL")
    embedding_backend: EmbeddingBackend = Field(default="auto", validation_alias="DEEPCRITICAL_EMBEDDING_BACKEND")
    chroma_host: TextOrUnset = Field(default=None, validation_alias="CHROMA_HOST")
    chroma_port: int = Field(default=8000, ge=1, le=65535, validation_alias="CHROMA_PORT")
    dedup_threshold: float = Field(default=0.9, gt=0.0, le=1.0, validation_alias="DEEPCRITICAL_DEDUP_THRESHOLD")
    # The document collection the ``library`` source searches (filled by ``deepcritical library add``)
    library_collection: str = Field(
        default="documents",
        min_length=1,
        max_length=40,
        pattern=r"^[a-zA-Z0-9][a-zA-Z0-9_-]*$",
        validation_alias="DEEPCRITICAL_LIBRARY_COLLECTION",
    )
    # Recall evidence of earlier runs from the library (off: a run sees only what its own searches find)
    recall: bool = Field(default=True, validation_alias="DEEPCRITICAL_RECALL")
    # No language model at all: code planner, code judge, extractive report, code verdict
    no_llm: bool = Field(default=False, validation_alias="DEEPCRITICAL_NO_LLM")
    # How each study's result is read: the linear reader, or the transformer one (better on Evidence Inference, slower)
    reader: ReaderName = Field(default="linear", validation_alias="DEEPCRITICAL_READER")

    # Research loop
    model: str = Field(default=DEFAULT_MODEL, min_length=1, validation_alias="DEEPCRITICAL_MODEL")
    # OPENAI_BASE_URL is what every OpenAI tool reads; it is honoured too (for Chat Completions), never left to the SDK.
    openai_base_url: UrlOrUnset = Field(
        default=None, validation_alias=AliasChoices("DEEPCRITICAL_OPENAI_BASE_URL", "OPENAI_BASE_URL")
    )
    google_api_key: SecretOrUnset = Field(
        default=None, validation_alias=AliasChoices("GOOGLE_API_KEY", "GEMINI_API_KEY")
    )
    openai_api_key: SecretOrUnset = Field(default=None, validation_alias="OPENAI_API_KEY")
    anthropic_api_key: SecretOrUnset = Field(default=None, validation_alias="ANTHROPIC_API_KEY")
    # The key of any other pydantic-ai provider (Groq, Mistral, OpenRouter, ...), handed to it explicitly
    model_api_key: SecretStr | None = Field(default=None, validation_alias="DEEPCRITICAL_MODEL_API_KEY")
    max_iterations: PositiveInt = Field(default=3, le=20, validation_alias="DEEPCRITICAL_MAX_ITERATIONS")
    max_evidence: PositiveInt = Field(default=150, validation_alias="DEEPCRITICAL_MAX_EVIDENCE")
    max_seconds: PositiveFloat = Field(default=600.0, validation_alias="DEEPCRITICAL_MAX_SECONDS")
    max_llm_requests: PositiveInt = Field(default=60, validation_alias="DEEPCRITICAL_MAX_LLM_REQUESTS")
    judge_max_items: PositiveInt = Field(default=12, le=50, validation_alias="DEEPCRITICAL_JUDGE_MAX_ITEMS")
    confidence_threshold: float = Field(default=0.7, ge=0.0, le=1.0, validation_alias="DEEPCRITICAL_CONFIDENCE")

    # Web page, HTTP API and MCP server (``deepcritical serve``, ``deepcritical mcp``)
    max_concurrent_runs: PositiveInt = Field(default=2, le=32, validation_alias="DEEPCRITICAL_MAX_CONCURRENT_RUNS")
    api_token: ApiToken = Field(default=None, validation_alias="DEEPCRITICAL_API_TOKEN")
    runs_per_minute: PositiveInt = Field(default=10, le=1000, validation_alias="DEEPCRITICAL_RUNS_PER_MINUTE")

    # Live models: how structured answers are asked for, and how long a model may generate
    output_mode: OutputMode = Field(default="auto", validation_alias="DEEPCRITICAL_OUTPUT_MODE")
    llm_timeout: PositiveFloat = Field(default=120.0, validation_alias="DEEPCRITICAL_LLM_TIMEOUT")
    brain_max_tokens: PositiveInt = Field(default=4096, validation_alias="DEEPCRITICAL_BRAIN_MAX_TOKENS")
    judge_max_tokens: PositiveInt = Field(default=4096, validation_alias="DEEPCRITICAL_JUDGE_MAX_TOKENS")
    report_max_tokens: PositiveInt = Field(default=8192, validation_alias="DEEPCRITICAL_REPORT_MAX_TOKENS")
    # The stand-in sources with the configured live model: for trying a local model offline
    demo_sources: bool = Field(default=False, validation_alias="DEEPCRITICAL_DEMO_SOURCES")

    # Your own papers and PMC full text (``deepcritical library add``, documents/, sources/fulltext.py)
    library_max_file_mb: PositiveFloat = Field(
        default=50.0, le=2000, validation_alias="DEEPCRITICAL_LIBRARY_MAX_FILE_MB"
    )
    library_max_pages: PositiveInt = Field(default=1000, validation_alias="DEEPCRITICAL_LIBRARY_MAX_PAGES")
    library_parse_seconds: PositiveFloat = Field(default=60.0, validation_alias="DEEPCRITICAL_LIBRARY_PARSE_SECONDS")
    # The only folder the MCP server reads files from for ``library_add``; None: the tool is refused.
    library_folder: Path | None = Field(default=None, validation_alias="DEEPCRITICAL_LIBRARY_FOLDER")
    fulltext_max_articles: int = Field(default=5, ge=0, le=50, validation_alias="DEEPCRITICAL_FULLTEXT_MAX_ARTICLES")

    # Reliability on a shared machine: NCBI endpoint, shared rate limit, store retention
    ncbi_eutils_url: AnyHttpUrl = Field(default=AnyHttpUrl(NCBI_EUTILS_URL), validation_alias="NCBI_EUTILS_URL")
    redis_url: RedisUrl = Field(default=None, validation_alias="REDIS_URL")
    retention: Retention = Field(default=timedelta(days=30), validation_alias="DEEPCRITICAL_RETENTION")

    # A team deployment: runs go through a job queue on Redis to ``deepcritical worker`` processes
    queue_url: RedisUrl = Field(default=None, validation_alias="DEEPCRITICAL_QUEUE_URL")
    queue_heartbeat: float = Field(default=30.0, ge=1.0, le=3600.0, validation_alias="DEEPCRITICAL_QUEUE_HEARTBEAT")
    queue_attempts: PositiveInt = Field(default=3, le=20, validation_alias="DEEPCRITICAL_QUEUE_ATTEMPTS")

    # Living evidence (``deepcritical watch``): a re-run searches only what appeared since ``search_since``;
    # a watch's webhook alerts are signed with ``webhook_secret`` and go to public addresses only, unless
    # ``webhook_allow_private`` trusts a receiver on the deployment's own network; ``demo_today`` is the
    # stand-ins' clock.
    search_since: DateOrUnset = Field(default=None, validation_alias="DEEPCRITICAL_SEARCH_SINCE")
    webhook_secret: SecretOrUnset = Field(default=None, validation_alias="DEEPCRITICAL_WEBHOOK_SECRET")
    webhook_allow_private: bool = Field(default=False, validation_alias="DEEPCRITICAL_WEBHOOK_ALLOW_PRIVATE")
    demo_today: DateOrUnset = Field(default=None, validation_alias="DEEPCRITICAL_DEMO_TODAY")

    @field_validator("sources")
    @classmethod
    def _at_least_one_source(cls, value: list[SourceName]) -> list[SourceName]:
        if not value:
            raise ValueError("name at least one source")
        return list(dict.fromkeys(value))

    @field_validator("endpoints")
    @classmethod
    def _every_public_api(cls, value: dict[str, SourceEndpoint]) -> dict[str, SourceEndpoint]:
        """Every public JSON API of the table has its endpoint (the public service unless given), no other."""
        defaults = default_endpoints()
        unknown = sorted(set(value) - set(defaults))
        if unknown:
            raise ValueError(f"not a public JSON API of the source table: {', '.join(unknown)}")
        return {**defaults, **value}

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The usual order, with each source's endpoint read from its own variables right after the values given."""
        endpoints = EndpointVariables(settings_cls, init_settings, env_settings, dotenv_settings)
        return init_settings, endpoints, env_settings, dotenv_settings, file_secret_settings

    def named(self, field_name: str) -> str:
        """How the user set a field, for a message: its flag when a flag set it, else its variable."""
        return self._flags.get(field_name) or _env_name(field_name)

    @property
    def stand_in_sources(self) -> bool:
        """True when the sources are the local stand-ins (demo mode, or demo sources with a live model)."""
        return self.demo_mode or self.demo_sources

    def demo_sources_preset(self) -> Settings:
        """The same settings with the sources answered by the local stand-ins; the model is left as configured.
        The SearXNG URL and the You.com key point at the stand-ins; real source keys are dropped so that
        nothing real is ever sent to a stand-in."""
        return self.with_values(
            demo_sources=True,
            searxng_base_url=DEMO_SEARXNG_URL,
            # The stand-ins answer at the public services' addresses, not at a mirror's.
            endpoints={
                name: SourceEndpoint(base_url=public.base_url, timeout=self.endpoints[name].timeout)
                for name, public in default_endpoints().items()
            },
            you_api_key="demo-key",
            ncbi_api_key=None,
            ncbi_eutils_url=NCBI_EUTILS_URL,
        )

    def demo_preset(self) -> Settings:
        """The same settings with demo mode on: the stand-in sources and the deterministic stand-in models."""
        # No recall: the same demo question gives the same report, whatever earlier demo runs found.
        return self.demo_sources_preset().with_values(demo_mode=True, recall=False)

    def with_presets(self) -> Settings:
        """The settings with the preset their flags ask for applied (demo mode, demo sources), else as they are."""
        if self.demo_mode:
            return self.demo_preset()
        return self.demo_sources_preset() if self.demo_sources else self

    def with_values(self, **changes: Any) -> Settings:
        """A copy with ``changes`` (by field name) validated exactly as values read from the environment are
        (never ``model_copy(update=...)``, which skips validation). A bad value is a ConfigError naming its
        flag or variable."""
        data = {_env_name(name): getattr(self, name) for name in type(self).model_fields}
        data.update({_env_name(name): value for name, value in changes.items()})
        if ENDPOINTS_FIELD in changes:  # the endpoints named change, the others stay
            data[ENDPOINTS_FIELD] = {**self.endpoints, **changes[ENDPOINTS_FIELD]}
        try:
            settings = type(self).model_validate(data)
        except ValidationError as error:
            flags = {_env_name(name): flag for name, flag in self._flags.items()}
            raise ConfigError(f"invalid configuration: {_describe(error, flags)}") from error
        settings._flags = dict(self._flags)
        return settings

    def public_dict(self) -> dict[str, Any]:
        """The settings as recorded in a run record: secrets and the contact e-mail reduced to whether
        they are set, and credentials inside URLs (``https://user:pass@host``) removed."""
        data = self.model_dump(mode="json")
        for name, field in type(self).model_fields.items():
            value = getattr(self, name)
            if name == "ncbi_email" or "SecretStr" in str(field.annotation):
                data[name] = "set" if value is not None else None
            elif isinstance(value, AnyHttpUrl) and (value.username or value.password):
                data[name] = without_credentials(str(value))
        for endpoint in data[ENDPOINTS_FIELD].values():
            endpoint["base_url"] = without_credentials(endpoint["base_url"])
        return data

    # The settings tree: typed groups over the flat fields (built on each access, so a ``model_copy`` with
    # new flat values is always reflected).
    @property
    def search(self) -> SearchSettings:
        return SearchSettings(
            enabled=tuple(self.sources),
            max_results_per_source=self.max_results_per_source,
            since=self.search_since,
            pubmed=PubMedSettings(
                timeout=self.pubmed_timeout,
                base_url=str(self.ncbi_eutils_url),
                api_key=self.ncbi_api_key,
                email=self.ncbi_email,
                tool=self.ncbi_tool,
            ),
            web=WebSettings(timeout=self.web_timeout),
            searxng=SearxngSettings(
                timeout=self.searxng_timeout,
                base_url=str(self.searxng_base_url) if self.searxng_base_url is not None else None,
                categories=tuple(self.searxng_default_categories),
                language=self.searxng_default_language,
                time_range=self.searxng_default_time_range,
            ),
            you=YouSettings(timeout=self.you_timeout, api_key=self.you_api_key),
            apis=dict(self.endpoints),
        )


def _describe(error: ValidationError, flags: Mapping[str, str] | None = None) -> str:
    return describe_invalid([_by_variable(item) for item in error.errors()], flags or {}, _SECRET_VARIABLES)


def _by_variable(item: Mapping[str, Any]) -> Mapping[str, Any]:
    """An error inside an endpoint (``endpoints.openalex.timeout``) located at its variable (``OPENALEX_TIMEOUT``)."""
    loc = tuple(item["loc"])
    if len(loc) >= 3 and loc[0] == ENDPOINTS_FIELD and loc[2] in ENDPOINT_PARTS:
        return {**item, "loc": (endpoint_variable(str(loc[1]), str(loc[2])), *loc[3:])}
    return item


def _secret_variables() -> frozenset[str]:
    """The variables of the secret settings (the Redis and queue URLs among them): never echoed."""
    return frozenset(
        _env_name(name) for name, field in Settings.model_fields.items() if "SecretStr" in str(field.annotation)
    )


def _env_name(field_name: str) -> str:
    alias = Settings.model_fields[field_name].validation_alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    return str(alias)


_SECRET_VARIABLES = _secret_variables()


def load_settings(*, flags: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Read settings from the environment, with ``overrides`` (by field name, e.g. from command-line
    options) taking precedence. ``flags`` names the option behind each field (``{"model": "--model"}``):
    a field set by its flag is named by the flag in every message, else by its variable. Validation
    failures become a ConfigError naming each variable (or flag)."""
    given = {name: value for name, value in overrides.items() if value is not None}
    typed = {_env_name(name): flag for name, flag in (flags or {}).items() if name in given}
    try:
        settings = Settings(**{_env_name(name): value for name, value in given.items()})
    except ValidationError as error:
        # Not chained: a ValidationError's text shows each input whole, passwords in URLs included.
        raise ConfigError(f"invalid configuration: {_describe(error, typed)}") from None
    settings._flags = {name: flag for name, flag in (flags or {}).items() if name in given}
    return settings.with_presets()
