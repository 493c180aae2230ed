"""The MCP library tools: ``library_add`` takes files from the configured library folder only, links out of it
refused, and is off when no folder is configured; ``library_documents`` and ``library_search`` list and search the
library as the command line and the API do (``service.library``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client

from deepcritical.config import load_settings
from deepcritical.mcp.server import build_mcp_server
from deepcritical.service.manager import RunManager
from helpers.web_fakes import ScriptedRuns, offline_client, text_of


@asynccontextmanager
async def connected(tmp_path: Path, folder: Path | None) -> AsyncIterator[Client]:
    settings = load_settings(demo_mode=True, home=tmp_path / "home", library_folder=folder)
    manager = RunManager(settings, client_factory=offline_client, run_source=ScriptedRuns())
    async with manager, Client(build_mcp_server(manager, settings)) as client:
        yield client


async def test_without_a_configured_folder_the_tool_is_off(tmp_path: Path) -> None:
    async with connected(tmp_path, None) as client:
        result = await client.call_tool("library_add", {"paths": ["notes.md"]})
    assert result.is_error
    assert "DEEPCRITICAL_LIBRARY_FOLDER" in text_of(result)


async def test_a_path_outside_the_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    (tmp_path / "secret.md").write_text("# Secret\n\nnot for the library")
    async with connected(tmp_path, folder) as client:
        result = await client.call_tool("library_add", {"paths": ["../secret.md"]})
    assert result.is_error
    assert "outside the library folder" in text_of(result)


@pytest.mark.model
async def test_files_inside_are_added_and_a_link_leading_out_is_not_read(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\n\n## Results\n\nNausea in 5 of 40 on drug X.\n")
    (tmp_path / "secret.md").write_text("# Secret\n\nnot for the library")
    (folder / "link.md").symlink_to(tmp_path / "secret.md")
    async with connected(tmp_path, folder) as client:
        result = await client.call_tool("library_add", {"paths": ["."]})
        again = await client.call_tool("library_add", {"paths": [str(folder / "notes.md")]})
        listed = await client.call_tool("library_documents", {})
        found = await client.call_tool("library_search", {"query": "nausea drug X", "max_results": 2})
    assert not result.is_error, text_of(result)
    added = result.structured_content
    assert added is not None
    assert added["documents_added"] == 1
    assert added["failures"] == [f"{folder / 'link.md'}: outside the library folder; not read"]
    assert again.structured_content is not None
    assert again.structured_content["documents_unchanged"] == 1
    assert listed.structured_content is not None
    assert [row["title"] for row in listed.structured_content["documents"]] == ["Notes"]
    assert found.structured_content is not None
    assert "Nausea in 5 of 40" in found.structured_content["passages"][0]["content"]


async def test_an_empty_library_lists_no_document_and_its_search_is_an_error_naming_it(tmp_path: Path) -> None:
    async with connected(tmp_path, None) as client:
        listed = await client.call_tool("library_documents", {})
        searched = await client.call_tool("library_search", {"query": "nausea"})
    assert not listed.is_error, text_of(listed)
    assert listed.structured_content == {"collection": "documents", "documents": []}
    assert searched.is_error
    assert "no document collection 'documents': add files to it first" in text_of(searched)


async def test_a_hard_link_to_a_file_outside_is_not_read(tmp_path: Path) -> None:
    """A hard link has no real path to check: ``papers/notes.md`` may be ``secret.md`` under another name."""
    folder = tmp_path / "papers"
    folder.mkdir()
    (tmp_path / "secret.md").write_text("# Secret\n\nnot for the library")
    (folder / "notes.md").hardlink_to(tmp_path / "secret.md")
    async with connected(tmp_path, folder) as client:
        whole = await client.call_tool("library_add", {"paths": ["."]})
        named = await client.call_tool("library_add", {"paths": ["notes.md"]})
    for result in (whole, named):
        assert not result.is_error, text_of(result)
        added = result.structured_content
        assert added is not None
        assert added["failures"] == [f"{folder / 'notes.md'}: a hard link (it may name a file outside); not read"]
        assert added["documents_added"] == 0
