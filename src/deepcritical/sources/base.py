"""The one place that owns a source's error policy: a source subclasses ``SearchTool`` and implements only
``_search`` (request building and parsing); ``search`` maps failures to the project's errors once, for every
source, and ``get_with_retry`` is every source's GET (retries, a size cap, secrets blanked before parsing)."""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any, ClassVar, TypeVar

import httpx2
import structlog

from deepcritical import __version__
from deepcritical.errors import (
    RateLimitError,
    ResponseTooLargeError,
    SearchError,
    SourceHTTPError,
    UnusableResponseError,
)
from deepcritical.models import Evidence, SourceName
from deepcritical.redaction import Redactor
from deepcritical.source_table import BY_NAME
from deepcritical.sources.retry import RetryPolicy, retry_after_seconds
from deepcritical.text import one_line

logger = structlog.get_logger(__name__)
T = TypeVar("T")

# Public services (SearXNG instances, ClinicalTrials.gov) refuse clients that look like bots; an honest,
# identifiable User-Agent gets through. The run's client sends it with every request.
USER_AGENT = f"DeepCritical/{__version__} (+https://github.com/deepcritical/deepcritical)"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# An efetch of 100 abstracts is about 1 MB; a body many times that is a wrong URL or a hostile server,
# and would be held in memory whole.
MAX_BODY_BYTES = 20 * 1024 * 1024
SNIPPET_CHARS = 200
# Headers that describe the bytes on the wire, not the decoded body a source reads.
_FRAMING_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class SearchTool(ABC):
    """An async search source. Subclasses set ``name`` and ``host`` (for messages), and implement ``_search``;
    a source that sends a secret sets ``secrets`` so that no body it reads and no error it raises can carry it."""

    name: ClassVar[SourceName]
    secrets: Redactor = Redactor(())
    timeout: float = 30.0

    @property
    def timeout_variable(self) -> str:
        """The setting behind ``timeout``: the source table's ``{NAME}_TIMEOUT``."""
        return f"{BY_NAME[self.name].variable}_TIMEOUT"

    @property
    def host(self) -> str:
        """Who answers this source's requests, for messages."""
        return self.name

    async def search(self, query: str, max_results: int = 10) -> list[Evidence]:
        """Search and return evidence, or raise SearchError / RateLimitError attributed to this source
        (``error.source``), its ``reason`` readable and redacted."""
        query = one_line(query)
        if not query:
            raise SearchError("empty query", source=self.name)
        try:
            results = await self._search(query, max_results)
        except SearchError as error:
            failure: SearchError = error
        except httpx2.TimeoutException as error:
            failure = SearchError(
                self.timeout_reason(
                    self.timeout, host=host_of(error, self.host), what=type(error).__name__, asked_again=True
                )
            )
        except httpx2.HTTPStatusError as error:
            status, host = error.response.status_code, error.request.url.host
            failure = SourceHTTPError(f"HTTP {status} from {host}", status)
        except httpx2.RequestError as error:
            failure = SearchError(f"request to {host_of(error, self.host)} failed: {error!r}")
        else:
            logger.info("source_search_complete", source=self.name, query=query, results=len(results))
            return results[:max_results]
        reason = failure.reason if failure.source in (None, self.name) else str(failure)
        # Raised outside the handler, and redacted, so no echoed URL or exception text carries a secret onwards.
        raise failure.restated(self.secrets(reason), source=self.name) from None

    def timeout_reason(
        self, seconds: float, *, host: str | None = None, what: str = "", asked_again: bool = False
    ) -> str:
        """What a timed-out search says: where, after how long, and which setting gives it longer. The one
        wording for a request's own timeout and for the handler's deadline on the whole search."""
        where = f" from {host or self.host}" if (host or self.host) != self.name else ""
        detail = f" ({what})" if what else ""
        again = ", also when asked again" if asked_again else ""
        hint = (
            f"; if it is slow rather than down, raise {self.timeout_variable} (now {self.timeout:g})"
            if self.timeout_variable
            else ""
        )
        return f"no answer{where} within {seconds:g} s{detail}{again}{hint}"

    @abstractmethod
    async def _search(self, query: str, max_results: int) -> list[Evidence]:
        """Build the request, send it, parse the answer."""


def host_of(error: httpx2.RequestError, fallback: str) -> str:
    try:
        return error.request.url.host or fallback
    except RuntimeError:  # an exception raised without its request
        return fallback


