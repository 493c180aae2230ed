"""The MCP library tools: ``library_add`` (files from the configured library folder only, added to the library
collection), ``library_documents`` and ``library_search`` (``service.library``, as the command line's ``library
documents`` and ``library search`` and the API's library routes)."""

from __future__ import annotations

import asyncio
import os
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field, StrictInt

from deepcritical.evidence.resources import Resources
from deepcritical.service.library import DocumentListing, Library, LibrarySearch
from deepcritical.service.library_add import add_paths
from deepcritical.text import MAX_QUESTION_CHARS, one_line


class LibraryAdded(BaseModel):
    """What adding files to the library did."""

    collection: str
    summary: str
    files: int
    documents_added: int
    documents_updated: int
    documents_unchanged: int
    passages: int
    passages_not_embedded: int = Field(
        0,
        description="Passages of a large export stored before their vectors: searches find them by their words "
        "until `deepcritical library embed` has run",
    )
    failures: list[str] = Field(description="One line per file that could not be read: which file, why")


async def add_to_library(resources: Resources, paths: list[str], *, relative: bool = False) -> LibraryAdded:
    """``library_add``: only inside ``DEEPCRITICAL_LIBRARY_FOLDER`` (links followed, so none leads out).
    ``relative``: each failure names its file relative to that folder (a client over HTTP is not told where
    the folder is)."""
    settings = resources.settings
    if settings.library_folder is None:
        raise ToolError("library_add is off: the server reads files only from DEEPCRITICAL_LIBRARY_FOLDER, not set")
    root = settings.library_folder.resolve()
    chosen = []
    for raw in paths:
        candidate = (root / raw.strip()).resolve()  # an absolute path stays itself
        if not candidate.is_relative_to(root):
            raise ToolError(f"{one_line(raw)[:200]}: outside the library folder; only files inside it are read")
        chosen.append(candidate)
    summary = await asyncio.to_thread(add_paths, chosen, resources, settings.library_collection, within=root)
    return LibraryAdded(
        collection=settings.library_collection,
        summary=summary.line,
        files=summary.files,
        documents_added=summary.added,
        documents_updated=summary.replaced,
        documents_unchanged=summary.unchanged,
        passages=summary.passages,
        passages_not_embedded=summary.pending,
        failures=[line.replace(f"{root}{os.sep}", "") for line in summary.failures] if relative else summary.failures,
    )


def register_library_tools(server: MCPServer[Any], resources: Resources, *, over_http: bool) -> None:
    """``library_add``, ``library_documents`` and ``library_search`` on the server's resources."""
    library = Library(resources)
    collection = resources.settings.library_collection

    @server.tool(annotations=ToolAnnotations(title="Add papers to the library", read_only_hint=False))
    async def library_add(
        paths: Annotated[
            list[str],
            Field(
                min_length=1,
                max_length=100,
                description="Files or folders inside the server's library folder, relative to it (or absolute)",
            ),
        ],
    ) -> LibraryAdded:
        """Add the user's papers (PDF, PubMed Central JATS, BioC, RIS, BibTeX, CSL-JSON, Markdown, text, HTML)
        from the server's library folder to the document library, split into passages that later searches
        with source `library` and research runs can cite with their section or page. Only files inside the
        folder the server was configured with are read; re-adding a file changes nothing."""
        return await add_to_library(resources, paths, relative=over_http)

    @server.tool(annotations=ToolAnnotations(title="List the library's documents", read_only_hint=True))
    async def library_documents() -> DocumentListing:
        """The documents of the server's document library: id, format, passages (and how many wait for their
        vectors), full text or not, title."""
        return await asyncio.to_thread(library.listing, collection)

    @server.tool(annotations=ToolAnnotations(title="Search the library", read_only_hint=True))
    async def library_search(
        query: Annotated[
            str, Field(min_length=1, max_length=MAX_QUESTION_CHARS, description="Keywords or a short question")
        ],
        max_results: Annotated[StrictInt, Field(ge=1, le=50, description="How many passages")] = 10,
    ) -> LibrarySearch:
        """The passages of the server's document library (the user's own papers) that best match the query, best
        first, each with its relevance, citation and text: what a research run's `library` source finds."""
        return await library.search(collection, query, max_results)
