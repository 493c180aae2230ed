"""Search sources: one module per external API, the handler that runs them, and the demo stand-ins."""

from deepcritical.sources.base import SearchTool
from deepcritical.sources.handler import SearchHandler
from deepcritical.sources.pubmed import PubMedTool
from deepcritical.sources.searxng import SearxngTool, create_searxng_search_tool
from deepcritical.sources.web import WebTool
from deepcritical.sources.you import ResearchEngine

__all__ = [
    "PubMedTool",
    "ResearchEngine",
    "SearchHandler",
    "SearchTool",
    "SearxngTool",
    "WebTool",
    "create_searxng_search_tool",
]
