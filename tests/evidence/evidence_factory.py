"""Evidence built for tests (imported by name: pytest puts this folder on sys.path)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from deepcritical.config import Settings
from deepcritical.evidence import EvidenceStore
from deepcritical.models import Citation, Evidence, SourceName

OpenStore = Callable[..., Awaitable[EvidenceStore]]


def make_evidence(
    key: str,
    content: str,
    *,
    title: str | None = None,
    source: SourceName = "pubmed",
    pmid: bool = True,
) -> Evidence:
    """An item with id ``pmid:<key>`` (or ``url:https://example.org/<key>`` when ``pmid`` is False)."""
    citation = Citation(
        source=source,
        title=title or f"Study {key}",
        url=f"https://pubmed.ncbi.nlm.nih.gov/{key}/" if pmid else f"https://example.org/{key}",
        pmid=key if pmid else None,
    )
    return Evidence(content=content, citation=citation)


def settings_for(home: Path, host: str | None = None, port: int = 8000, **extra: object) -> Settings:
    """Settings from explicit values, so a developer's CHROMA_HOST or DEEPCRITICAL_HOME cannot leak in."""
    values: dict[str, object] = {"DEEPCRITICAL_HOME": str(home), "CHROMA_HOST": host, "CHROMA_PORT": port}
    values.update(extra)
    return Settings(**values)  # type: ignore[arg-type]
