"""General web search through DuckDuckGo and friends, via the ``ddgs`` metasearch library.

``ddgs`` is synchronous (it fans out to engines on its own thread pool), so the call runs in a
worker thread: a slow search engine must never stall the event loop the other sources share.
The result-cleaning helpers here (``text_of``, ``web_url``, ``published_date``, ``rank_relevance``)
are shared with the SearXNG and You.com sources, which get the same kind of untrusted web JSON.
"""

from __future__ import annotations

import asyncio
import html
import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Protocol
from urllib.parse import urlsplit

import structlog
from ddgs import DDGS
from ddgs.exceptions import DDGSException, RatelimitException
from ddgs.exceptions import TimeoutException as DdgsTimeoutException

from deepcritical.errors import RateLimitError, SearchError
from deepcritical.models import Citation, Evidence, SourceName
from deepcritical.sources.base import SearchTool
from deepcritical.sources.grading import grade_web
from deepcritical.text import one_line, without_controls

logger = structlog.get_logger(__name__)

MAX_TITLE_CHARS = 500
MAX_CONTENT_CHARS = 1000
# ddgs raises this (with no engine error attached) when every engine answered but none found anything:
# that is an empty result, not a failure.
DDGS_NO_RESULTS_MESSAGE = "No results found."
_ISO_DATE = re.compile(r"^\d{4}(?:-\d{2}(?:-\d{2})?)?")
# A tag: "<" then a name at once, so "IC50 < 5 nM" or "p<0.05" is text, not markup. Tags that break a
# line separate words; the others (highlighting: <b>, <em>, <span>) sit inside them.
_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?/?>")
_BREAKING_TAG = re.compile(r"</?(?:br|p|div|li|tr|td|th|h[1-6])(?:\s[^<>]*)?/?>", re.IGNORECASE)


def text_of(value: object) -> str:
    """A stripped string without control characters, or "" for anything that is not a string (result
    fields are untrusted JSON)."""
    return without_controls(value).strip() if isinstance(value, str) else ""


def clean_web_text(value: object) -> str:
    """Plain text from a search engine's title or snippet: tags (highlighting such as ``<b>…</b>``)
    removed, HTML entities (``&amp;``, ``&mdash;``) decoded, whitespace collapsed, control characters
    gone. A snippet escaped twice (``&lt;b&gt;``) has its decoded tags removed too."""
    text = text_of(value)
    if not text:
        return ""
    return one_line(_strip_tags(html.unescape(_strip_tags(text))))


def _strip_tags(text: str) -> str:
    return _TAG.sub("", _BREAKING_TAG.sub(" ", text))


def web_url(value: object) -> str:
    """An absolute http(s) URL, or "" for anything else: a result without a usable link is skipped,
    and a malformed one would break evidence identity (``normalize_url``) further on."""
    url = text_of(value)
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    return url if parts.scheme.lower() in ("http", "https") and parts.netloc else ""


def published_date(value: object) -> str:
    """``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` from an ISO date or timestamp; anything else is ``Unknown``."""
    if isinstance(value, str) and (match := _ISO_DATE.match(value.strip())):
        return match.group(0)
    return "Unknown"


def rank_relevance(position: int) -> float:
    """Relevance from a 0-based rank when a source gives no score: 1.0 at the top, 0.05 less per
    place, never below 0.5 (a ranked hit is still a hit)."""
    return max(0.5, 1.0 - position * 0.05)


class DdgsLike(Protocol):
    """What WebTool needs from ``ddgs.DDGS``; the demo stand-in implements the same."""

    def text(self, query: str, *, max_results: int, safesearch: str) -> Sequence[Mapping[str, Any]]:
        """Text search; each result has ``title``, ``href`` and ``body``."""
        ...


def web_evidence(citation: Citation, content: str, relevance: float, max_chars: int = MAX_CONTENT_CHARS) -> Evidence:
    """A web result as Evidence: its text cut to ``max_chars``, graded by its words and address."""
    content = content[:max_chars]
    grade = grade_web(citation.title, content, citation.url, citation.doi)
    return Evidence(content=content, citation=citation, relevance=relevance, grade=grade)


def results_to_evidence(results: Sequence[Mapping[str, Any]]) -> list[Evidence]:
    """DDGS text results as Evidence, skipping any without a title, link or body.

    Relevance decays with the position in DDG's own ranking, so a skipped item still uses up its rank.
    """
    evidence: list[Evidence] = []
    for position, item in enumerate(results):
        title, url = clean_web_text(item.get("title")), web_url(item.get("href"))
        body = clean_web_text(item.get("body"))
        if not (title and url and body):
            continue
        citation = Citation(source="web", title=title[:MAX_TITLE_CHARS], url=url, date="Unknown")
        evidence.append(web_evidence(citation, body, rank_relevance(position)))
    return evidence


class WebTool(SearchTool):
    """Web search via ``ddgs`` text search (DuckDuckGo and other engines). No API key needed."""

    name: ClassVar[SourceName] = "web"

    def __init__(self, *, ddgs_factory: Callable[[], DdgsLike] | None = None, timeout: float = 20.0) -> None:
        """``ddgs_factory`` makes this tool's one client, on first use (default: ``ddgs.DDGS`` with
        ``timeout``); demo mode passes the stand-in here. ``timeout`` also bounds the whole call."""
        self.timeout = timeout
        self._ddgs_factory = ddgs_factory or (lambda: DDGS(timeout=math.ceil(timeout)))
        self._ddgs: DdgsLike | None = None
        self._ddgs_lock = threading.Lock()

    @property
    def host(self) -> str:
        return "the ddgs search engines"

    def _client(self) -> DdgsLike:
        # One client (and its HTTP session) per tool, i.e. per run, made in the first search's worker thread.
        with self._ddgs_lock:
            if self._ddgs is None:
                self._ddgs = self._ddgs_factory()
            return self._ddgs

    def _search_sync(self, query: str, max_results: int) -> list[Mapping[str, Any]]:
        return list(self._client().text(query, max_results=max_results, safesearch="moderate"))

    async def _search(self, query: str, max_results: int) -> list[Evidence]:
        try:
            results = await asyncio.wait_for(
                asyncio.to_thread(self._search_sync, query, max_results), timeout=self.timeout
            )
        except TimeoutError as error:
            # The worker thread cannot be cancelled; it ends when ddgs's own timeout fires.
            raise SearchError(self.timeout_reason(self.timeout, what="the whole search"), source=self.name) from error
        except DDGSException as error:
            if str(error) == DDGS_NO_RESULTS_MESSAGE:
                logger.info("web_no_results", query=query)
                return []
            raise _as_search_error(error) from error
        return results_to_evidence(results)


def _as_search_error(error: DDGSException) -> SearchError:
    # ddgs collects per-engine failures and re-raises the last one wrapped in a plain DDGSException,
    # so the rate-limit or timeout signal may sit in ``args[0]`` rather than in the exception's type.
    cause = error.args[0] if error.args and isinstance(error.args[0], DDGSException) else error
    if isinstance(error, RatelimitException) or isinstance(cause, RatelimitException):
        return RateLimitError(f"rate limited by the search backend: {error}", source="web")
    if isinstance(error, DdgsTimeoutException) or isinstance(cause, DdgsTimeoutException):
        return SearchError(f"search timed out: {error}", source="web")
    return SearchError(f"search failed: {error}", source="web")
