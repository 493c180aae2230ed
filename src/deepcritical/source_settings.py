"""The settings tree's source groups (``Settings.search``): each source's own typed, read-only settings, and the
fields of each public JSON API of the source table, declared from the table."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, SecretStr

from deepcritical.options import TimeRange
from deepcritical.source_table import API_SOURCES, SourceName


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


class JsonApiSettings(Group):
    """A public JSON API of the source table (ClinicalTrials.gov, Europe PMC, OpenAlex): where, and how long
    a request may take."""

    timeout: float
    base_url: str


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
    apis: Mapping[str, JsonApiSettings]

    def timeout(self, name: str) -> float:
        """A source's own request timeout."""
        group = self.apis.get(name) or getattr(self, name)
        return float(group.timeout)


def api_annotations() -> dict[str, str]:
    """The annotations of ``api_fields``, as ``from __future__ import annotations`` writes them."""
    return {
        f"{entry.name}_{part}": kind
        for entry in API_SOURCES
        for part, kind in (("base_url", "AnyHttpUrl"), ("timeout", "PositiveFloat"))
    }


def api_fields() -> dict[str, Any]:
    """The fields of each public JSON API: its base URL (default: the public service) and its timeout."""
    fields: dict[str, Any] = {}
    for entry in API_SOURCES:
        fields[f"{entry.name}_base_url"] = Field(
            default=AnyHttpUrl(entry.base_url or ""), validation_alias=f"{entry.variable}_BASE_URL"
        )
        fields[f"{entry.name}_timeout"] = Field(default=entry.timeout, validation_alias=f"{entry.variable}_TIMEOUT")
    return fields
