"""The evidence store and the document library as every front end uses them, on the process's resources: what
the store holds, old run collections dropped, exports, a collection's documents listed and removed, passages
embedded behind. The command line's ``library`` commands take it; adding files is ``library_add``'s, shared by
the command line, the API's upload and the MCP tool."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta

from deepcritical.errors import ConfigError
from deepcritical.evidence import chroma, documents, library
from deepcritical.evidence.document_files import StoredDocument, list_documents, remove_document
from deepcritical.evidence.documents import Document
from deepcritical.evidence.library import CollectionInfo, LibraryStats
from deepcritical.evidence.pending import count_pending, embed_pending
from deepcritical.evidence.resources import Resources
from deepcritical.models import Evidence


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

    def documents(self, name: str) -> list[StoredDocument]:
        """The documents of the collection ``name`` (none when it does not exist)."""
        connection = self.resources.connection()
        return list_documents(connection, name) if documents.exists(connection, name) else []

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
