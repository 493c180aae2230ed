"""Runs the enabled sources concurrently and merges what they found."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

import structlog

from deepcritical.errors import SearchError
from deepcritical.models import Evidence, SearchResult, SourceFailure, SourceName, merge_evidence
from deepcritical.sources.base import SearchTool

logger = structlog.get_logger(__name__)

DEFAULT_TOOL_TIMEOUT = 30.0


class SearchHandler:
    """Fans one query out to every tool; a failing or slow tool costs only its own results."""

    def __init__(
        self,
        tools: Sequence[SearchTool],
        *,
        timeouts: Mapping[str, float] | None = None,
        default_timeout: float = DEFAULT_TOOL_TIMEOUT,
        unavailable: Mapping[SourceName, str] | None = None,
    ) -> None:
        self.tools = list(tools)
        self._timeouts = dict(timeouts or {})
        self._default_timeout = default_timeout
        self.unavailable = dict(unavailable or {})

    @property
    def source_names(self) -> list[SourceName]:
        return [tool.name for tool in self.tools]

    async def _run(self, tool: SearchTool, query: str, max_results: int) -> tuple[list[Evidence], SourceFailure | None]:
        timeout = self._timeouts.get(tool.name, self._default_timeout)
        try:
            return await asyncio.wait_for(tool.search(query, max_results), timeout=timeout), None
        except TimeoutError:
            # The deadline on the whole search (a multiple of the source's own timeout) ran out.
            reason = tool.timeout_reason(timeout, what="the deadline of the whole search")
        except SearchError as error:
            reason = error.reason if error.source in (None, tool.name) else str(error)
        except Exception as error:  # a bug in one source must not sink the others; it is reported, not hidden
            logger.exception("source_crashed", source=tool.name)
            reason = f"unexpected {type(error).__name__}: {error}"
        logger.warning("source_failed", source=tool.name, query=query, error=reason)
        return [], SourceFailure(source=tool.name, reason=reason)

    async def execute(self, query: str, max_results_per_tool: int = 10) -> SearchResult:
        """Search every tool at once; de-duplicate across sources by evidence id; sort by relevance."""
        outcomes = await asyncio.gather(*(self._run(tool, query, max_results_per_tool) for tool in self.tools))
        found = [item for evidence, _ in outcomes for item in evidence]
        failures = [failure for _, failure in outcomes if failure]
        unique = sorted(merge_evidence(found), key=lambda item: item.relevance, reverse=True)
        logger.info("search_complete", query=query, found=len(found), unique=len(unique), errors=len(failures))
        return SearchResult(
            query=query,
            evidence=unique,
            sources_searched=self.source_names,
            total_found=len(found),
            failures=failures,
            disabled=dict(self.unavailable),
        )
