"""The MCP ``library_add`` tool's work: files from the configured library folder only, added to the
library collection."""

from __future__ import annotations

import asyncio
import os

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from deepcritical.errors import DeepCriticalError
from deepcritical.evidence.resources import Resources
from deepcritical.service.library_add import add_paths
from deepcritical.text import one_line


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
    try:
        summary = await asyncio.to_thread(add_paths, chosen, resources, settings.library_collection, within=root)
    except DeepCriticalError as error:
        raise ToolError(one_line(str(error))) from error
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
