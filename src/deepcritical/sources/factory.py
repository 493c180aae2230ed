"""Builds a run's HTTP client and sources from settings. Where bytes come from (a live network or the
demo stand-ins) is decided by the caller, which passes the transport and the ``ddgs`` factory in."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx2

from deepcritical.config import Settings
from deepcritical.errors import SourceDisabledError
from deepcritical.models import SourceName
from deepcritical.sources.base import USER_AGENT, SearchTool
from deepcritical.sources.handler import SearchHandler
from deepcritical.sources.library import LibraryTool
from deepcritical.sources.redirects import refuse_private_redirects
from deepcritical.sources.registry import BY_NAME, SOURCES, SourceContext
from deepcritical.sources.web import DdgsLike
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
        spec = BY_NAME[name]
        try:
            tools.append(spec.build(spec.settings(search), context))
        except SourceDisabledError as error:
            unavailable[name] = error.reason
    # The handler's deadline sits above each source's own HTTP timeout, so a source that times out (and
    # is asked once more) reports its own error rather than being cut off mid-retry.
    timeouts: dict[str, float] = {spec.name: spec.timeout(search) * DEADLINE_PER_TIMEOUT for spec in SOURCES}
    # The first library search reads the whole collection into memory: a large one takes a while.
    timeouts["library"] = LIBRARY_TIMEOUT
    handler = SearchHandler(tools, timeouts=timeouts, unavailable=unavailable)
    return Sources(handler=handler, research_engine=research_engine)
