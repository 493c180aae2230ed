"""Builds a run's sources from settings. Demo mode changes only where bytes come from."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from deepcritical import __version__
from deepcritical.config import Settings
from deepcritical.models import SourceName
from deepcritical.sources.base import SearchTool
from deepcritical.sources.handler import SearchHandler
from deepcritical.sources.pubmed import PubMedTool
from deepcritical.sources.ratelimit import SlidingWindowLimiter
from deepcritical.sources.searxng import SearxngTool
from deepcritical.sources.web import WebTool
from deepcritical.sources.you import ResearchEngine

USER_AGENT = f"DeepCritical/{__version__} (+https://github.com/deepcritical/deepcritical)"


def make_http_client(settings: Settings) -> httpx.AsyncClient:
    """The one HTTP client of a run. In demo mode its transport is the local stand-in for every API."""
    transport: httpx.AsyncBaseTransport | None = None
    if settings.demo_mode:
        from deepcritical.sources.demo.transport import demo_transport

        transport = demo_transport()
    return httpx.AsyncClient(
        transport=transport,
        timeout=httpx.Timeout(30.0, connect=10.0),
        headers={"User-Agent": USER_AGENT},
        follow_redirects=True,
    )


@dataclass(frozen=True)
class Sources:
    """A run's search handler, and the You.com engine the Brain asks for background context."""

    handler: SearchHandler
    research_engine: ResearchEngine


def build_sources(settings: Settings, client: httpx.AsyncClient) -> Sources:
    """Instantiate the enabled sources around ``client``. A source that cannot run with this
    configuration is left out and reported, never a crash."""
    unavailable: dict[SourceName, str] = {}
    tools: list[SearchTool] = []
    research_engine = ResearchEngine(client, api_key=settings.you_api_key, timeout=settings.you_timeout)
    for name in settings.sources:
        if name == "pubmed":
            tools.append(
                PubMedTool(
                    client,
                    api_key=settings.ncbi_api_key,
                    email=settings.ncbi_email,
                    tool=settings.ncbi_tool,
                    timeout=settings.pubmed_timeout,
                    # NCBI's limit protects NCBI; the local stand-in needs no pacing.
                    limiter=SlidingWindowLimiter(1000) if settings.demo_mode else None,
                )
            )
        elif name == "web":
            if settings.demo_mode:
                from deepcritical.sources.demo.ddgs import DemoDDGS

                tools.append(WebTool(ddgs_factory=DemoDDGS, timeout=settings.web_timeout))
            else:
                tools.append(WebTool(timeout=settings.web_timeout))
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
            if settings.you_api_key is None:
                unavailable["you"] = "YOU_API_KEY is not set"
                continue
            tools.append(research_engine)
    timeouts = {
        "pubmed": settings.pubmed_timeout,
        "web": settings.web_timeout,
        "searxng": settings.searxng_timeout,
        "you": settings.you_timeout,
    }
    # The handler's deadline sits a little above each source's own HTTP timeout, so a source that
    # times out reports its own error rather than being cut off mid-retry.
    handler = SearchHandler(tools, timeouts={k: v * 3 for k, v in timeouts.items()}, unavailable=unavailable)
    return Sources(handler=handler, research_engine=research_engine)
