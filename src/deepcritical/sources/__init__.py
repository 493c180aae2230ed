"""Search sources: one module per external API behind one ``SearchTool`` base (which owns the error
policy), the handler that runs them in parallel, and ``factory`` that builds a run's sources."""

from deepcritical.sources.base import SearchTool
from deepcritical.sources.clinicaltrials import ClinicalTrialsTool
from deepcritical.sources.europepmc import EuropePmcTool
from deepcritical.sources.handler import SearchHandler
from deepcritical.sources.pubmed import PubMedTool
from deepcritical.sources.searxng import SearxngTool
from deepcritical.sources.web import WebTool
from deepcritical.sources.you import ResearchEngine

__all__ = [
    "ClinicalTrialsTool",
    "EuropePmcTool",
    "PubMedTool",
    "ResearchEngine",
    "SearchHandler",
    "SearchTool",
    "SearxngTool",
    "WebTool",
]
