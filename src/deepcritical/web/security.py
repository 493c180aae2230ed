"""What keeps the server to its owner: a bearer token for the API and ``/mcp`` when one is configured (it
must be, to listen beyond loopback), same-origin checks against cross-site requests and DNS rebinding,
and a strict Content-Security-Policy with the usual hardening headers on every response."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import secrets
from base64 import b64encode
from collections.abc import Collection, Mapping

from starlette.applications import Starlette
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deepcritical.errors import ConfigError

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
# The page's own files only: no inline script or style, no third party, no framing, no plugins. Images may
# also be blob: URLs, which is how the page shows a run's figures fetched with its API token (app.js).
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
    "font-src 'self'; manifest-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HARDENING = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Open to anyone who can reach the server: they hold no run data (the page asks the first for its settings;
# the second says whether the server has loaded).
PUBLIC_API = frozenset({"/api/info", "/api/health"})
# A run request is a question of at most 2,000 characters and a few options; an MCP call is as small. A body
# over this is refused (413) before it is parsed, however it is sent (declared, or streamed in chunks).
MAX_BODY_BYTES = 64 * 1024


def is_loopback(host: str) -> bool:
    """True for an address or name only this machine can reach."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_token_beyond_loopback(bind_host: str, token: object | None) -> None:
    """Listening beyond loopback needs ``DEEPCRITICAL_API_TOKEN``: checked before anything binds."""
    if not is_loopback(bind_host) and token is None:
        raise ConfigError(
            f"--host {bind_host}: listening beyond loopback needs DEEPCRITICAL_API_TOKEN (a random string of "
            "16+ characters that clients send as a bearer token)"
        )


def add_guards(app: Starlette, *, token: str | None, loopback: bool, uploads: Collection[str]) -> None:
    """The guards every response of the server passes through, outermost last: the hardening headers, the
    Host check on loopback, the body limit (``uploads``: the POST paths with a limit of their own), the token."""
    app.add_middleware(ApiGuard, token=token)
    app.add_middleware(BodyLimit, uploads=uploads)
    if loopback:
        app.add_middleware(LoopbackHosts)
    app.add_middleware(SecurityHeaders)


def script_hash(script: str) -> str:
    """A CSP source allowing exactly this inline script (for the third-party API docs page only)."""
    return "'sha256-" + b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"


def protected(path: str) -> bool:
    """Paths that reach run data or start work: the API (but its public info) and MCP."""
    if path == "/mcp" or path.startswith("/mcp/"):
        return True
    return path.startswith("/api/") and path not in PUBLIC_API


async def _json_error(send: Send, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
    body = json.dumps({"error": message, "field": None}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(name.lower().encode(), value.encode()) for name, value in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class BodyTooLargeError(HTTPException):
    """Raised from ``receive`` once a body passes the limit; FastAPI passes an HTTPException through."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is over {limit:,} bytes")


class BodyLimit:
    """Refuses request bodies over ``max_bytes`` with 413: at once when ``Content-Length`` says so, else by
    counting the bytes as they arrive, so a body sent in chunks is stopped at the limit, never read whole.
    ``uploads`` names the POST paths that take a file: their route holds them to its own, larger limit
    (DEEPCRITICAL_LIBRARY_MAX_FILE_MB) the same two ways, naming the file, as it streams the body to disk."""

    def __init__(
        self, app: ASGIApp, *, max_bytes: int = MAX_BODY_BYTES, uploads: Collection[str] = frozenset()
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.uploads = frozenset(uploads)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (scope["method"] == "POST" and scope["path"] in self.uploads):
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await _json_error(send, 413, f"the request body is over {self.max_bytes:,} bytes")
            return
        received = 0
        started = False

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLargeError(self.max_bytes)
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except BodyTooLargeError as error:
            if started:
                raise
            await _json_error(send, 413, str(error.detail))


class LoopbackHosts:
    """On a loopback server, a request whose Host is not a loopback name is refused (400, the JSON error
    shape): a site whose DNS name is rebound to 127.0.0.1 reaches nothing."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = Headers(scope=scope).get("host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if name.strip("[]").rstrip(".").lower() not in LOOPBACK_NAMES:  # host names are case-insensitive
            await _json_error(send, 400, f"this server answers only to a loopback host name, not {host[:100]!r}")
            return
        await self.app(scope, receive, send)


class ApiGuard:
    """For the API and ``/mcp``: the bearer token when one is configured, and same-origin requests only.

    A browser sends ``Origin`` with cross-site requests; one that names another site than the request's
    own host is refused, so a page elsewhere cannot start runs or call tools with the user's browser.
    (Loopback servers also check the Host header, see ``create_app``, which defeats DNS rebinding.)"""

    def __init__(self, app: ASGIApp, *, token: str | None) -> None:
        self.app = app
        self._token = token.encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not protected(scope["path"]):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        checks_origin = scope["path"].startswith("/mcp") or scope["method"] not in SAFE_METHODS
        if checks_origin and origin is not None and origin != f"{scope['scheme']}://{headers.get('host', '')}":
            await _json_error(send, 403, f"cross-origin request refused (Origin {origin[:100]!r})")
            return
        if self._token is not None:
            scheme, _, credentials = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not secrets.compare_digest(credentials.strip().encode(), self._token):
                await _json_error(
                    send,
                    401,
                    "this server needs its API token: send the header Authorization: Bearer <DEEPCRITICAL_API_TOKEN>",
                    {"WWW-Authenticate": "Bearer"},
                )
                return
        await self.app(scope, receive, send)


class SecurityHeaders:
    """Adds the CSP and hardening headers to every HTTP response that does not set its own CSP."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if "content-security-policy" not in headers:
                    headers["Content-Security-Policy"] = PAGE_CSP
                for name, value in HARDENING.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)
