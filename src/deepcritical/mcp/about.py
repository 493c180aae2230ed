"""What an MCP client reads before any tool is called: the server's instructions and its tools' names.
Light on purpose (the source table only): ``deepcritical mcp`` answers ``initialize`` with them while the
tools themselves still load (``mcp.stdio``), and ``deepcritical mcp --help`` lists the tools from here."""

from __future__ import annotations

from deepcritical.source_table import in_words

SOURCES_IN_WORDS = in_words()
INSTRUCTIONS = (
    f"DeepCritical answers biomedical research questions with evidence it collects from {SOURCES_IN_WORDS}. "
    "Use search_literature for a quick look at what the sources hold on a topic; use "
    "research for a full, cited report (it takes a minute or more and sends progress as it goes); use "
    "get_run to fetch a run's report or status later by its run id; use library_search and library_documents for "
    "the user's own papers. Cite the report's references, not "
    "your own memory. In demo mode every source is synthetic and says so."
)
# Every tool ``mcp.server.build_mcp_server`` registers, in the order a reader meets them.
TOOL_NAMES = (
    "search_literature",
    "research",
    "get_run",
    "library_add",
    "library_documents",
    "library_search",
    "watch_add",
    "watch_list",
    "watch_changes",
)
