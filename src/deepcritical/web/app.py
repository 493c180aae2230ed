"""The web app: the page at ``/``, the API under ``/api`` (OpenAPI at ``/docs``), MCP at ``/mcp``.

Loopback by default. To listen on another address the server needs ``DEEPCRITICAL_API_TOKEN``, which then
guards the API (so the page's runs too) and ``/mcp``. On loopback the Host header must be a loopback
name, so a site that rebinds its DNS name to 127.0.0.1 reaches nothing."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from deepcritical import __version__
from deepcritical.config import Settings
from deepcritical.mcp.server import build_mcp_server
from deepcritical.run import setup
from deepcritical.run.execute import ClientFactory, RunSourceFactory
from deepcritical.service.admission import RunRateLimit
from deepcritical.service.background_embed import BackgroundEmbedder
from deepcritical.service.library import Library
from deepcritical.service.manager import RunManager
from deepcritical.service.team import TeamRunManager
from deepcritical.web.api import build_router, install_error_handlers
from deepcritical.web.deferred import HEALTH_PATH, STATIC, page
from deepcritical.web.library_api import UPLOAD_PATH, build_library_router
from deepcritical.web.security import add_guards, is_loopback, require_token_beyond_loopback, script_hash
from deepcritical.web.watch_api import build_watch_router

DOCS_ASSETS = "/docs-assets"
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def _docs_page() -> HTMLResponse:
    """Swagger UI from the files fastapi-offline ships (no CDN). Its one inline script is allowed by
    hash, for this page only; the rest of the app allows no inline script at all."""
    page = get_swagger_ui_html(
        openapi_url="/openapi.json",
        title="DeepCritical API",
        swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
        swagger_favicon_url=f"{DOCS_ASSETS}/favicon.png",
    )
    body = bytes(page.body).decode()
    hashes = " ".join(script_hash(script) for script in _INLINE_SCRIPT.findall(body))
    csp = (
        f"default-src 'none'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'"
    )
    return HTMLResponse(body, headers={"Content-Security-Policy": csp})


def create_app(
    settings: Settings,
    *,
    bind_host: str = "127.0.0.1",
    runs_dir: Path | None = None,
    client_factory: ClientFactory | None = None,
    run_source: RunSourceFactory | None = None,
) -> FastAPI:
    """The app for a server bound to ``bind_host``; ``client_factory`` and ``run_source`` let tests put
    stand-ins under the real manager (by default: the run's real HTTP client and the orchestrator)."""
    require_token_beyond_loopback(bind_host, settings.api_token)
    # A team deployment enqueues runs for ``deepcritical worker`` processes instead of running them here.
    manager_type = TeamRunManager if settings.queue_url is not None else RunManager
    manager = manager_type(
        settings, runs_dir=runs_dir, run_source=run_source, client_factory=client_factory or setup.http_client
    )
    # One limit on new runs for the API and MCP together: switching front ends does not step around it.
    rate_limit = RunRateLimit(settings.runs_per_minute)
    mcp_server = build_mcp_server(manager, settings, rate_limit, over_http=True)
    # The SDK checks Host and Origin itself for a loopback host; ApiGuard checks Origin in every case.
    mcp_routes = mcp_server.streamable_http_app(streamable_http_path="/mcp", host=bind_host).routes

    # What an upload stores without its vectors (a large export) is embedded behind, in this process.
    embedder = BackgroundEmbedder(manager.resources)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with manager, mcp_server.session_manager.run():
            try:
                yield
            finally:
                await embedder.aclose()

    app = FastAPI(
        title="DeepCritical",
        version=__version__,
        description="Evidence-grounded answers to biomedical research questions: start runs, follow their "
        "progress (Server-Sent Events), read and download their reports.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.manager = manager
    install_error_handlers(app)
    app.state.embedder = embedder
    app.include_router(build_router(manager, settings, rate_limit))
    app.include_router(build_library_router(Library(manager.resources), embedder))
    app.include_router(build_watch_router(settings, manager))
    app.router.routes.extend(mcp_routes)

    app.add_route("/", page, methods=["GET"], include_in_schema=False)  # as the server answers while loading

    @app.get(HEALTH_PATH, include_in_schema=False)
    async def health() -> dict[str, str]:
        return {"status": "ready"}  # what ``web.deferred`` says "loading" until this app has loaded

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return _docs_page()

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.mount(DOCS_ASSETS, StaticFiles(directory=str(resources.files("fastapi_offline") / "static")), name="docs")

    token = settings.api_token.get_secret_value() if settings.api_token is not None else None
    add_guards(app, token=token, loopback=is_loopback(bind_host), uploads={UPLOAD_PATH})
    return app
