"""Builds a run's HTTP client and sources from settings. Where bytes come from (a live network or the
demo stand-ins) is decided by the caller, which passes the transport and the ``ddgs`` factory in."""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date

import httpx2

from deepcritical.config import Settings
from deepcritical.errors import SourceDisabledError
from deepcritical.models import SourceName
from deepcritical.source_settings import SearchSettings
from deepcritical.source_table import BY_NAME, SOURCES, SourceEntry
from deepcritical.sources.base import USER_AGENT, JsonApiTool, SearchTool
from deepcritical.sources.handler import SearchHandler
from deepcritical.sources.library import LibraryTool
from deepcritical.sources.pubmed import PubMedTool
from deepcritical.sources.redirects import refuse_private_redirects
from deepcritical.sources.searxng import SearxngTool
from deepcritical.sources.web import DdgsLike, WebTool
from deepcritical.sources.you import ResearchEngine

# A search may take two requests (PubMed: esearch, efetch), each asked once more after a timeout.
DEADLINE_PER_TIMEOUT = 4
LIBRARY_TIMEOUT = 600.0


def make_http_client(transport: httpx2.AsyncBaseTransport | None = None) -> httpx2.AsyncClient:
    """The one HTTP client of a run; ``transport`` None means the network."""
    return httpx2.AsyncClient(
        transport=transport,
        timeout=httpx2.Timeout(30.0, connect=10.0),
        headers={"User-Agent": USER_AGENT},
        follow_redirects=True,
        event_hooks={"response": [refuse_private_redirects]},  # never into the server's own network
    )


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


def api_tool(entry: SourceEntry) -> type[JsonApiTool]:
    """The tool class a public JSON API's entry names (``module:Class``), imported when first built."""
    module, _, name = (entry.tool or "").partition(":")
    tool = getattr(importlib.import_module(module), name)
    if not (isinstance(tool, type) and issubclass(tool, JsonApiTool) and tool.name == entry.name):
        raise TypeError(f"source {entry.name}: {entry.tool} is not its JsonApiTool")
    return tool


def _build(entry: SourceEntry, search: SearchSettings, context: SourceContext) -> SearchTool:
    """One source's tool from its own settings; SourceDisabledError with the reason when they cannot run it."""
    if entry.tool is not None:
        api = search.apis[entry.name]
        return api_tool(entry)(context.client, base_url=str(api.base_url), timeout=api.timeout, since=context.since)
    if entry.name == "pubmed":
        group = search.pubmed
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
    if entry.name == "web":
        return WebTool(ddgs_factory=context.ddgs_factory, timeout=search.web.timeout)
    if entry.name == "searxng":
        searxng = search.searxng
        if searxng.base_url is None:
            raise SourceDisabledError("SEARXNG_BASE_URL is not set", source="searxng")
        return SearxngTool(
            context.client,
            base_url=searxng.base_url,
            timeout=searxng.timeout,
            default_categories=searxng.categories,
            default_language=searxng.language,
            default_time_range=searxng.time_range,
        )
    if entry.name == "you":
        if context.research_engine is None:
            raise SourceDisabledError("YOU_API_KEY is not set", source="you")
        return context.research_engine
    raise SourceDisabledError("no builder for this source", source=entry.name)


@dataclass(frozen=True)
class Sources:
    """A run's search handler, and the You.com engine the Brain asks for background context (None
    when it has no key: then the Brain is not offered the lookup at all)."""

    handler: SearchHandler
    research_engine: ResearchEngine | None


def build_sources(
    settings: Settings,
    client: httpx2.AsyncClient,
    *,
    ddgs_factory: Callable[[], DdgsLike] | None = None,
    ncbi_limiter: Callable[[], Awaitable[None]] | None = None,
    library: SearchTool | None = None,
) -> Sources:
    """Instantiate the enabled sources around ``client``. A source that cannot run with this
    configuration is left out and reported, never a crash. ``library`` is a ready ``library`` source (one
    that holds its collection in memory already, shared by many runs); by default one is built."""
    search = settings.search
    research_engine = (
        ResearchEngine(client, api_key=search.you.api_key, timeout=search.you.timeout)
        if search.you.api_key is not None
        else None
    )
    context = SourceContext(client, ddgs_factory, ncbi_limiter, research_engine, since=search.since)
    unavailable: dict[SourceName, str] = {}
    tools: list[SearchTool] = []
    for name in search.enabled:
        if name == "library":  # a local collection: no HTTP client, no settings group of its own yet
            tools.append(library or LibraryTool(settings))
            continue
        try:
            tools.append(_build(BY_NAME[name], search, context))
        except SourceDisabledError as error:
            unavailable[name] = error.reason
    # The handler's deadline sits above each source's own HTTP timeout, so a source that times out (and
    # is asked once more) reports its own error rather than being cut off mid-retry.
    timeouts: dict[str, float] = {
        entry.name: search.timeout(entry.name) * DEADLINE_PER_TIMEOUT for entry in SOURCES if entry.name != "library"
    }
    # The first library search reads the whole collection into memory: a large one takes a while.
    timeouts["library"] = LIBRARY_TIMEOUT
    handler = SearchHandler(tools, timeouts=timeouts, unavailable=unavailable)
    return Sources(handler=handler, research_engine=research_engine)
