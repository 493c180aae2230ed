"""The one list of sources: each source's name, its group in the settings tree and how it is built.
``build_sources`` is a loop over it. How a person calls a source is ``models.SOURCE_LABELS`` (in the
foundation, where the page and the MCP server read it too). Adding a source is a tool module, a
``SourceName`` and its label, its settings (flat fields and its group in ``config.SearchSettings``) and
one ``SourceSpec`` here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

import httpx2

from deepcritical.config import (
    JsonApiSettings,
    PubMedSettings,
    SearchSettings,
    SearxngSettings,
    WebSettings,
    YouSettings,
)
from deepcritical.errors import SourceDisabledError
from deepcritical.models import SOURCE_LABELS, SourceName
from deepcritical.sources.base import SearchTool
from deepcritical.sources.clinicaltrials import ClinicalTrialsTool
from deepcritical.sources.europepmc import EuropePmcTool
from deepcritical.sources.pubmed import PubMedTool
from deepcritical.sources.searxng import SearxngTool
from deepcritical.sources.web import DdgsLike, WebTool
from deepcritical.sources.you import ResearchEngine


@dataclass(frozen=True)
class SourceContext:
    """What a source is built around: the run's client, and the parts a run shares between sources."""

    client: httpx2.AsyncClient
    ddgs_factory: Callable[[], DdgsLike] | None = None
    ncbi_limiter: Callable[[], Awaitable[None]] | None = None
    # The You.com engine serves the Brain's background lookups and the ``you`` source: one per run.
    research_engine: ResearchEngine | None = None
    # Only what a source added since this date (a watch's re-run); sources without a date filter ignore it.
    since: date | None = None


@dataclass(frozen=True)
class SourceSpec:
    """One source: ``settings`` picks its group out of the settings tree, ``build`` makes its tool from
    that group (raising ``SourceDisabledError`` with the reason when the configuration cannot run it)."""

    name: SourceName
    settings: Callable[[SearchSettings], Any]
    build: Callable[[Any, SourceContext], SearchTool]

    @property
    def label(self) -> str:
        """How a person calls the source (``models.SOURCE_LABELS``, which the page and MCP read too)."""
        return SOURCE_LABELS[self.name]

    def timeout(self, search: SearchSettings) -> float:
        """The source's own request timeout (its group's ``timeout``)."""
        return float(self.settings(search).timeout)


def _pubmed(group: PubMedSettings, context: SourceContext) -> SearchTool:
    return PubMedTool(
        context.client,
        api_key=group.api_key,
        email=group.email,
        tool=group.tool,
        timeout=group.timeout,
        base_url=group.base_url,
        limiter=context.ncbi_limiter,
        since=context.since,
    )


def _web(group: WebSettings, context: SourceContext) -> SearchTool:
    return WebTool(ddgs_factory=context.ddgs_factory, timeout=group.timeout)


def _searxng(group: SearxngSettings, context: SourceContext) -> SearchTool:
    if group.base_url is None:
        raise SourceDisabledError("SEARXNG_BASE_URL is not set", source="searxng")
    return SearxngTool(
        context.client,
        base_url=group.base_url,
        timeout=group.timeout,
        default_categories=group.categories,
        default_language=group.language,
        default_time_range=group.time_range,
    )


def _you(group: YouSettings, context: SourceContext) -> SearchTool:
    if context.research_engine is None:
        raise SourceDisabledError("YOU_API_KEY is not set", source="you")
    return context.research_engine


def _clinicaltrials(group: JsonApiSettings, context: SourceContext) -> SearchTool:
    return ClinicalTrialsTool(context.client, base_url=group.base_url, timeout=group.timeout, since=context.since)


def _europepmc(group: JsonApiSettings, context: SourceContext) -> SearchTool:
    return EuropePmcTool(context.client, base_url=group.base_url, timeout=group.timeout, since=context.since)


SOURCES: tuple[SourceSpec, ...] = (
    SourceSpec("pubmed", lambda search: search.pubmed, _pubmed),
    SourceSpec("web", lambda search: search.web, _web),
    SourceSpec("searxng", lambda search: search.searxng, _searxng),
    SourceSpec("you", lambda search: search.you, _you),
    SourceSpec("clinicaltrials", lambda search: search.clinicaltrials, _clinicaltrials),
    SourceSpec("europepmc", lambda search: search.europepmc, _europepmc),
)
BY_NAME: dict[str, SourceSpec] = {spec.name: spec for spec in SOURCES}


def source_labels() -> dict[str, str]:
    """Each source's name and how a person calls it, in the registry's order."""
    return {spec.name: spec.label for spec in SOURCES}
