"""The long-lived commands: ``worker`` (the team's queue), ``serve`` (page, API, MCP over HTTP) and
``mcp`` (MCP over stdio). A new front end is its module and its command here (``add_front_end_commands``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from deepcritical.cli.common import (
    EXIT_INTERRUPTED,
    checked_preflight,
    err,
    fail,
    freeze_imports,
    run_async,
    settings_from,
)
from deepcritical.cli.folders import ensure_writable
from deepcritical.cli.options import Demo, Verbose
from deepcritical.errors import ConfigError
from deepcritical.logs import configure_logging
from deepcritical.mcp.about import TOOL_NAMES

if TYPE_CHECKING:
    from fastapi import FastAPI

    from deepcritical.config import Settings


def _check_runs_home(settings: Settings) -> None:
    """What a worker needs before it starts: a usable store, and a runs folder it can write; else one line
    and exit 2."""
    checked_preflight(settings)
    try:
        ensure_writable(settings.home / "runs", "DEEPCRITICAL_HOME")
    except ConfigError as error:
        fail(str(error))


def worker(
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, max=32, help="Runs worked on at once.")] = 1,
    demo: Demo = False,
    verbose: Verbose = False,
) -> None:
    """Take runs from the team's queue (DEEPCRITICAL_QUEUE_URL) and run them, until Ctrl+C or SIGTERM."""
    from deepcritical.cli.worker import run_worker, where

    configure_logging(verbose=verbose)
    settings = settings_from(demo_mode=demo or None)
    if settings.queue_url is None:
        fail("DEEPCRITICAL_QUEUE_URL: not set; set it to the team's Redis (redis://host:6379/0)")
    _check_runs_home(settings)
    url = settings.queue_url.get_secret_value()
    err.print(f"worker: taking runs from {where(url)}, {concurrency} at a time; Ctrl+C stops", markup=False)
    run_async(run_worker(settings, concurrency=concurrency))


def serve(
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on; beyond loopback needs DEEPCRITICAL_API_TOKEN.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8000,
    demo: Demo = False,
    verbose: Verbose = False,
) -> None:
    """Serve the web page (/), the HTTP API (/api, docs at /docs) and MCP over HTTP (/mcp)."""
    from deepcritical.cli.serve import listening_socket, serve_app
    from deepcritical.web.deferred import DeferredWebApp
    from deepcritical.web.security import is_loopback, require_token_beyond_loopback

    configure_logging(verbose=verbose)
    settings = settings_from(demo_mode=demo or None)
    try:
        ensure_writable(settings.home / "runs", "DEEPCRITICAL_HOME")
        require_token_beyond_loopback(host, settings.api_token)
        sock = listening_socket(host, port)  # a port in use ends here, before the line that says it is served
    except ConfigError as error:
        fail(str(error))

    def load() -> FastAPI:
        """In a worker thread once the server listens (``web.deferred``): the checks a run needs, then the app."""
        from deepcritical.cli.research import preflight
        from deepcritical.web.app import create_app

        preflight(settings)
        web_app = create_app(settings, bind_host=host)
        freeze_imports()  # what the app's imports made, out of the collector's walks
        return web_app

    token = settings.api_token.get_secret_value() if settings.api_token is not None else None
    if settings.demo_mode:
        err.print("DEMO MODE: sources and model are local stand-ins; every piece of evidence is synthetic.")
    shown = f"[{host}]" if ":" in host else host
    err.print(f"DeepCritical on http://{shown}:{port}/ (API docs /docs, MCP /mcp); Ctrl+C stops", markup=False)
    web_app = DeferredWebApp(load, token=token, loopback=is_loopback(host))
    serve_app(web_app, sock=sock)
    if web_app.problem is not None:  # the app could not load (a setting a run needs): the server has stopped
        fail(web_app.problem)


MCP_HELP = f"Serve the MCP tools over stdin/stdout, for an MCP client: {', '.join(TOOL_NAMES)}."


def mcp_stdio(demo: Demo = False, verbose: Verbose = False) -> None:
    """Serve the MCP tools over stdin/stdout (``MCP_HELP``, its help, names them)."""
    import asyncio

    from deepcritical.mcp.stdio import serve_stdio

    configure_logging(verbose=verbose)  # stderr only: stdout carries the protocol
    settings = settings_from(demo_mode=demo or None)
    try:
        asyncio.run(serve_stdio(settings, preflight=_preflight))
    except KeyboardInterrupt:
        fail("interrupted", EXIT_INTERRUPTED)


def _preflight(settings: Settings) -> None:
    """``research``'s checks, loaded with the tools (in ``serve_stdio``'s worker thread), not before the
    server answers."""
    from deepcritical.cli.research import preflight

    preflight(settings)


def add_front_end_commands(app: typer.Typer) -> None:
    app.command()(worker)
    app.command()(serve)
    app.command("mcp", help=MCP_HELP)(mcp_stdio)
