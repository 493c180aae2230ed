"""The settings tree's source groups (``Settings.search``): each source's own typed, read-only settings, and the
endpoint of each public JSON API of the source table (``Settings.endpoints``), read from the table's variables."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, PositiveFloat, SecretStr
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource, InitSettingsSource, PydanticBaseSettingsSource

from deepcritical import source_table
from deepcritical.options import TimeRange
from deepcritical.source_table import SourceName

# The field of ``Settings`` that holds the endpoints (its name is no environment variable: ``EndpointVariables``
# fills it from each source's own variables).
ENDPOINTS_FIELD = "endpoints"
ENDPOINT_PARTS = ("base_url", "timeout")


class Group(BaseModel):
    """A typed, read-only branch of the settings tree (``Settings.search``), built from the flat fields.
    The environment variables stay flat: the README documents them."""

    model_config = ConfigDict(frozen=True)


class PubMedSettings(Group):
    timeout: float
    base_url: str
    api_key: SecretStr | None
    email: str | None
    tool: str


class WebSettings(Group):
    timeout: float


class SearxngSettings(Group):
    timeout: float
    base_url: str | None
    categories: tuple[str, ...]
    language: str | None
    time_range: TimeRange | None


class YouSettings(Group):
    timeout: float
    api_key: SecretStr | None


class SourceEndpoint(Group):
    """A public JSON API of the source table (ClinicalTrials.gov, Europe PMC, OpenAlex): where, and how long
    a request may take (``{NAME}_BASE_URL`` and ``{NAME}_TIMEOUT``)."""

    base_url: AnyHttpUrl
    timeout: PositiveFloat


class SearchSettings(Group):
    """Which sources a run searches, how many results each gives, and each source's own settings."""

    enabled: tuple[SourceName, ...]
    max_results_per_source: int
    # Only what a source added since this date (a watch's re-run); None: everything, as a normal run.
    since: date | None = None
    pubmed: PubMedSettings
    web: WebSettings
    searxng: SearxngSettings
    you: YouSettings
    # Each public JSON API of the source table, by name.
    apis: Mapping[str, SourceEndpoint]

    def timeout(self, name: str) -> float:
        """A source's own request timeout."""
        group = self.apis.get(name) or getattr(self, name)
        return float(group.timeout)


def default_endpoints() -> dict[str, SourceEndpoint]:
    """Each public JSON API of the source table at its public service, with its own timeout."""
    return {
        entry.name: SourceEndpoint(base_url=AnyHttpUrl(entry.base_url or ""), timeout=entry.timeout)
        for entry in source_table.API_SOURCES
    }


def endpoint_variable(name: str, part: str) -> str:
    """The environment variable of one part of a source's endpoint (``openalex``, ``timeout``: ``OPENALEX_TIMEOUT``)."""
    return f"{name.upper()}_{part.upper()}"


class EndpointVariables(PydanticBaseSettingsSource):
    """The settings source of ``Settings.endpoints``: each public JSON API of the source table with its
    ``{NAME}_BASE_URL`` and ``{NAME}_TIMEOUT`` taken from the values given (by variable name), else the
    environment, else the ``.env`` file, else the table. ``VAR=`` (as a .env template leaves it) means the
    public service. A source added to the table is read here with no settings field of its own."""

    def __init__(self, settings_cls: type[BaseSettings], *readers: PydanticBaseSettingsSource) -> None:
        super().__init__(settings_cls)
        self._readers = readers

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        # Required by the base class; ``__call__`` fills the one field this source knows.
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        endpoints: dict[str, dict[str, Any]] = {}
        for entry in source_table.API_SOURCES:
            endpoint: dict[str, Any] = {"base_url": entry.base_url, "timeout": entry.timeout}
            for part in ENDPOINT_PARTS:
                value = self._read(endpoint_variable(entry.name, part))
                blank = isinstance(value, str) and not value.strip()
                if value is not None and not (part == "base_url" and blank):
                    endpoint[part] = value
            endpoints[entry.name] = endpoint
        return {ENDPOINTS_FIELD: endpoints}

    def _read(self, variable: str) -> Any:
        for reader in self._readers:
            if isinstance(reader, InitSettingsSource):
                value = reader.init_kwargs.get(variable)
            elif isinstance(reader, EnvSettingsSource):
                value = reader.env_vars.get(variable if reader.case_sensitive else variable.lower())
            else:
                continue
            if value is not None:
                return value
        return None
