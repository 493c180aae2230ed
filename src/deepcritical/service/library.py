"""The evidence store and the document library as every front end uses them, on the process's resources: what
the store holds, old run collections dropped, exports, a collection's documents listed, searched and removed,
passages embedded behind. The command line's ``library`` commands, the API's library routes and the MCP library
tools take it for listing and searching, each a thin adapter; adding files is ``library_add``'s, shared by the
command line, the API's upload and the MCP tool."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta

from pydantic import BaseModel, Field

from deepcritical.errors import ConfigError
from deepcritical.evidence import chroma, documents, library
from deepcritical.evidence.document_files import list_documents, remove_document
from deepcritical.evidence.documents import Document
from deepcritical.evidence.library import CollectionInfo, LibraryStats
from deepcritical.evidence.pending import count_pending, embed_pending
from deepcritical.evidence.resources import Resources
from deepcritical.models import Evidence
from deepcritical.sources.library import LibraryTool
from deepcritical.text import one_line


class NoCollectionError(ConfigError):
    """The document collection searched does not exist (nothing was added to it)."""


class LibraryDocument(BaseModel):
    """A document of a collection, as every front end lists it."""

    id: str
    format: str
    passages: int
    full_text: bool
    title: str
    source_path: str | None
    pmcid: str | None
    passages_not_embedded: int = Field(
        description="Passages stored before their vectors (`deepcritical library embed`)"
    )


class DocumentListing(BaseModel):
    """The documents of one collection (none when it does not exist)."""

    collection: str
    documents: list[LibraryDocument]


class LibrarySearch(BaseModel):
    """The passages of one collection that a query finds (hybrid retrieval, best first), each with its relevance."""

    collection: str
    query: str
    passages: list[Evidence]


class Library:
    """The store of the process's resources (its one connection, its embedding service)."""

    def __init__(self, resources: Resources) -> None:
        self.resources = resources

    @property
    def where(self) -> str:
        return self.resources.connection().where

    def stats(self) -> LibraryStats:
        return library.stats(self.resources.connection())

    def collections(self) -> list[CollectionInfo]:
        """Every collection, oldest first."""
        return library.collections(self.resources.connection())

    def prune(self, age: timedelta) -> list[CollectionInfo]:
        """Run collections older than ``age`` dropped (never a running run's, never a library)."""
        return library.prune(self.resources.connection(), age)

    def export(self, *, collection: str | None, run: str | None, demo: bool) -> tuple[str, Iterator[Evidence]]:
        """A document collection's passages, a run's collection or the (demo) library, named; a ConfigError
        when the store has no such collection."""
        if collection is not None:
            name = documents.collection_name(collection)
        elif run is not None:
            name = chroma.run_collection_name(run)
        else:
            name = chroma.DEMO_LIBRARY_COLLECTION if demo else chroma.LIBRARY_COLLECTION
        if name not in {info.name for info in self.collections()}:
            raise ConfigError(f"no collection {name!r} in {self.where}: see `deepcritical library list`")
        return name, library.export(self.resources.connection(), name)

    def listing(self, name: str) -> DocumentListing:
        """The documents of the collection ``name``, as the front ends show them (none when it does not exist)."""
        connection = self.resources.connection()
        stored = list_documents(connection, name) if documents.exists(connection, name) else []
        rows = [
            LibraryDocument(
                id=document.id,
                format=document.format,
                passages=document.passages,
                full_text=document.full_text,
                title=document.title,
                source_path=document.source_path,
                pmcid=document.pmcid,
                passages_not_embedded=document.not_embedded,
            )
            for document in stored
        ]
        return DocumentListing(collection=name, documents=rows)

    async def search(self, name: str, query: str, n: int) -> LibrarySearch:
        """The ``n`` passages of the collection ``name`` that best match ``query``, as the ``library`` source of a
        run finds them; NoCollectionError when nothing was added to it, SearchError when it cannot be read."""
        connection = self.resources.connection()
        if not documents.exists(connection, name):
            # Not where the store is: a client of the API or MCP is not told the server's paths.
            raise NoCollectionError(
                f"no document collection {name!r}: add files to it first "
                "(`deepcritical library add`, the API's upload or the MCP tool library_add)"
            )
        tool = LibraryTool(
            self.resources.settings,
            embeddings=self.resources.embeddings,
            connect=self.resources.connect,
            collection=name,
        )
        return LibrarySearch(collection=name, query=one_line(query), passages=await tool.search(query, n))

    def remove(self, name: str, document_id: str) -> int:
        """Remove a document of the collection ``name``; how many passages went (0: no such document)."""
        connection = self.resources.connection()
        return remove_document(connection, name, document_id) if documents.exists(connection, name) else 0

    def pending(self, name: str) -> int | None:
        """How many passages of the collection ``name`` wait for their vector (None: no such collection)."""
        connection = self.resources.connection()
        total = count_pending(connection, name)
        return total if total or documents.exists(connection, name) else None

    def embed_pending(self, name: str, on_progress: Callable[[int, int], None]) -> int:
        """Give the waiting passages of the collection ``name`` their vectors; what is done before a stop is kept."""
        return embed_pending(self.resources.connection(), self.resources.embeddings, name, on_progress=on_progress)

    def add_corpus_part(self, name: str, part: list[Document], progress: Callable[[int], None]) -> int:
        """A part of a JSON Lines corpus stored in the collection ``name``, each passage graded from its record."""
        from deepcritical.sources.grading import grade_record

        return documents.add_documents(
            self.resources.connection(),
            self.resources.embeddings,
            name,
            part,
            grader=lambda title, text, types, mesh: grade_record(
                title=title, text=text, publication_types=types, mesh_headings=mesh
            ),
            progress=progress,
        )
