"""Open-access full text of a run's key studies, from PubMed Central.

Two services hold PMC's open-access articles as JATS: Europe PMC (``GET /{PMCID}/fullTextXML``, 404 when
it has no full text) and NCBI E-utilities (``efetch db=pmc``, which answers front matter without a body
when the publisher does not allow the XML). Europe PMC is asked first, since it spends none of the NCBI
request budget; E-utilities second, through the run's NCBI limiter (every request, retries included).
Both go through ``get_with_retry``: the one error policy, the run's one client.

Which studies: the top items of a run by level of evidence, then relevance, that have a PMCID, at most
``max_articles`` of them (``FULLTEXT_MAX_ARTICLES``). A study already in the library (``FullTextCache``)
is not fetched again. A study without open-access full text keeps its abstract; the run says so once,
with the count.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

import httpx2
import structlog
from pydantic import SecretStr

from deepcritical.documents.jats import article_element, child, parse_xml
from deepcritical.documents.model import Document, clean_pmcid
from deepcritical.documents.reader import Limits, read_bytes
from deepcritical.errors import DocumentError, SearchError, SourceHTTPError
from deepcritical.models import Evidence, Grade
from deepcritical.redaction import Redactor
from deepcritical.source_table import NCBI_EUTILS_URL
from deepcritical.sources.base import get_with_retry, host_of
from deepcritical.sources.europepmc import EUROPEPMC_BASE_URL
from deepcritical.sources.grading import grade_record
from deepcritical.sources.pubmed import ncbi_identity
from deepcritical.sources.ratelimit import PacedLimiter, Sleep, ncbi_spacing

logger = structlog.get_logger(__name__)

FullTextSource = Literal["europepmc", "pmc", "library"]
Outcome = Literal["fetched", "cached", "not_open_access", "failed"]
# A JATS article is 50-500 kB; a body far above that is not an article.
MAX_ARTICLE_BYTES = 15 * 1024 * 1024
# An item without a level (web pages, unknown design) ranks after every graded one.
_UNGRADED = 9


class FullTextCache(Protocol):
    """Where fetched articles are kept (the library), so a second run reads them from there: both give the
    article's passages as the library's evidence items (empty: not kept)."""

    async def full_text(self, pmcid: str) -> list[Evidence]: ...

    async def keep_full_text(self, document: Document) -> list[Evidence]: ...


@dataclass(frozen=True)
class FullTextResult:
    """What asking for one article's full text gave."""

    pmcid: str
    outcome: Outcome
    document: Document | None = None
    source: FullTextSource | None = None
    reason: str | None = None
    passages: list[Evidence] = field(default_factory=list)  # the library's items for it, when kept


@dataclass
class FullTextReport:
    """The full texts of a run's key studies, and one line saying what could not be read."""

    results: list[FullTextResult] = field(default_factory=list)

    @property
    def documents(self) -> list[Document]:
        return [result.document for result in self.results if result.document is not None]

    @property
    def passages(self) -> list[Evidence]:
        return [passage for result in self.results for passage in result.passages]

    def count(self, outcome: Outcome) -> int:
        return sum(1 for result in self.results if result.outcome == outcome)

    @property
    def summary(self) -> str:
        """'Full text: 3 of 5 key studies read (1 from the library); 2 not open access, abstracts kept.'"""
        if not self.results:
            return "Full text: no key study has a PubMed Central id; abstracts only."
        read = self.count("fetched") + self.count("cached")
        line = f"Full text: {read} of {len(self.results)} key studies read"
        if cached := self.count("cached"):
            line += f" ({cached} from the library)"
        notes = []
        if closed := self.count("not_open_access"):
            notes.append(f"{closed} not open access, abstract kept")
        if failed := self.count("failed"):
            notes.append(f"{failed} could not be fetched, abstract kept")
        return line + ("; " + "; ".join(notes) if notes else "") + "."


def key_studies(items: Sequence[Evidence], max_articles: int) -> list[Evidence]:
    """The items whose full text is worth reading: those with a PMCID, by level of evidence (1 first)
    then relevance, at most ``max_articles``; retracted items never."""
    candidates = [item for item in items if item.citation.pmcid and not item.retracted]
    ranked = sorted(
        candidates, key=lambda item: (item.grade.level if item.grade.level is not None else _UNGRADED, -item.relevance)
    )
    return ranked[:max_articles]


def document_grade(document: Document) -> Grade:
    """A document's grade from its metadata (publication types when the file says), title and abstract, as
    a PubMed item's: once per document, never from one passage alone."""
    abstract = " ".join(p.text for p in document.passages if p.kind == "abstract")
    opening = abstract or " ".join(p.text for p in document.passages[:3])
    return grade_record(
        title=document.meta.title, text=opening, publication_types=document.meta.publication_types, mesh_headings=()
    )


def _has_body(data: bytes) -> bool:
    """True when the JATS holds an article body (an efetch answer for a closed article holds none)."""
    try:
        article = article_element(parse_xml(data, "JATS"))
    except DocumentError:
        return False
    return child(article, "body") is not None


