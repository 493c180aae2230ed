"""The library service (``service.library``) that the command line's ``library documents`` and ``library search``,
the API's library routes and the MCP library tools all call: a collection listed, its passages searched as a run's
``library`` source finds them, and a collection nothing was added to named in one line without the server's paths."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from deepcritical.evidence.resources import Resources
from deepcritical.service import library_add
from deepcritical.service.library import DocumentListing, Library, NoCollectionError
from deepcritical.sources.library import LibraryTool
from helpers.stores import settings_for

STATINS = "# Statins in sepsis\n\n## Results\n\nStatins did not reduce 28-day mortality in sepsis (RR 0.98).\n"
ASPIRIN = "# Aspirin in older adults\n\n## Results\n\nAspirin increased major haemorrhage in older adults.\n"


def test_a_collection_nothing_was_added_to_lists_empty_and_is_refused_a_search(tmp_path: Path) -> None:
    resources = Resources(settings_for(tmp_path / "home"))
    try:
        library = Library(resources)
        assert library.listing("documents") == DocumentListing(collection="documents", documents=[])
        with pytest.raises(NoCollectionError) as refused:
            asyncio.run(library.search("documents", "statins sepsis", 5))
    finally:
        resources.close()
    assert str(refused.value).startswith("no document collection 'documents': add files to it first")
    assert str(tmp_path) not in str(refused.value)  # a client of the API or MCP is not told the server's paths


@pytest.mark.model
def test_added_papers_are_listed_and_searched_as_a_runs_library_source_finds_them(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "statins.md").write_text(STATINS)
    (folder / "aspirin.md").write_text(ASPIRIN)
    settings = settings_for(tmp_path / "home")
    resources = Resources(settings)
    try:
        library_add.add_paths([folder], resources, "documents")
        library = Library(resources)
        listing = library.listing("documents")
        found = asyncio.run(library.search("documents", "statins sepsis mortality", 2))
        source = LibraryTool(settings, embeddings=resources.embeddings, connect=resources.connect)
        by_source = asyncio.run(source.search("statins sepsis mortality", 2))
    finally:
        resources.close()
    assert sorted(document.title for document in listing.documents) == ["Aspirin in older adults", "Statins in sepsis"]
    assert all(document.format == "markdown" and document.passages_not_embedded == 0 for document in listing.documents)
    assert found.collection == "documents"
    assert "Statins did not reduce" in found.passages[0].content
    assert [item.id for item in found.passages] == [item.id for item in by_source]
