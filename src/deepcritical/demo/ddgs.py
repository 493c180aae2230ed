"""Stand-in for the ``ddgs.DDGS`` backend: same constructor, ``text()`` signature and result keys, served
from the demo corpus's web records."""

from __future__ import annotations

from types import TracebackType

from ddgs.exceptions import DDGSException

from deepcritical.demo.corpus import hits
from deepcritical.demo.records import WebRecord


class DemoDDGS:
    """Offline ``DDGS``: BM25 over the corpus's web records, results as ``{"title", "href", "body"}``."""

    def __init__(self, proxy: str | None = None, timeout: int | None = 5, *, verify: bool | str = True) -> None:
        # Accepted for signature compatibility with ddgs.DDGS; nothing goes over the network.
        self._proxy = proxy
        self._timeout = timeout
        self._verify = verify

    def __enter__(self) -> DemoDDGS:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_val: BaseException | None = None,
        exc_tb: TracebackType | None = None,
    ) -> None:
        return None

    def text(
        self,
        query: str,
        keywords: str | None = None,
        *,
        region: str = "us-en",
        safesearch: str = "moderate",
        timelimit: str | None = None,
        max_results: int | None = 10,
        page: int = 1,
        backend: str = "auto",
        **kwargs: object,
    ) -> list[dict[str, str]]:
        """Text search as ``DDGS.text``; like ddgs, raises ``DDGSException`` when nothing matches."""
        query = keywords or query
        if not query:
            raise DDGSException("query is mandatory.")
        records = [hit.record for hit in hits("web", query) if isinstance(hit.record, WebRecord)]
        if max_results:
            start = (max(page, 1) - 1) * max_results
            records = records[start : start + max_results]
        if not records:
            raise DDGSException("No results found.")
        return [{"title": record.title, "href": record.url, "body": record.body} for record in records]
