"""You.com search: background context for research terms, and web results as Evidence.

``context`` never fails: research goes on without background when You.com is unreachable, so every
failure is logged and answered with "". ``search`` (the SearchTool side) raises like every source.
Demo mode needs no branch here: the run's client then talks to a local stand-in that speaks the
You.com JSON, and the same cache holds its answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import ClassVar

import httpx2
import structlog
from pydantic import SecretStr

from deepcritical.errors import SearchError, SourceDisabledError
from deepcritical.models import Citation, Evidence, SourceName
from deepcritical.redaction import Redactor
from deepcritical.sources.base import JsonApiTool
from deepcritical.sources.web import (
    MAX_TITLE_CHARS,
    clean_web_text,
    published_date,
    rank_relevance,
    web_evidence,
    web_url,
)

logger = structlog.get_logger(__name__)

CONTEXT_SNIPPETS = 5
MAX_COUNT = 100  # the API's limit on results per section
MAX_CONTENT_CHARS = 2000  # several query-aware snippets per page; more than a DDG body


@dataclass(frozen=True)
class YouHit:
    """One web result from the You.com search API."""

    title: str
    url: str
    description: str
    snippets: tuple[str, ...]
    date: str
    authors: tuple[str, ...]

    @property
    def passages(self) -> tuple[str, ...]:
        """The query-aware snippets, or the page description when there are none."""
        return self.snippets or ((self.description,) if self.description else ())


def _texts(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(text for item in value if (text := clean_web_text(item)))


def parse_web_results(data: object) -> list[YouHit]:
    """The ``results.web`` list of a You.com response; items without a URL are skipped.
    A body that is not a You.com search response raises SearchError."""
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, dict):
        raise SearchError("unexpected response: no 'results' object", source="you")
    web = results.get("web")
    hits: list[YouHit] = []
    for item in web if isinstance(web, list) else []:
        url = web_url(item.get("url")) if isinstance(item, dict) else ""
        if not url:
            continue
        hits.append(
            YouHit(
                title=clean_web_text(item.get("title")) or url,
                url=url,
                description=clean_web_text(item.get("description")),
                snippets=_texts(item.get("snippets")),
                date=published_date(item.get("page_age")),
                authors=_texts(item.get("authors")),
            )
        )
    return hits


class ResearchEngine(JsonApiTool):
    """You.com search API client: cached background context plus a SearchTool of web results."""

    name: ClassVar[SourceName] = "you"

    def __init__(
        self,
        client: httpx2.AsyncClient,
        *,
        api_key: SecretStr | None,
        timeout: float | None = None,
        base_url: str | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(client, base_url=base_url, timeout=timeout, sleep=sleep)
        self._api_key = api_key
        self.secrets = Redactor([api_key])
        self._cache: dict[str, str] = {}
        # One lock per query, so concurrent asks for the same context cost one API call.
        self._locks: dict[str, asyncio.Lock] = {}

    async def _fetch(self, query: str, count: int | None = None) -> list[YouHit]:
        if self._api_key is None:
            raise SourceDisabledError("YOU_API_KEY is not set", source="you")
        params: dict[str, str | int] = {"query": query}
        if count is not None:
            params["count"] = max(1, min(count, MAX_COUNT))
        headers = {"X-API-Key": self._api_key.get_secret_value(), "Accept": "application/json"}
        return parse_web_results(await self.get_json("/v1/search", params, headers=headers))

    async def context(self, query: str) -> str:
        """Background text for ``query``: the top snippets of the web results, one per line.
        Cached per exact query for the life of this engine. Any failure is logged and gives ""."""
        if query in self._cache:
            return self._cache[query]
        if not query.strip():
            return ""
        async with self._locks.setdefault(query, asyncio.Lock()):
            if query in self._cache:
                return self._cache[query]
            try:
                hits = await self._fetch(query)
            except (SearchError, httpx2.HTTPError) as error:
                # Failures are not cached, so a later ask can still succeed.
                logger.warning("you_context_failed", query=query, error=f"{type(error).__name__}: {error}")
                return ""
            passages = [passage for hit in hits for passage in hit.passages]
            self._cache[query] = "\n".join(passages[:CONTEXT_SNIPPETS])
            logger.info("you_context_fetched", query=query, hits=len(hits))
            return self._cache[query]

    async def get_term_context(self, term: str, domain: str = "biomedical research") -> str:
        """What a term means in a field, e.g. ``get_term_context("AMPK")``."""
        return await self.context(f"What is {term} in {domain}? Definition and mechanism.")

    async def _search(self, query: str, max_results: int) -> list[Evidence]:
        hits = await self._fetch(query, count=max_results)
        evidence: list[Evidence] = []
        for position, hit in enumerate(hits):
            content = "\n".join(hit.passages)
            if not content:
                continue
            citation = Citation(
                source="you", title=hit.title[:MAX_TITLE_CHARS], url=hit.url, date=hit.date, authors=hit.authors
            )
            evidence.append(web_evidence(citation, content, rank_relevance(position), MAX_CONTENT_CHARS))
        return evidence
