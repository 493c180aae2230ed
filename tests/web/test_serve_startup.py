"""``deepcritical serve`` answers before its app has loaded (``web.deferred``): what it needs to listen loads no
store, model runtime or model client; the page and ``/api/health`` answer while the app loads, other requests
wait for it; an app that cannot load stops the server with its one line. Not timed here (a shared machine's
wall time is noise): bench/serve.py times the first answer."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from deepcritical.errors import ConfigError
from deepcritical.web.deferred import DeferredWebApp

ROOT = Path(__file__).resolve().parents[2]
# What the full app loads (the store, the ONNX runtime, the model clients, the web framework's models) and a
# torch install would add: seconds of imports on a small machine, none of them needed to listen.
HEAVY = ("chromadb", "onnxruntime", "torch", "sentence_transformers", "pydantic_ai", "numpy", "fastapi", "mcp")
LOADED = """
import json, sys
from deepcritical.cli.app import app
from deepcritical.cli import serve, services
from deepcritical.config import load_settings
from deepcritical.web import deferred, security
load_settings(demo_mode=True)
before = [name for name in {heavy!r} if name in sys.modules]
from deepcritical.web.app import create_app
print(json.dumps([before, [name for name in {heavy!r} if name in sys.modules]]))
"""


def test_what_serve_needs_to_listen_loads_no_store_model_runtime_nor_model_client() -> None:
    script = LOADED.format(heavy=HEAVY)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=300)
    before, after = json.loads(result.stdout.strip().splitlines()[-1])
    assert before == []
    assert {"chromadb", "pydantic_ai", "fastapi", "mcp"} <= set(after)  # the full app does: the check is not vacuous


class Loader:
    """A full app that loads when the test says so (or fails to), with a lifespan the test can see."""

    def __init__(self, problem: Exception | None = None) -> None:
        self.release = threading.Event()
        self.problem = problem
        self.lifespan: list[str] = []

    def __call__(self) -> Starlette:
        if not self.release.wait(60):
            raise TimeoutError("the test never released the load")
        if self.problem is not None:
            raise self.problem

        @asynccontextmanager
        async def lifespan(_: Starlette) -> AsyncIterator[None]:
            self.lifespan.append("started")
            yield
            self.lifespan.append("stopped")

        async def runs(_: Request) -> JSONResponse:
            return JSONResponse(["a run"])

        return Starlette(routes=[Route("/api/runs", runs)], lifespan=lifespan)


class WatchedEvent(asyncio.Event):
    """The deferred app's "loaded" event, saying when a request has started waiting on it."""

    def __init__(self) -> None:
        super().__init__()
        self.waited = asyncio.Event()

    async def wait(self) -> bool:
        self.waited.set()
        return await super().wait()


@asynccontextmanager
async def serving(app: DeferredWebApp) -> AsyncIterator[httpx2.AsyncClient]:
    # Bound and listening before the server starts: a request made at once waits in the socket's backlog until
    # uvicorn accepts it (no polling of its ``started`` flag).
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    port = listening.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="on"))
    app.on_failure = lambda: setattr(server, "should_exit", True)
    task = asyncio.create_task(server.serve(sockets=[listening]))
    try:
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            yield client
    finally:
        server.should_exit = True
        await task
        listening.close()


async def test_the_page_and_health_answer_while_the_app_loads_and_other_requests_wait_for_it() -> None:
    loader = Loader()
    app = DeferredWebApp(loader, token=None, loopback=True)
    app._settled = loaded = WatchedEvent()
    async with serving(app) as client:
        page = await client.get("/")
        assert page.status_code == 200
        assert "<html" in page.text
        assert "default-src 'none'" in page.headers["content-security-policy"]  # behind the same guards
        assert (await client.get("/static/app.css")).status_code == 200
        assert (await client.get("/api/health")).json() == {"status": "loading"}
        assert (await client.get("/", headers={"Host": "evil.example"})).status_code == 400  # DNS rebinding
        waiting = asyncio.create_task(client.get("/api/runs"))
        await loaded.waited.wait()
        assert not waiting.done()
        loader.release.set()
        answered = await waiting
        assert answered.json() == ["a run"]
        assert loader.lifespan == ["started"]
        assert (await client.get("/api/health")).status_code == 404  # the full app answers everything now
    assert loader.lifespan == ["started", "stopped"]


async def test_an_app_that_cannot_load_says_why_to_every_waiting_request_and_stops_the_server() -> None:
    loader = Loader(ConfigError("DEEPCRITICAL_EMBEDDING_MODEL: no model at /nowhere"))
    app = DeferredWebApp(loader, token=None, loopback=True)
    stopped = asyncio.Event()
    async with serving(app) as client:
        stop_server = app.on_failure

        def stop() -> None:
            stop_server()
            stopped.set()

        app.on_failure = stop
        waiting = asyncio.create_task(client.get("/api/runs"))
        loader.release.set()
        refused = await waiting
        await stopped.wait()
    assert refused.status_code == 503
    assert refused.json() == {"error": "DEEPCRITICAL_EMBEDDING_MODEL: no model at /nowhere"}
    assert app.problem == "DEEPCRITICAL_EMBEDDING_MODEL: no model at /nowhere"


def test_serve_with_a_setting_a_run_needs_wrong_exits_2_in_one_line(tmp_path: Path) -> None:
    environment = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "DEEPCRITICAL_HOME": str(tmp_path)}
    environment |= {"PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1"}
    environment["DEEPCRITICAL_EMBEDDING_MODEL"] = str(tmp_path / "no-model")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = subprocess.run(
        [sys.executable, "-m", "deepcritical", "serve", "--demo", "--port", str(port)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
    assert result.returncode == 2
    [line] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert line.startswith("error: DEEPCRITICAL_EMBEDDING_MODEL:")