def _unchanged(text: str) -> str:
    return text


def _try_again_at(wait: float, now: Callable[[], float]) -> str:
    return f"{datetime.fromtimestamp(now(), UTC) + timedelta(seconds=wait):%Y-%m-%d %H:%M} UTC"


async def _receive(
    client: httpx2.AsyncClient,
    url: str,
    *,
    source: str,
    params: Mapping[str, Any] | None,
    headers: Mapping[str, str] | None,
    timeout: float | None,  # noqa: ASYNC109 - httpx's per-request timeout, not a cancel scope
    max_bytes: int,
    redact: Callable[[str], str],
    before_send: Callable[[], Awaitable[None]] | None,
) -> httpx2.Response:
    """One GET, its body read up to ``max_bytes`` and redacted: the response every source reads."""

    async def trace(event: str, info: Mapping[str, Any]) -> None:
        if before_send is not None and event.endswith("send_request_headers.started"):
            await before_send()

    async with client.stream(
        "GET",
        url,
        params=params,
        headers=headers,
        timeout=timeout if timeout is not None else httpx2.USE_CLIENT_DEFAULT,
        extensions={"trace": trace} if before_send is not None else None,
    ) as response:
        host = response.request.url.host
        too_large = ResponseTooLargeError(
            f"{host} sent more than {max_bytes / 1e6:g} MB (the most a search reads); "
            "the body was not read. Is the base URL right?",
            source=source,
        )
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise too_large
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > max_bytes:
                raise too_large
        kept_headers = [
            (key, value) for key, value in response.headers.multi_items() if key.lower() not in _FRAMING_HEADERS
        ]
        decoded = httpx2.Response(
            response.status_code, headers=kept_headers, content=bytes(body), request=response.request
        )
    # Secrets go before anything can cut the text short (an error snippet, a page title in a message).
    received = httpx2.Response(
        decoded.status_code,
        headers=kept_headers,
        content=redact(decoded.text).encode("utf-8"),
        request=decoded.request,
    )
    received.encoding = "utf-8"
    return received


def read_json(response: httpx2.Response) -> Any:
    """The ``read`` of every JSON API for ``get_with_retry``: the decoded JSON body. JSON cut off mid-way
    is asked for again (``UnusableResponseError``); a body that is not JSON at all (a maintenance or login
    page, a wrong base URL) is an error at once, naming the host and the content type."""
    try:
        return response.json()
    except ValueError as error:
        host, text = response.request.url.host, response.text.lstrip()
        if text.startswith(("{", "[")):
            raise UnusableResponseError(f"truncated or malformed JSON from {host}: {text[:120]!r}") from error
        kind = response.headers.get("content-type", "no content type")
        raise SearchError(f"not JSON from {host} ({kind}): {text[:120]!r}") from error


def json_object(value: object) -> Mapping[str, Any]:
    """A JSON field that should hold an object, or an empty one (a body's fields are untrusted)."""
    return value if isinstance(value, dict) else {}


def json_list(value: object) -> list[Any]:
    """A JSON field that should hold a list, or an empty one."""
    return value if isinstance(value, list) else []


