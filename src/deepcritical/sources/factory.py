"""Builds a run's HTTP client and sources from settings. Where bytes come from (a live network or the
demo stand-ins) is decided by the caller, which passes the transport and the ``ddgs`` factory in."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx2

from deepcritical.config import Settings
from deepcritical.models import SourceName
from deepcritical.sources.base import USER_AGENT, SearchTool
from deepcritical.sources.clinicaltrials import ClinicalTrialsTool
from deepcritical.sources.europepmc import EuropePmcTool
from deepcritical.sources.handler import SearchHandler
from deepcritical.sources.library import LibraryTool
from deepcritical.sources.pubmed import PubMedTool
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
    unavailable: dict[SourceName, str] = {}
    tools: list[SearchTool] = []
    research_engine = (
        ResearchEngine(client, api_key=settings.you_api_key, timeout=settings.you_timeout)
        if settings.you_api_key is not None
        else None
    )
    for name in settings.sources:
        if name == "pubmed":
            tools.append(
                PubMedTool(
                    client,
                    api_key=settings.ncbi_api_key,
                    email=settings.ncbi_email,
                    tool=settings.ncbi_tool,
                    timeout=settings.pubmed_timeout,
                    base_url=str(settings.ncbi_eutils_url),
                    limiter=ncbi_limiter,
                )
            )
        elif name == "web":
            tools.append(WebTool(ddgs_factory=ddgs_factory, timeout=settings.web_timeout))
        elif name == "searxng":
            if settings.searxng_base_url is None:
                unavailable["searxng"] = "SEARXNG_BASE_URL is not set"
                continue
            tools.append(
                SearxngTool(
                    client,
                    base_url=str(settings.searxng_base_url),
                    timeout=settings.searxng_timeout,
                    default_categories=tuple(settings.searxng_default_categories),
                    default_language=settings.searxng_default_language,
                    default_time_range=settings.searxng_default_time_range,
                )
            )
        elif name == "you":
            if research_engine is None:
                unavailable["you"] = "YOU_API_KEY is not set"
                continue
            tools.append(research_engine)
        elif name == "clinicaltrials":
            tools.append(
                ClinicalTrialsTool(
                    client, base_url=str(settings.clinicaltrials_base_url), timeout=settings.clinicaltrials_timeout
                )
            )
        elif name == "europepmc":
            tools.append(
                EuropePmcTool(client, base_url=str(settings.europepmc_base_url), timeout=settings.europepmc_timeout)
            )
        elif name == "library":
            tools.append(library or LibraryTool(settings))
    timeouts = {
        "pubmed": settings.pubmed_timeout,
        "web": settings.web_timeout,
        "searxng": settings.searxng_timeout,
        "you": settings.you_timeout,
        "clinicaltrials": settings.clinicaltrials_timeout,
        "europepmc": settings.europepmc_timeout,
        # The first search reads the whole collection into memory: a large one takes a while.
        "library": LIBRARY_TIMEOUT / DEADLINE_PER_TIMEOUT,
    }
    # The handler's deadline sits above each source's own HTTP timeout, so a source that times out (and
    # is asked once more) reports its own error rather than being cut off mid-retry.
    handler = SearchHandler(
        tools, timeouts={k: v * DEADLINE_PER_TIMEOUT for k, v in timeouts.items()}, unavailable=unavailable
    )
    return Sources(handler=handler, research_engine=research_engine)
