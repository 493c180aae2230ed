"""One ``httpx2.MockTransport`` that answers, offline, every HTTP API DeepCritical calls.

Hand it to the run's ``httpx2.AsyncClient`` in demo mode: the real source code then builds its requests
and parses the answers exactly as in live mode; only where the bytes come from differs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from urllib.parse import urlsplit

import httpx2
import structlog

from deepcritical.config import CLINICALTRIALS_BASE_URL, DEMO_SEARXNG_URL, EUROPEPMC_BASE_URL, NCBI_EUTILS_URL
from deepcritical.demo import clinicaltrials, europepmc, eutils, fulltext, searxng, you
from deepcritical.sources.you import YOU_BASE_URL

logger = structlog.get_logger(__name__)


def _not_found(request: httpx2.Request, what: str) -> httpx2.Response:
    message = f"demo transport: no stand-in for {what} {request.method} {request.url.host}{request.url.path}"
    return httpx2.Response(404, text=message, headers={"Content-Type": "text/plain; charset=utf-8"})


def _eutils(request: httpx2.Request) -> httpx2.Response:
    if request.method not in ("GET", "POST"):
        return _not_found(request, "method")
    path = request.url.path
    if path == "/entrez/eutils/esearch.fcgi":
        return eutils.esearch(request)
    if path == "/entrez/eutils/efetch.fcgi":
        return eutils.efetch(request)
    return _not_found(request, "E-utilities path")


def _searxng(request: httpx2.Request) -> httpx2.Response:
    # The instance may live under a path prefix (https://host/searxng/search).
    if request.method == "GET" and request.url.path.rstrip("/").endswith("/search"):
        return searxng.search(request)
    return _not_found(request, "SearXNG path")


def _you(request: httpx2.Request) -> httpx2.Response:
    if request.method == "GET" and request.url.path.rstrip("/") == "/v1/search":
        return you.search(request)
    return _not_found(request, "You.com path")


def _clinicaltrials(request: httpx2.Request) -> httpx2.Response:
    if request.method == "GET" and request.url.path.rstrip("/") == clinicaltrials.STUDIES_PATH:
        return clinicaltrials.studies(request)
    return _not_found(request, "ClinicalTrials.gov path")


def _europepmc(request: httpx2.Request) -> httpx2.Response:
    path = request.url.path.rstrip("/")
    if request.method == "GET" and path == europepmc.SEARCH_PATH:
        return europepmc.search(request)
    if request.method == "GET" and path.startswith(europepmc.REST_PATH) and path.endswith(fulltext.FULLTEXT_SUFFIX):
        return fulltext.europepmc_full_text(request)
    return _not_found(request, "Europe PMC path")


Handler = Callable[[httpx2.Request], httpx2.Response]


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


# The one table of stand-ins: the host each answers at, and its handler. ``route`` dispatches by it and
# ``StandInRouter`` intercepts exactly its hosts, so a stand-in added here is both answered and kept off
# the network (a host missing from the interception set would send that source's searches to the real
# service while the banner says every piece of evidence is synthetic).
# Keyed by the host of each service's base URL as the sources call it (the demo presets point every source
# at these), so a stand-in answers wherever its source sends.
STAND_INS: Mapping[str, Handler] = MappingProxyType(
    {
        _host(NCBI_EUTILS_URL): _eutils,
        _host(DEMO_SEARXNG_URL): _searxng,
        _host(YOU_BASE_URL): _you,
        _host(CLINICALTRIALS_BASE_URL): _clinicaltrials,
        _host(EUROPEPMC_BASE_URL): _europepmc,
    }
)
STAND_IN_HOSTS = frozenset(STAND_INS)


def route(request: httpx2.Request) -> httpx2.Response:
    """Dispatch a request to the stand-in for its host."""
    host = request.url.host.lower()
    logger.debug("demo_request", method=request.method, host=host, path=request.url.path)
    handler = STAND_INS.get(host)
    return handler(request) if handler is not None else _not_found(request, "host")


def demo_transport() -> httpx2.MockTransport:
    """A transport answering every host of ``STAND_INS`` (E-utilities, SearXNG, You.com, ClinicalTrials.gov,
    Europe PMC) from the demo corpus."""
    return httpx2.MockTransport(route)


class StandInRouter(httpx2.AsyncBaseTransport):
    """The transport of a run with stand-in sources and a live model: requests to a source's host are
    answered by the stand-ins, every other request (the model server) goes to ``network``."""

    def __init__(self, network: httpx2.AsyncBaseTransport, stand_ins: httpx2.MockTransport | None = None) -> None:
        self.network = network
        self.stand_ins = stand_ins or demo_transport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.host.lower() in STAND_IN_HOSTS:
            return await self.stand_ins.handle_async_request(request)
        return await self.network.handle_async_request(request)

    async def aclose(self) -> None:
        await self.network.aclose()
