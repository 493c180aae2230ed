"""The one table of sources: each source's name, how a person calls it, what it holds, whether a run searches
it by default, the public service it asks and its timeout, and the demo stand-in that answers for it offline.

Everything that names sources reads it: the settings (``SourceName``, the default list, each public JSON
API's ``{NAME}_BASE_URL`` and ``{NAME}_TIMEOUT``), the command line's and the MCP tools' help, the Brain's
search tool doc, the page's labels, the source factory and the demo transport. It imports nothing (neither
the project nor a third-party package), so the foundation and ``deepcritical --help`` read it for free.

Adding a source that asks a public JSON API is three files: its tool module (a ``JsonApiTool``), its demo
stand-in (a module of ``deepcritical.demo`` with ``respond(request)``) and its entry here (with its name in
``SourceName``). ``tests/sources/test_json_sources.py`` tests every entry with a ``tool`` (built from its
variables, answered by its stand-in, failing by the common policy), so the source needs no test file of its
own; one for its parser's details is welcome. phases/16_run_service.md shows OpenAlex added that way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

# Every source by name, in the table's order (a test keeps the two equal: a Literal must be written out).
SourceName = Literal["pubmed", "web", "searxng", "you", "clinicaltrials", "europepmc", "openalex", "library"]

DEMO_SEARXNG_URL = "https://searxng.demo.invalid"


@dataclass(frozen=True)
class SourceEntry:
    """One source. ``tool`` ("module:Class") marks a public JSON API built from its base URL and timeout
    alone, with settings ``{NAME}_BASE_URL`` and ``{NAME}_TIMEOUT``; the others are built by name in
    ``sources.factory`` from their own settings. ``stand_in`` names the module of ``deepcritical.demo``
    whose ``respond`` answers the host of ``demo_url`` (default: ``base_url``) offline."""

    name: SourceName
    label: str
    holds: str
    default: bool = True
    base_url: str | None = None
    timeout: float = 20.0
    tool: str | None = None
    stand_in: str | None = None
    demo_url: str | None = None

    @property
    def stand_in_host(self) -> str | None:
        """The host the demo stand-in answers at (where the demo presets send this source), if any."""
        url = self.demo_url or self.base_url
        if self.stand_in is None or url is None:
            return None
        return (urlsplit(url).hostname or "").lower() or None

    @property
    def variable(self) -> str:
        """The prefix of the source's own environment variables (``CLINICALTRIALS`` -> ``CLINICALTRIALS_TIMEOUT``)."""
        return self.name.upper()


SOURCES: tuple[SourceEntry, ...] = (
    SourceEntry(
        "pubmed",
        "PubMed",
        "biomedical journal articles (MEDLINE)",
        base_url="https://eutils.ncbi.nlm.nih.gov/entrez/eutils",
        timeout=30.0,
        stand_in="eutils",
    ),
    SourceEntry("web", "the web (DuckDuckGo)", "web pages"),
    SourceEntry(
        "searxng",
        "SearXNG",
        "web pages from your SearXNG instance",
        timeout=10.0,
        stand_in="searxng",
        demo_url=DEMO_SEARXNG_URL,
    ),
    SourceEntry(
        "you",
        "You.com",
        "web pages and background on terms",
        base_url="https://api.ydc-index.io",
        timeout=10.0,
        stand_in="you",
    ),
    SourceEntry(
        "clinicaltrials",
        "ClinicalTrials.gov",
        "registered clinical trials and their results",
        base_url="https://clinicaltrials.gov/api/v2",
        tool="deepcritical.sources.clinicaltrials:ClinicalTrialsTool",
        stand_in="clinicaltrials",
    ),
    SourceEntry(
        "europepmc",
        "Europe PMC",
        "journal articles, full texts and preprints",
        base_url="https://www.ebi.ac.uk/europepmc/webservices/rest",
        tool="deepcritical.sources.europepmc:EuropePmcTool",
        stand_in="europepmc",
    ),
    SourceEntry(
        "openalex",
        "OpenAlex",
        "scholarly works of every field, with citation counts",
        default=False,
        base_url="https://api.openalex.org",
        tool="deepcritical.sources.openalex:OpenAlexTool",
        stand_in="openalex",
    ),
    SourceEntry("library", "your document collection (deepcritical library add)", "your own papers", default=False),
)
BY_NAME: dict[str, SourceEntry] = {entry.name: entry for entry in SOURCES}
# The sources a run searches unless told otherwise; the others (OpenAlex, your library) are asked for by name.
ALL_SOURCES: tuple[SourceName, ...] = tuple(entry.name for entry in SOURCES if entry.default)
KNOWN_SOURCES: tuple[SourceName, ...] = tuple(entry.name for entry in SOURCES)
# The public JSON APIs, each built from its base URL and timeout alone.
API_SOURCES: tuple[SourceEntry, ...] = tuple(entry for entry in SOURCES if entry.tool is not None)
SOURCE_LABELS: dict[str, str] = {entry.name: entry.label for entry in SOURCES}
NCBI_EUTILS_URL = BY_NAME["pubmed"].base_url or ""
YOU_BASE_URL = BY_NAME["you"].base_url or ""


def source_labels() -> dict[str, str]:
    """Each source's name and how a person calls it, in the table's order."""
    return dict(SOURCE_LABELS)


def in_words(names: tuple[str, ...] | list[str] = ALL_SOURCES) -> str:
    """The sources as a person reads them: "PubMed, Europe PMC and the web (DuckDuckGo)"."""
    labels = [BY_NAME[name].label for name in names if name in BY_NAME]
    return labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} and {labels[-1]}"


def sources_help() -> str:
    """The help of an option that names sources (the command line's ``--sources``, the MCP tools' field)."""
    named = ", ".join(entry.name for entry in SOURCES if entry.default)
    asked = ", ".join(f"{entry.name} ({entry.holds})" for entry in SOURCES if not entry.default)
    known = ", ".join(KNOWN_SOURCES)
    return f"Comma-separated, any of: {known}. Searched unless named: {named}; only when named: {asked}."
