"""``deepcritical mcp``: the tools over stdin/stdout, ready to answer ``initialize`` as soon as the protocol's
own modules have loaded. The tools need the run machinery (the store, the models' runtime, the sources'
clients: seconds of imports on a small machine); they load in a worker thread meanwhile, with the checks a
run needs (``preflight``), and the first ``tools/list`` or ``tools/call`` waits for them. A client that
connects therefore hears back in about a second, not after the whole program has loaded
(bench/refusal_timing.py)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, InputRequiredResult
from mcp_types import Tool as ToolDescription

from deepcritical import __version__
from deepcritical.errors import ConfigError
from deepcritical.mcp.about import INSTRUCTIONS
from deepcritical.text import one_line

if TYPE_CHECKING:
    from deepcritical.config import Settings
    from deepcritical.service.manager import RunManager


class DeferredMCPServer(MCPServer[Any]):
    """Answers ``initialize`` at once; lists and calls the tools of the full server (``mcp.server``) once it
    is built. Until then a list or a call waits; if it could not be built (a setting a run needs is wrong),
    each call gets that one line as its error."""

    def __init__(self) -> None:
        super().__init__("deepcritical", instructions=INSTRUCTIONS, version=__version__)
        self._built: asyncio.Future[MCPServer[Any]] = asyncio.get_running_loop().create_future()

    def use(self, server: MCPServer[Any]) -> None:
        self._built.set_result(server)

    def refuse(self, problem: str) -> None:
        self._built.set_exception(ToolError(one_line(problem)))

    async def _full(self) -> MCPServer[Any]:
        return await asyncio.shield(self._built)

    async def list_tools(self) -> list[ToolDescription]:
        try:
            server = await self._full()
        except ToolError:  # the calls say why; a client still sees there is nothing to call
            return []
        return await server.list_tools()

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        server = await self._full()
        return await server.call_tool(name, arguments, context)


def _load_tools(settings: Settings, preflight: Callable[[Settings], None]) -> tuple[Any, type[RunManager]]:
    """In a worker thread: the checks a run needs, then the modules of the tools and of the run manager."""
    preflight(settings)
    from deepcritical.mcp import server
    from deepcritical.service.manager import RunManager

    return server.build_mcp_server, RunManager


async def serve_stdio(settings: Settings, preflight: Callable[[Settings], None]) -> None:
    """Serve the MCP tools over stdin/stdout until the client closes them; runs are kept in the same runs
    folder as the web app's. A ConfigError from ``preflight`` is said on stderr and by every call."""
    deferred = DeferredMCPServer()
    async with AsyncExitStack() as stack:

        async def build() -> None:
            try:
                build_server, manager_type = await asyncio.to_thread(_load_tools, settings, preflight)
                manager = await stack.enter_async_context(manager_type(settings))
                deferred.use(build_server(manager, settings))
                return
            except ConfigError as error:
                problem = str(error)
            except Exception as error:  # said on stderr and by every call, rather than leaving them waiting
                problem = f"the tools could not load ({type(error).__name__}: {error})"
            sys.stderr.write(f"error: {one_line(problem)}\n")
            deferred.refuse(problem)

        loading = asyncio.create_task(build(), name="mcp tools")
        stack.push_async_callback(_cancelled, loading)
        await deferred.run_stdio_async()


async def _cancelled(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