class FullTextFetcher:
    """Fetches and parses PMC articles; ``limiter`` is the run's NCBI limiter (E-utilities only)."""

    def __init__(
        self,
        client: httpx2.AsyncClient,
        *,
        europepmc_base_url: str | None = EUROPEPMC_BASE_URL,
        eutils_base_url: str = NCBI_EUTILS_URL,
        api_key: SecretStr | None = None,
        email: str | None = None,
        tool: str = "deepcritical",
        limiter: Callable[[], Awaitable[None]] | None = None,
        timeout: float = 30.0,
        limits: Limits | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._client = client
        self._europepmc = europepmc_base_url.rstrip("/") if europepmc_base_url else None
        self._eutils = eutils_base_url.rstrip("/")
        self._api_key = api_key if api_key is not None and api_key.get_secret_value().strip() else None
        self._email = email.strip() if email and email.strip() else None
        self._tool = tool
        self._limiter = limiter or PacedLimiter.in_memory(ncbi_spacing(has_key=self._api_key is not None))
        self._timeout = timeout
        self._limits = limits or Limits()
        self._secrets = Redactor([self._api_key])
        self._sleep = sleep

    async def _europepmc_xml(self, pmcid: str) -> bytes | None:
        if self._europepmc is None:  # not asked (stand-in sources with a live model: no request leaves)
            return None
        try:
            return await get_with_retry(
                self._client,
                f"{self._europepmc}/{pmcid}/fullTextXML",
                source="europepmc full text",
                read=lambda response: response.content,
                timeout=self._timeout,
                max_bytes=MAX_ARTICLE_BYTES,
                sleep=self._sleep,
            )
        except SourceHTTPError as error:
            if error.status == 404:  # Europe PMC's answer for an article it has no full text of
                return None
            raise

    async def _pmc_xml(self, pmcid: str) -> bytes | None:
        params = {"db": "pmc", "id": pmcid.removeprefix("PMC"), "retmode": "xml"}
        params |= ncbi_identity(self._tool, self._email, self._api_key)
        data = await get_with_retry(
            self._client,
            f"{self._eutils}/efetch.fcgi",
            source="pmc",
            read=lambda response: response.content,
            params=params,
            timeout=self._timeout,
            max_bytes=MAX_ARTICLE_BYTES,
            redact=self._secrets,
            before_request=self._limiter,
            before_send=self._limiter.confirm if isinstance(self._limiter, PacedLimiter) else None,
            sleep=self._sleep,
        )
        return data if _has_body(data) else None

    async def fetch(self, pmcid: str) -> FullTextResult:
        """One article's full text, parsed; never raises for an unavailable or failing article."""
        canonical = clean_pmcid(pmcid)
        if canonical is None:
            return FullTextResult(pmcid, "failed", reason=f"{pmcid!r} is not a PMCID")
        failures: list[str] = []
        attempts: tuple[tuple[FullTextSource, Callable[[str], Awaitable[bytes | None]]], ...] = (
            ("europepmc", self._europepmc_xml),
            ("pmc", self._pmc_xml),
        )
        for source, attempt in attempts:
            try:
                data = await attempt(canonical)
            except SearchError as error:
                failures.append(self._secrets(str(error)))
                continue
            except httpx2.RequestError as error:  # a timeout asked again, a connection refused
                failures.append(f"{source}: {type(error).__name__} from {host_of(error, 'the server')}")
                continue
            if data is None:
                continue
            try:
                documents = await asyncio.to_thread(read_bytes, data, suffix=".nxml", limits=self._limits)
            except DocumentError as error:
                failures.append(f"{source}: {canonical}: {error}")
                continue
            logger.info("fulltext_fetched", pmcid=canonical, source=source, passages=len(documents[0].passages))
            return FullTextResult(canonical, "fetched", documents[0], source)
        if failures:
            return FullTextResult(canonical, "failed", reason="; ".join(failures))
        return FullTextResult(canonical, "not_open_access", reason="no open-access full text in PubMed Central")


async def fetch_full_texts(
    fetcher: FullTextFetcher, items: Sequence[Evidence], max_articles: int, cache: FullTextCache | None = None
) -> FullTextReport:
    """The full texts of the key studies among ``items``: from the library when it has them, else fetched
    (one at a time: the NCBI limit paces them anyway) and kept in the library for the next run."""
    report = FullTextReport()
    for item in key_studies(items, max_articles):
        pmcid = clean_pmcid(item.citation.pmcid)
        if pmcid is None:
            continue
        if cache is not None and (kept := await cache.full_text(pmcid)):
            report.results.append(FullTextResult(pmcid, "cached", source="library", passages=kept))
            continue
        result = await fetcher.fetch(pmcid)
        if result.document is not None and cache is not None:
            result = replace(result, passages=await cache.keep_full_text(result.document))
        if result.outcome == "failed":
            logger.warning("fulltext_failed", pmcid=pmcid, reason=result.reason)
        report.results.append(result)
    return report
