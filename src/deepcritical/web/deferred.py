"""``deepcritical serve`` listening before the app has loaded. The full app (``web.app.create_app``: the run
manager, the store, the models' runtime, MCP: seconds of imports on a small machine) is built in a worker
thread once the server listens. Meanwhile the page (``/``), its static files and ``/api/health`` answer at
once, behind the same guards as the full app's; every other request waits for the full app, then goes to it.
A user who opens the page therefore sees it in well under a second rather than after the whole program has
loaded (bench/serve.py).

Imports only the web framework's light parts (Starlette), never ``web.app``: ``tests/web/test_serve_startup.py``
checks that what the server needs before it listens loads no store, model runtime or model client."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from deepcritical.errors import ConfigError
from deepcritical.text import one_line
from deepcritical.web.security import add_guards

_log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
HEALTH_PATH = "/api/health"


async def page(_: Request) -> FileResponse:
    return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8")


class DeferredWebApp:
    """An ASGI app: the page, its files and ``/api/health`` at once; everything else once ``load`` (called in a
    worker thread after the server listens) has built the full app, whose lifespan then runs here until the
    server stops. If ``load`` fails, ``problem`` says why, ``on_failure`` is called (``cli.serve`` sets it to
    stop the server), and every waiting request gets a 503 with that line."""

    def __init__(
        self,
        load: Callable[[], Starlette],
        *,
        token: str | None,
        loopback: bool,
    ) -> None:
        self._load = load
        self.on_failure: Callable[[], None] = lambda: None
        self._full: Starlette | None = None
        self._settled = asyncio.Event()
        self.problem: str | None = None
        self._early = Starlette(
            routes=[
                Route("/", page, methods=["GET"]),
                Route(HEALTH_PATH, self._health, methods=["GET"]),
                Mount("/static", StaticFiles(directory=STATIC), name="static"),
            ]
        )
        self._refusal = Starlette(routes=[Mount("/", self._unavailable)])
        for app in (self._early, self._refusal):
            add_guards(app, token=token, loopback=loopback, uploads=frozenset())

    async def _health(self, _: Request) -> Response:
        if self.problem is not None:
            return JSONResponse({"status": "failed", "error": self.problem}, status_code=503)
        return JSONResponse({"status": "ready" if self._full is not None else "loading"})

    async def _unavailable(self, scope: Scope, receive: Receive, send: Send) -> None:
        await JSONResponse({"error": self.problem or "the server is stopping"}, status_code=503)(scope, receive, send)

    def _answers_early(self, scope: Scope) -> bool:
        path = str(scope.get("path", ""))
        return scope["type"] == "http" and (path in ("/", HEALTH_PATH) or path.startswith("/static/"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if self._full is None and self._answers_early(scope):
            await self._early(scope, receive, send)
            return
        await self._settled.wait()
        app: ASGIApp = self._full if self._full is not None else self._refusal
        await app(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """The server's lifespan: started at once; the full app is loaded meanwhile and its own lifespan
        entered and left here, in this one task (MCP's session manager needs its task group entered and left
        in the same task)."""
        await receive()  # lifespan.startup
        await send({"type": "lifespan.startup.complete"})
        loading = asyncio.create_task(asyncio.to_thread(self._load), name="full app")
        stopping = asyncio.ensure_future(receive())  # lifespan.shutdown
        async with AsyncExitStack() as stack:
            await asyncio.wait({loading, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if not loading.done():  # stopped while loading: the thread finishes its imports, unawaited
                loading.cancel()
            elif (full := self._loaded(loading)) is not None:
                try:
                    await stack.enter_async_context(full.router.lifespan_context(full))
                except Exception as error:  # the run manager could not start (its runs folder, its queue)
                    self._fail(error)
                else:
                    self._full = full
            self._settled.set()
            await stopping
        await send({"type": "lifespan.shutdown.complete"})

    def _loaded(self, loading: asyncio.Task[Starlette]) -> Starlette | None:
        try:
            return loading.result()
        except Exception as error:
            self._fail(error)
            return None

    def _fail(self, error: Exception) -> None:
        """Said by the command and to every request, rather than leaving them waiting."""
        if isinstance(error, ConfigError):  # a setting a run needs is wrong: its own one line
            self.problem = one_line(str(error))
        else:  # a bug: its one line for the user, its traceback in the log
            _log.error("app_load_failed", exc_info=error)
            self.problem = one_line(f"the app could not load ({type(error).__name__}: {error})")
        self.on_failure()
