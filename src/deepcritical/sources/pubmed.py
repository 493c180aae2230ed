"""PubMed through NCBI E-utilities: one esearch for PMIDs, then one efetch for the whole batch.

Request building only; parsing lives in ``ncbi_parse`` and the error policy in ``SearchTool.search``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import date
from typing import Any, ClassVar, TypeVar
from urllib.parse import urlsplit

import httpx2
import structlog
from pydantic import SecretStr

from deepcritical.models import Evidence, SourceName
from deepcritical.redaction import Redactor
from deepcritical.source_table import NCBI_EUTILS_URL
from deepcritical.sources.base import SearchTool, get_with_retry
from deepcritical.sources.ncbi_esearch import EsearchResult, parse_esearch
from deepcritical.sources.ncbi_parse import ParsedBatch, parse_efetch
from deepcritical.sources.query import to_pubmed_query
from deepcritical.sources.ratelimit import PacedLimiter, Sleep, ncbi_spacing

logger = structlog.get_logger(__name__)
T = TypeVar("T")

# esearch's own ceiling for one page of ids.
MAX_RETMAX = 10_000
# esearch takes a date range only with both ends; a "since" search leaves the far end open.
OPEN_MAXDATE = "3000/12/31"


def ncbi_identity(tool: str, email: str | None, api_key: SecretStr | None) -> dict[str, str]:
    """The parameters NCBI asks every client to send with every request (PubMed's and PMC's)."""
    params = {"tool": tool}
    if email:
        params["email"] = email
    if api_key is not None:
        params["api_key"] = api_key.get_secret_value().strip()
    return params


class PubMedTool(SearchTool):
    """Searches PubMed; abstracts become Evidence ranked in PubMed's relevance order.

    ``limiter`` is awaited before every request, retries included. A run passes the machine-wide (or
    team-wide) NCBI limiter (``ratelimit.ncbi_limiter``); without one, the tool paces itself alone at
    NCBI's rate for its key situation (3 requests/s without a key, 10 with one). ``sleep`` is the retry
    back-off sleep. Tests inject both.
    """

    name: ClassVar[SourceName] = "pubmed"

    def __init__(
        self,
        client: httpx2.AsyncClient,
        *,
        api_key: SecretStr | None = None,
        email: str | None = None,
        tool: str = "deepcritical",
        timeout: float = 30.0,
        base_url: str = NCBI_EUTILS_URL,
        limiter: Callable[[], Awaitable[None]] | None = None,
        sleep: Sleep = asyncio.sleep,
        since: date | None = None,
    ) -> None:
        self._client = client
        self.since = since  # only records PubMed added (Entrez date) on or after this date; None: all
        self._api_key = api_key if api_key is not None and api_key.get_secret_value().strip() else None
        self._email = email.strip() if email and email.strip() else None
        self._tool = tool
        self.timeout = timeout
        self._base_url = base_url.rstrip("/")
        self._limiter = limiter or PacedLimiter.in_memory(ncbi_spacing(has_key=self._api_key is not None))
        self.secrets = Redactor([self._api_key])
        self._sleep = sleep

    @property
    def host(self) -> str:
        return urlsplit(self._base_url).hostname or self._base_url

    async def _get(self, endpoint: str, params: dict[str, Any], parse: Callable[[str], T]) -> T:
        """One E-utilities request, parsed; a maintenance page or a cut-off body is asked for again."""
        return await get_with_retry(
            self._client,
            f"{self._base_url}/{endpoint}",
            source=self.name,
            read=lambda response: parse(response.text),
            params={**params, **ncbi_identity(self._tool, self._email, self._api_key)},
            timeout=self.timeout,
            redact=self.secrets,
            before_request=self._limiter,
            before_send=self._limiter.confirm if isinstance(self._limiter, PacedLimiter) else None,
            sleep=self._sleep,
        )

    def _date_filter(self) -> dict[str, str]:
        """esearch's date range: by Entrez date (when PubMed added the record, which a new record and a
        newly indexed old one both have), from ``since`` on; esearch wants both ends, so the far one is open."""
        if self.since is None:
            return {}
        return {"datetype": "edat", "mindate": f"{self.since:%Y/%m/%d}", "maxdate": OPEN_MAXDATE}

    async def fetch(self, pmids: Sequence[str]) -> list[Evidence]:
        """The records of ``pmids`` as PubMed holds them now, a retraction or an expression of concern
        issued since they were first read included (one efetch). Unknown ids are skipped, as NCBI does.
        Raises the errors of ``get_with_retry`` (the caller decides what a failed re-check means)."""
        ids = list(dict.fromkeys(pmid.strip() for pmid in pmids if pmid.strip()))
        return (await self._efetch(ids)).evidence if ids else []

    async def _efetch(self, ids: list[str]) -> ParsedBatch:
        return await self._get(
            "efetch.fcgi",
            {"db": "pubmed", "id": ",".join(ids), "retmode": "xml", "rettype": "abstract"},
            lambda text: parse_efetch(text, order=ids),
        )

    async def _search(self, query: str, max_results: int) -> list[Evidence]:
        """esearch for PMIDs in relevance order, then one efetch for them all."""
        if max_results < 1:
            return []
        term = to_pubmed_query(query)
        found: EsearchResult = await self._get(
            "esearch.fcgi",
            {
                "db": "pubmed",
                "term": term,
                "retmode": "json",
                "sort": "relevance",
                "retmax": min(max_results, MAX_RETMAX),
                **self._date_filter(),
            },
            parse_esearch,
        )
        if found.errors or found.warnings:
            logger.warning("pubmed_esearch_notes", term=term, errors=found.errors, warnings=found.warnings)
        if not found.ids:
            logger.info("pubmed_no_results", query=query, term=term)
            return []
        ids = found.ids[:max_results]
        batch = await self._efetch(ids)
        logger.info(
            "pubmed_efetch_parsed",
            term=term,
            requested=len(ids),
            records=batch.records,
            evidence=len(batch.evidence),
            without_abstract=batch.without_abstract,
            malformed=batch.malformed,
        )
        return batch.evidence
