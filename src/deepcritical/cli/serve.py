"""Running the servers: ``deepcritical serve`` (the page, the API and MCP over HTTP, on uvicorn) and
``deepcritical mcp`` (MCP over stdio)."""

from __future__ import annotations

import asyncio

import uvicorn
from fastapi import FastAPI

from deepcritical.config import Settings
from deepcritical.mcp.server import serve_stdio


def serve_app(app: FastAPI, *, host: str, port: int) -> None:
    """Serve until interrupted; runs still going are recorded as interrupted on the way out."""
    # Logging is already configured by the command (stderr, quiet unless --verbose).
    uvicorn.run(app, host=host, port=port, log_config=None, access_log=False, server_header=False)


def serve_mcp(settings: Settings) -> None:
    asyncio.run(serve_stdio(settings))
