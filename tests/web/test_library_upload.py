"""The document library over the API: an upload behind the same token rules as the rest of the API, its type
checked by name, its size while it is read, and an unreadable file one clear error; the library's documents listed
and its passages searched (``service.library``, as the command line and MCP do)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from helpers.web_fakes import TOKEN, ScriptedRuns, app_for, serving, settings_in

NOTES = b"# Notes\n\n## Results\n\nNausea in 5 of 40 on drug X.\n"
URL = "/api/library/documents"
SEARCH_URL = "/api/library/search"


async def test_an_upload_needs_the_token_when_the_server_has_one(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path, ScriptedRuns(), api_token=TOKEN)) as client:
        refused = await client.post(URL, params={"filename": "notes.md"}, content=NOTES)
    assert refused.status_code == 401


@pytest.mark.parametrize(
    ("filename", "content", "status", "message"),
    [
        ("slides.pptx", b"PK", 415, "unsupported file type 'slides.pptx'"),
        ("big.md", b"x" * 5000, 413, "big.md: larger than"),
        ("../../etc/broken.pdf", b"%PDF-1.4 not really", 422, "broken.pdf: not a readable PDF"),
    ],
)
async def test_a_bad_upload_is_one_clear_error(
    tmp_path: Path, filename: str, content: bytes, status: int, message: str
) -> None:
    app = app_for(tmp_path, ScriptedRuns(), library_max_file_mb=0.001)
    async with serving(app) as client:
        response = await client.post(URL, params={"filename": filename}, content=content)
    assert response.status_code == status, response.text
    assert response.json()["error"].startswith(message)


async def test_an_empty_library_lists_no_document_and_its_search_is_a_404_naming_it(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path, ScriptedRuns(), api_token=TOKEN)) as client:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        refused = await client.get(URL)
        listed = await client.get(URL, headers=headers)
        searched = await client.get(SEARCH_URL, params={"q": "nausea"}, headers=headers)
        empty = await client.get(SEARCH_URL, params={"q": ""}, headers=headers)
    assert refused.status_code == 401
    assert listed.status_code == 200, listed.text
    assert listed.json() == {"collection": "documents", "documents": []}
    assert searched.status_code == 404
    assert searched.json()["error"].startswith("no document collection 'documents': add files to it first")
    assert str(tmp_path) not in searched.text
    assert empty.status_code == 422


@pytest.mark.model
async def test_an_uploaded_file_is_added_once_then_listed_and_found(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path, ScriptedRuns(), api_token=TOKEN)) as client:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        first = await client.post(URL, params={"filename": "notes.md"}, content=NOTES, headers=headers)
        again = await client.post(URL, params={"filename": "notes.md"}, content=NOTES, headers=headers)
        listed = await client.get(URL, headers=headers)
        searched = await client.get(SEARCH_URL, params={"q": "nausea drug X", "n": 3}, headers=headers)
    assert first.status_code == 201, first.text
    (document,) = first.json()["documents"]
    assert (document["format"], document["outcome"], document["passages"]) == ("markdown", "added", 1)
    assert again.json()["documents"][0]["outcome"] == "unchanged"
    assert [row["id"] for row in listed.json()["documents"]] == [document["id"]]
    assert searched.status_code == 200, searched.text
    (passage,) = searched.json()["passages"]
    assert "Nausea in 5 of 40" in passage["content"]


@pytest.mark.model
async def test_uploads_share_the_servers_store_connection_and_embedding_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each upload connected to the store and built an embedding service of its own; the server builds them once.
    from deepcritical.evidence import chroma
    from deepcritical.evidence.embeddings import EmbeddingService

    built = {"connections": 0, "services": 0}
    connect, for_settings = chroma.connect, EmbeddingService.for_settings

    def counted_connect(settings: object) -> chroma.Connection:
        built["connections"] += 1
        return connect(settings)  # type: ignore[arg-type]

    def counted_service(settings: object) -> EmbeddingService:
        built["services"] += 1
        return for_settings(settings)  # type: ignore[arg-type]

    monkeypatch.setattr(chroma, "connect", counted_connect)
    monkeypatch.setattr(EmbeddingService, "for_settings", counted_service)
    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        for name in ("a.md", "b.md", "c.md"):
            added = await client.post(URL, params={"filename": name}, content=NOTES.replace(b"X", name.encode()))
            assert added.status_code == 201, added.text
    assert built == {"connections": 1, "services": 1}


async def test_an_upload_over_64_kib_is_taken_up_to_the_file_limit(tmp_path: Path) -> None:
    """The 64 KiB body cap of the other routes refused almost any real paper (413 for a 98 KB PDF); the
    upload route takes DEEPCRITICAL_LIBRARY_MAX_FILE_MB, declared or streamed in chunks, and no more."""
    paper = b"%PDF-1.4 not really" + b"x" * 100_000  # past the cap, then read (and refused as a PDF: no model)

    async def chunks(total: int) -> AsyncIterator[bytes]:
        for _ in range(total // 10_000):
            yield b"y" * 10_000

    async with serving(app_for(tmp_path, ScriptedRuns(), library_max_file_mb=0.5)) as client:
        read = await client.post(URL, params={"filename": "paper.pdf"}, content=paper)
        streamed = await client.post(URL, params={"filename": "big.md"}, content=chunks(600_000))
        other = await client.post("/api/runs", content=b"{" + b" " * 100_000 + b"}")
    assert read.status_code == 422, read.text
    assert read.json()["error"].startswith("paper.pdf: not a readable PDF")
    assert streamed.status_code == 413
    assert streamed.json()["error"] == "big.md: larger than 0.5 MB (the upload limit)"
    assert other.status_code == 413  # every other route keeps its 64 KiB


async def test_a_deeply_nested_upload_is_one_clear_error_not_a_server_error(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        response = await client.post(URL, params={"filename": "deep.json"}, content=b"[" * 5000 + b"]" * 5000)
    assert response.status_code == 422, response.text
    assert response.json()["error"] == "deep.json: nested too deeply to read (a hostile or broken file); not read"


@pytest.mark.model
async def test_a_large_uploaded_export_is_stored_at_once_then_embedded_behind_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As ``library add``: an export of more records than one part is stored without waiting for the model
    (the answer says its documents are not embedded yet); the server then embeds them behind, in its own
    process, so the library does not stay searchable by words alone until someone runs ``library embed``."""
    from deepcritical.documents import reader
    from deepcritical.evidence import chroma
    from deepcritical.evidence.pending import count_pending

    monkeypatch.setattr(reader, "RIS_PART_RECORDS", 2)
    record = "TY  - JOUR\nTI  - Record {n}\nAB  - Nausea in {n} of 40 on drug X.\nER  - \n\n"
    export = "".join(record.format(n=n) for n in range(3))
    app = app_for(tmp_path, ScriptedRuns())
    async with serving(app) as client:
        large = await client.post(URL, params={"filename": "zotero.ris"}, content=export.encode())
        small = await client.post(URL, params={"filename": "notes.md"}, content=NOTES)
        await app.state.embedder.wait()
    assert large.status_code == 201, large.text
    assert [document["embedded"] for document in large.json()["documents"]] == [False, False, False]
    assert [document["embedded"] for document in small.json()["documents"]] == [True]
    assert app.state.embedder.embedded == 3
    connection = chroma.connect(settings_in(tmp_path))
    try:
        assert count_pending(connection, large.json()["collection"]) == 0
    finally:
        connection.close()


