"""SearXNG metasearch: a SearchTool on an instance's JSON API. Result models are minimal and
backend-agnostic: SearXNG's own fields (engine, category, score, ...) stay in ``raw``, kept in Python
but not serialised.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar

import httpx2
import structlog
from pydantic import BaseModel, Field

from deepcritical.errors import RateLimitError, SearchError, SourceHTTPError, UnusableResponseError
from deepcritical.models import DOI_PATTERN, Citation, Evidence, SourceName, normalize_doi
from deepcritical.redaction import Redactor, url_secrets
from deepcritical.sources.base import JsonApiTool
from deepcritical.sources.web import (
    MAX_TITLE_CHARS,
    clean_web_text,
    published_date,
    rank_relevance,
    text_of,
    web_evidence,
    web_url,
)

logger = structlog.get_logger(__name__)

NO_RESULTS = "No results found in SearXNG response"
JSON_FORMAT_HINT = " (is 'json' listed under search.formats in the instance's settings.yml?)"


class SearxngSearchError(SearchError):
    """A SearXNG instance could not be reached or answered something unusable."""


class SearxngResult(BaseModel):
    """One web search result."""

    title: str
    url: str
    snippet: str = ""
    source: str | None = Field(default=None, description="Host or publisher of the page")
    rank: int = Field(ge=1, description="1-based position in the instance's ranking")
    raw: dict[str, Any] = Field(default_factory=dict, exclude=True)  # the item as SearXNG sent it


class SearxngResults(BaseModel):
    """What one web search returned."""

    query: str
    results: list[SearxngResult] = Field(default_factory=list)
    total: int = Field(ge=0, description="Results the instance reported, or those parsed when it gave no count")
    error: str | None = Field(default=None, description="Why there are no results, when there are none")
    raw: dict[str, Any] = Field(default_factory=dict, exclude=True)  # the whole response body


def _source(item: dict[str, Any]) -> str | None:
    # SearXNG serialises ``parsed_url`` as a urlparse tuple, i.e. a JSON list; accept a mapping too.
    parsed = item.get("parsed_url")
    host = parsed.get("hostname") if isinstance(parsed, dict) else None
    if isinstance(parsed, list) and len(parsed) > 1:
        host = parsed[1]
    return text_of(item.get("source")) or text_of(host) or None


def _describe_unresponsive(data: dict[str, Any]) -> str:
    # SearXNG lists engines that failed as [name, reason] pairs; they explain an empty answer.
    engines = data.get("unresponsive_engines")
    entries = [entry for entry in engines if isinstance(entry, list)] if isinstance(engines, list) else []
    names = [name for entry in entries if (name := " ".join(filter(None, map(text_of, entry))))]
    return f" (unresponsive engines: {', '.join(names)})" if names else ""


def parse_response(query: str, data: object, *, max_results: int = 5) -> SearxngResults:
    """Normalise a SearXNG JSON body. Raises SearxngSearchError when it is not a JSON object;
    a missing or malformed ``results`` list is no results, explained in ``error``."""
    if not isinstance(data, dict):
        raise SearxngSearchError(f"expected a JSON object, got {type(data).__name__}", source="searxng")
    raw_results = data.get("results")
    error: str | None = None
    if not isinstance(raw_results, list):
        logger.warning("searxng_no_results_list", query=query)
        raw_results = []
        error = f"{NO_RESULTS}: no 'results' list (is the base URL a SearXNG instance?)"
    results: list[SearxngResult] = []
    for index, item in enumerate(raw_results):
        url = web_url(item.get("url")) if isinstance(item, dict) else ""
        if not url:
            continue
        position = item.get("position")
        rank = position if isinstance(position, int) and not isinstance(position, bool) and position > 0 else index + 1
        # Engines' snippets come through with HTML entities and highlight markup; the item as sent stays in raw.
        results.append(
            SearxngResult(
                title=clean_web_text(item.get("title")) or url,
                url=url,
                snippet=clean_web_text(item.get("content")),
                source=_source(item),
                rank=rank,
                raw=item,
            )
        )
    reported = data.get("number_of_results")
    reliable = isinstance(reported, int) and not isinstance(reported, bool) and reported > 0
    total = reported if reliable else len(results)
    if not results and error is None:
        error = NO_RESULTS + _describe_unresponsive(data)
    kept = results[:max_results] if max_results > 0 else results
    return SearxngResults(query=query, results=kept, total=total, error=error, raw=data)


def _score(raw: dict[str, Any]) -> float | None:
    score = raw.get("score")
    if isinstance(score, int | float) and not isinstance(score, bool) and math.isfinite(score) and score > 0:
        return float(score)
    return None


def results_to_evidence(results: SearxngResults) -> list[Evidence]:
    """Results with a snippet as Evidence. Relevance is SearXNG's ``score`` relative to the best score
    in this response; results without a score fall back to rank decay."""
    best = max((score for r in results.results if (score := _score(r.raw)) is not None), default=None)
    evidence: list[Evidence] = []
    for result in results.results:
        if not result.snippet:
            continue
        score = _score(result.raw)
        relevance = min(score / best, 1.0) if score is not None and best else rank_relevance(result.rank - 1)
        date = published_date(result.raw.get("publishedDate"))
        # Scholarly engines (Crossref, Semantic Scholar, PubMed) put the paper's DOI beside its URL.
        raw_doi = result.raw.get("doi")
        doi = raw_doi if isinstance(raw_doi, str) and DOI_PATTERN.fullmatch(normalize_doi(raw_doi)) else None
        citation = Citation(source="searxng", title=result.title[:MAX_TITLE_CHARS], url=result.url, date=date, doi=doi)
        evidence.append(web_evidence(citation, result.snippet, relevance))
    return evidence


class SearxngTool(JsonApiTool):
    """Web search through the JSON API of one SearXNG instance, as Evidence."""

    name: ClassVar[SourceName] = "searxng"

    def __init__(
        self,
        client: httpx2.AsyncClient,
        *,
        base_url: str,
        timeout: float = 10.0,
        default_categories: Sequence[str] = ("general",),
        default_language: str | None = None,
        default_time_range: str | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if not base_url or not base_url.strip():
            raise ValueError("base_url must be a non-empty URL, e.g. https://searxng.example.com")
        super().__init__(client, base_url=base_url, timeout=timeout, sleep=sleep)
        self.default_categories = tuple(default_categories)
        self.default_language = default_language
        self.default_time_range = default_time_range
        # An instance behind basic auth has its password in the URL; no message may show it.
        self.secrets = Redactor(url_secrets(self.base_url))

    def _params(
        self, query: str, page: int, categories: Sequence[str] | None, language: str | None, time_range: str | None
    ) -> dict[str, str | int]:
        params: dict[str, str | int] = {"q": query, "format": "json", "pageno": max(page, 1)}
        chosen = {
            "categories": ",".join(self.default_categories if categories is None else categories),
            "language": self.default_language if language is None else language,
            "time_range": self.default_time_range if time_range is None else time_range,
        }
        for key, value in chosen.items():
            if value:  # an empty override switches the default off
                params[key] = value
        return params

    async def results(
        self,
        query: str,
        *,
        max_results: int = 5,
        page: int = 1,
        categories: Sequence[str] | None = None,
        language: str | None = None,
        time_range: str | None = None,
    ) -> SearxngResults:
        """The instance's results; per-call ``categories``/``language``/``time_range`` override the defaults.
        ``max_results`` slices client-side (SearXNG has no such parameter). Transport failures propagate
        to ``SearchTool.search``, which maps them."""
        params = self._params(query, page, categories, language, time_range)
        try:
            data = await self.get_json("/search", params, headers={"Accept": "application/json"})
        except (RateLimitError, UnusableResponseError, SearxngSearchError):
            raise
        except SearchError as error:
            # SearXNG answers 403 when the JSON format is switched off, the usual set-up mistake.
            hint = JSON_FORMAT_HINT if isinstance(error, SourceHTTPError) and error.status == 403 else ""
            raise SearxngSearchError(f"{error.reason}{hint}", source=self.name) from error
        return parse_response(query, data, max_results=max_results)

    async def _search(self, query: str, max_results: int) -> list[Evidence]:
        results = await self.results(query, max_results=max_results)
        if results.error:
            logger.info("searxng_empty", query=query, reason=results.error)
        return results_to_evidence(results)