def json_count(value: object) -> int | None:
    """A JSON field that should hold a count (an integer, 0 or more; ``true`` is none), or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class _BusyError(Exception):
    """HTTP 429 or 5xx: the same request may pass a moment later."""

    def __init__(self, response: httpx2.Response, asked: float | None) -> None:
        super().__init__(f"HTTP {response.status_code}")
        self.response, self.asked = response, asked


SOURCE_RETRIES = RetryPolicy(
    retryable=lambda error: isinstance(error, _BusyError | UnusableResponseError | httpx2.TransportError),
    asked=lambda error: error.asked if isinstance(error, _BusyError) else None,
    timed_out=lambda error: isinstance(error, httpx2.TimeoutException),
    event="source_retry",
)


async def get_with_retry(
    client: httpx2.AsyncClient,
    url: str,
    *,
    source: str,
    read: Callable[[httpx2.Response], T],
    params: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float | None = None,  # noqa: ASYNC109 - httpx's per-request timeout, not a cancel scope
    max_bytes: int = MAX_BODY_BYTES,
    redact: Callable[[str], str] | None = None,
    before_request: Callable[[], Awaitable[None]] | None = None,
    before_send: Callable[[], Awaitable[None]] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    now: Callable[[], float] = time.time,
) -> T:
    """GET ``url`` and return ``read(response)``, under ``SOURCE_RETRIES`` (``sources.retry``).

    Retried: HTTP 429 and 5xx (after what ``Retry-After`` asks), a transport error (a timeout once), and any
    ``UnusableResponseError`` raised by ``read`` (a maintenance page, an empty or truncated body). A
    ``Retry-After`` longer than a search waits ends the search at once with a message saying when to try again.
    Other 4xx raise SourceHTTPError at once; a body over ``max_bytes`` raises ResponseTooLargeError. ``read``
    sees the body with ``redact`` applied.

    ``before_request`` runs before every request (the NCBI rate limiter hooks in here), so retries
    count against the limit too; ``before_send``, when the transport reports it (httpcore's ``trace``
    extension), runs once the connection is ready, just before the request is written.
    """

    retrying = SOURCE_RETRIES.retrying(sleep, source=source)

    async def attempt() -> T:
        if before_request is not None:
            await before_request()
        response = await _receive(
            client,
            url,
            source=source,
            params=params,
            headers=headers,
            timeout=timeout,
            max_bytes=max_bytes,
            redact=redact or _unchanged,
            before_send=before_send,
        )
        if response.status_code in RETRY_STATUSES:
            raise _BusyError(response, retry_after_seconds(response.headers, now=now))
        if not response.is_success:  # an error, or a redirect the client was not allowed to follow
            status, asked = response.status_code, retrying.statistics["attempt_number"]
            snippet = one_line(response.text)[:SNIPPET_CHARS]
            raise SourceHTTPError(f"HTTP {status} after {asked} attempt(s): {snippet}", status, source=source)
        # Parsing a body (an efetch of 100 records: tens of ms) in a worker thread, so that the event
        # loop goes on serving a server's other runs meanwhile.
        return await asyncio.to_thread(read, response)

    try:
        return await retrying(attempt)
    except _BusyError as busy:
        raise _busy_error(busy, source, retrying.statistics["attempt_number"], now) from None
    except UnusableResponseError as error:
        asked = retrying.statistics["attempt_number"]
        raise error.restated(f"{error.reason} (asked {asked} times)", source=error.source or source) from None


def _busy_error(busy: _BusyError, source: str, attempts: int, now: Callable[[], float]) -> SearchError:
    """The error of a server still busy when the retrying stopped: it asked for a longer wait than a search
    waits, or the attempts ran out."""
    status, host, max_wait = busy.response.status_code, busy.response.request.url.host, SOURCE_RETRIES.max_wait
    if busy.asked is not None and busy.asked > max_wait:
        error_type = RateLimitError if status == 429 else SearchError
        return error_type(
            f"{host} asks to wait {busy.asked:.0f} s before the next request (HTTP {status}, Retry-After), longer "
            f"than a search waits ({max_wait:g} s): try again after {_try_again_at(busy.asked, now)}",
            source=source,
        )
    if status == 429:
        return RateLimitError(f"rate limited (HTTP 429) after {attempts} attempt(s)", source=source)
    snippet = one_line(busy.response.text)[:SNIPPET_CHARS]
    return SourceHTTPError(f"HTTP {status} after {attempts} attempt(s): {snippet}", status, source=source)


class JsonApiTool(SearchTool):
    """A source that asks one JSON API over the run's client: the base URL and the timeout (by default the
    source table's public service and timeout) and the GET that reads JSON (``get_json``) are here; a
    subclass builds its parameters and parses the body."""

    def __init__(
        self,
        client: httpx2.AsyncClient,
        *,
        base_url: str | None = None,
        timeout: float | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        since: date | None = None,
    ) -> None:
        self._client = client
        self.since = since  # only what the service added on or after this date; None: everything
        entry = BY_NAME[self.name]
        self.base_url = (base_url or entry.base_url or "").strip().rstrip("/")
        self.timeout = entry.timeout if timeout is None else timeout
        self._sleep = sleep

    @property
    def host(self) -> str:
        return httpx2.URL(self.base_url).host or self.base_url

    async def get_json(self, path: str, params: Mapping[str, Any], *, headers: Mapping[str, str] | None = None) -> Any:
        """GET ``base_url + path`` with the source's error policy; the decoded JSON body."""
        return await get_with_retry(
            self._client,
            f"{self.base_url}{path}",
            source=self.name,
            read=read_json,
            params=params,
            headers=headers,
            timeout=self.timeout,
            redact=self.secrets,
            sleep=self._sleep,
        )