async def test_the_embedder_behind_a_server_stops_at_shutdown_and_leaves_the_rest_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shutdown while passages wait ends the pass before its next part: what was stored stays, pending,
    for ``library embed``; the server does not hold its exit for the whole export."""
    from deepcritical.documents import reader
    from deepcritical.evidence import chroma, pending
    from deepcritical.evidence.pending import count_pending

    monkeypatch.setattr(reader, "RIS_PART_RECORDS", 2)
    monkeypatch.setattr(pending, "EMBED_PART", 1)
    record = "TY  - JOUR\nTI  - Record {n}\nAB  - Nausea in {n} of 40 on drug X.\nER  - \n\n"
    export = "".join(record.format(n=n) for n in range(3))
    app = app_for(tmp_path, ScriptedRuns())
    embedder = app.state.embedder
    real_embed = embedder._embed_pending

    def stopped_after_one_part() -> int:
        embedder._stop.set()  # the shutdown arrives while the first part is being embedded
        return real_embed()

    monkeypatch.setattr(embedder, "_embed_pending", stopped_after_one_part)
    async with serving(app) as client:
        large = await client.post(URL, params={"filename": "zotero.ris"}, content=export.encode())
        await embedder.wait()
    assert large.status_code == 201, large.text
    connection = chroma.connect(settings_in(tmp_path))
    try:
        assert count_pending(connection, large.json()["collection"]) == 3  # stopped before its first part
    finally:
        connection.close()


@pytest.mark.model
async def test_two_papers_uploaded_under_one_name_are_both_kept(tmp_path: Path) -> None:
    """An upload's name is a bare name ("fulltext.md") that another paper may share: a paper without a PMID,
    DOI or PMCID is identified by its content, so Study B does not replace Trial A, and Trial A added again
    is found unchanged (still stored)."""
    trial = b"# Trial A\n\n## Results\n\nNausea in 5 of 40 on drug X.\n"
    study = b"# Study B\n\n## Results\n\nHeadache in 7 of 52 on drug Y.\n"
    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        first = await client.post(URL, params={"filename": "fulltext.md"}, content=trial)
        second = await client.post(URL, params={"filename": "fulltext.md"}, content=study)
        again = await client.post(URL, params={"filename": "fulltext.md"}, content=trial)
    (a,) = first.json()["documents"]
    (b,) = second.json()["documents"]
    assert (a["outcome"], b["outcome"]) == ("added", "added")
    assert a["id"] != b["id"]
    assert again.json()["documents"][0] == {**a, "outcome": "unchanged"}
