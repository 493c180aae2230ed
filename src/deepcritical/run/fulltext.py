"""A run's full-text reading, built from the settings: the fetcher on the run's client (with the NCBI limiter
every E-utilities request waits on), the library collection as its cache, and each article graded as the
run's item for it was (its PubMed publication types), else from the article itself."""

from __future__ import annotations

import httpx2

from deepcritical.config import Settings
from deepcritical.documents.model import Document
from deepcritical.documents.reader import limits_from
from deepcritical.evidence.store import EvidenceStore
from deepcritical.models import Evidence, Grade
from deepcritical.sources.fulltext import FullTextFetcher, FullTextReport, document_grade
from deepcritical.sources.ratelimit import ncbi_limiter
from deepcritical.stages.collection import RunEvidence
from deepcritical.stages.fulltext import read_full_texts
from deepcritical.stages.ports import EvidenceStoreLike


async def _no_pacing() -> None:
    """The local stand-ins need no politeness limit."""


async def read_key_full_texts(
    settings: Settings, client: httpx2.AsyncClient, store: EvidenceStoreLike, evidence: RunEvidence, question: str
) -> tuple[FullTextReport, list[Evidence]]:
    """Read the key studies' full texts into the run's evidence (see ``stages.fulltext``), kept in and
    recalled from the library's document collection of the run's own store (a store with no library, such
    as an evaluation's in-memory one, reads without keeping)."""
    # With stand-in sources and a live model only the stand-in hosts are answered offline: Europe PMC is
    # not asked, so no request for a synthetic article leaves the machine.
    ask_europepmc = not settings.demo_sources or settings.demo_mode
    europepmc = str(settings.endpoints["europepmc"].base_url) if ask_europepmc else None
    fetcher = FullTextFetcher(
        client,
        europepmc_base_url=europepmc,
        eutils_base_url=str(settings.ncbi_eutils_url),
        api_key=settings.ncbi_api_key,
        email=settings.ncbi_email,
        tool=settings.ncbi_tool,
        limiter=_no_pacing if settings.stand_in_sources else ncbi_limiter(settings),
        timeout=settings.pubmed_timeout,
        limits=limits_from(settings),
    )
    grades = {item.citation.pmcid: item.grade for item in evidence if item.citation.pmcid}

    def grade(document: Document) -> Grade:
        return grades.get(document.meta.pmcid or "") or document_grade(document)

    cache = store.full_text_cache(settings.library_collection, grade) if isinstance(store, EvidenceStore) else None
    return await read_full_texts(evidence, question, fetcher, max_articles=settings.fulltext_max_articles, cache=cache)
