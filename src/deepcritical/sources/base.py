"""The one place that owns a source's error policy.

A source subclasses ``SearchTool`` and implements only ``_search`` (request building and parsing).
``search`` maps transport failures to the project's errors once, for every source, and logs.
``get_with_retry`` retries HTTP 429 and 5xx with backoff that honours ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar

import httpx2
import structlog

from deepcritical import __version__
from deepcritical.errors import RateLimitError, SearchError, SourceHTTPError
from deepcritical.models import Evidence, SourceName
from deepcritical.redaction import Redactor

logger = structlog.get_logger(__name__)

# Public services (SearXNG instances, ClinicalTrials.gov) refuse clients that look like bots; an honest,
# identifiable User-Agent gets through. The run's client sends it with every request.
USER_AGENT = f"DeepCritical/{__version__} (+https://github.com/deepcritical/deepcritical)"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_WAIT_SECONDS = 30.0


class SearchTool(ABC):
    """An async search source. Subclasses set ``name`` and implement ``_search``; a source that sends a
    secret sets ``secrets`` so that no error it raises can carry it."""

    name: ClassVar[SourceName]
    secrets: Redactor = Redactor(())

    async def search(self, query: str, max_results: int = 10) -> list[Evidence]:
        """Search and return evidence, or raise SearchError / RateLimitError with a readable message."""
        if not query.strip():
            raise SearchError(f"{self.name}: empty query")
        try:
            results = await self._search(query.strip(), max_results)
        except SearchError as error:
            failure: SearchError = error
        except httpx2.TimeoutException as error:
            failure = SearchError(f"{self.name}: request timed out ({type(error).__name__})")
        except httpx2.HTTPStatusError as error:
            status, host = error.response.status_code, error.request.url.host
            failure = SearchError(f"{self.name}: HTTP {status} from {host}")
        except httpx2.RequestError as error:
            failure = SearchError(f"{self.name}: request failed: {error!r}")
        else:
            logger.info("source_search_complete", source=self.name, query=query, results=len(results))
            return results[:max_results]
        # Raised outside the handler, and redacted, so no echoed URL or body carries a secret onwards.
        raise type(failure)(self.secrets(str(failure))) from None

    @abstractmethod
    async def _search(self, query: str, max_results: int) -> list[Evidence]:
        """Build the request, send it, parse the answer."""


def retry_after_seconds(response: httpx2.Response, default: float) -> float:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date), else ``default``."""
    header = response.headers.get("Retry-After")
    if header is None:
        return default
    header = header.strip()
    if header.isdigit():
        return min(float(header), MAX_RETRY_WAIT_SECONDS)
    try:
        when = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return default
    return min(max(when.timestamp() - time.time(), 0.0), MAX_RETRY_WAIT_SECONDS)


async def get_with_retry(
    client: httpx2.AsyncClient,
    url: str,
    *,
    source: str,
    params: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float | None = None,  # noqa: ASYNC109 - httpx's per-request timeout, not a cancel scope
    attempts: int = 3,
    base_delay: float = 1.0,
    before_request: Callable[[], Awaitable[None]] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> httpx2.Response:
    """GET with retries on 429 and 5xx; any other answer but a success raises SearchError at once.

    ``before_request`` runs before every attempt (the NCBI rate limiter hooks in here), so
    retries count against the limit too.
    """
    response: httpx2.Response | None = None
    attempt = 0
    while attempt < attempts:
        attempt += 1
        if before_request is not None:
            await before_request()
        response = await client.get(
            url, params=params, headers=headers, timeout=timeout if timeout is not None else httpx2.USE_CLIENT_DEFAULT
        )
        if response.status_code not in RETRY_STATUSES:
            break
        if attempt < attempts:
            wait = retry_after_seconds(response, default=base_delay * 2 ** (attempt - 1))
            logger.warning("source_retry", source=source, status=response.status_code, attempt=attempt, wait=wait)
            await sleep(wait)
    assert response is not None
    if response.status_code == 429:
        raise RateLimitError(f"{source}: rate limited (HTTP 429) after {attempt} attempt(s)")
    if not response.is_success:  # an error, or a redirect the client was not allowed to follow
        snippet = " ".join(response.text.split())[:200]
        raise SourceHTTPError(
            f"{source}: HTTP {response.status_code} after {attempt} attempt(s): {snippet}", status=response.status_code
        )
    return response
