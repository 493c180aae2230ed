"""Uploading a file to the document library over the API: behind the same token rules as the rest of
the API, its type checked by name, its size while it is read, and an unreadable file one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from web.fakes import ScriptedRuns, serving
from web.test_api import TOKEN, app_for

NOTES = b"# Notes\n\n## Results\n\nNausea in 5 of 40 on drug X.\n"
URL = "/api/library/documents"


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


@pytest.mark.model
async def test_an_uploaded_file_is_added_once(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path, ScriptedRuns(), api_token=TOKEN)) as client:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        first = await client.post(URL, params={"filename": "notes.md"}, content=NOTES, headers=headers)
        again = await client.post(URL, params={"filename": "notes.md"}, content=NOTES, headers=headers)
    assert first.status_code == 201, first.text
    (document,) = first.json()["documents"]
    assert (document["format"], document["outcome"], document["passages"]) == ("markdown", "added", 1)
    assert again.json()["documents"][0]["outcome"] == "unchanged"
