"""Running the server of ``deepcritical serve``: the page, the API and MCP over HTTP, on uvicorn."""

from __future__ import annotations

import errno
import socket

import uvicorn

from deepcritical.cli.common import freeze_imports
from deepcritical.errors import ConfigError
from deepcritical.web.deferred import DeferredWebApp


def listening_socket(host: str, port: int) -> socket.socket:
    """The server's socket, bound and listening before anything says the server is up: a port in use is
    a ConfigError naming it, not a success line followed by a silent exit."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"--port {port}: the port is in use on {host} (another server, or a Chroma server on its "
                "default port 8000?): choose another with --port"
            ) from error
        raise ConfigError(f"--host {host} --port {port}: cannot listen there ({error.strerror or error})") from error
    sock.set_inheritable(True)
    return sock


def serve_app(app: DeferredWebApp, *, sock: socket.socket) -> None:
    """Serve on ``sock`` until interrupted, or until the app could not load (``app.problem`` says why); runs
    still going are recorded as interrupted on the way out."""
    # Logging is already configured by the command (stderr, quiet unless --verbose). Forwarded headers are
    # never trusted: the client address is the peer's, so X-Forwarded-For cannot step around the rate limit.
    config = uvicorn.Config(
        app,
        log_config=None,
        access_log=False,
        server_header=False,
        proxy_headers=False,
        forwarded_allow_ips="",
    )
    server = uvicorn.Server(config)

    def stop() -> None:
        server.should_exit = True

    app.on_failure = stop
    freeze_imports()  # a full collection walking every import's objects would stall the event loop too
    server.run(sockets=[sock])
