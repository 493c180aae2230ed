"""One ``httpx2.MockTransport`` that answers, offline, every HTTP API DeepCritical calls.

Hand it to the run's ``httpx2.AsyncClient`` in demo mode: the real source code then builds its requests
and parses the answers exactly as in live mode; only where the bytes come from differs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import MappingProxyType

import httpx2
import structlog

from deepcritical.source_table import SOURCES

logger = structlog.get_logger(__name__)

Handler = Callable[[httpx2.Request], "httpx2.Response | None"]


def _not_found(request: httpx2.Request, what: str) -> httpx2.Response:
    message = f"demo transport: no stand-in for {what} {request.method} {request.url.host}{request.url.path}"
    return httpx2.Response(404, text=message, headers={"Content-Type": "text/plain; charset=utf-8"})


def _stand_ins() -> dict[str, Handler]:
    """Each source's stand-in (``respond`` of the ``deepcritical.demo`` module its table entry names), by the
    host it answers at: the host of the address the demo presets send that source to."""
    table: dict[str, Handler] = {}
    for entry in SOURCES:
        if entry.stand_in is not None and entry.stand_in_host is not None:
            table[entry.stand_in_host] = importlib.import_module(f"deepcritical.demo.{entry.stand_in}").respond
    return table


# The one table of stand-ins, built from the source table: the host each answers at, and its handler.
# ``route`` dispatches by it and ``StandInRouter`` intercepts exactly its hosts, so a source with a stand-in
# is both answered and kept off the network (a host missing from the interception set would send that
# source's searches to the real service while the banner says every piece of evidence is synthetic).
STAND_INS: Mapping[str, Handler] = MappingProxyType(_stand_ins())
STAND_IN_HOSTS = frozenset(STAND_INS)


def route(request: httpx2.Request) -> httpx2.Response:
    """Dispatch a request to the stand-in for its host."""
    host = request.url.host.lower()
    logger.debug("demo_request", method=request.method, host=host, path=request.url.path)
    handler = STAND_INS.get(host)
    if handler is None:
        return _not_found(request, "host")
    return handler(request) or _not_found(request, "path")


def demo_transport() -> httpx2.MockTransport:
    """A transport answering every host of ``STAND_INS`` (each source's stand-in) from the demo corpus."""
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
