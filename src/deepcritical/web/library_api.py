"""The document library over HTTP (``service.library``): a file uploaded (``POST /api/library/documents``), the
library's documents listed (``GET`` on the same path) and its passages searched (``/api/library/search``), as the
command line's ``library add``, ``library documents`` and ``library search`` do. Under ``/api``, so ``ApiGuard``
applies its token and same-origin rules as to every other route."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from pathlib import PurePath
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from deepcritical.evidence.resources import Resources
from deepcritical.service.background_embed import BackgroundEmbedder
from deepcritical.service.library import DocumentListing, Library, LibrarySearch, NoCollectionError
from deepcritical.text import MAX_QUESTION_CHARS
from deepcritical.web.api import ErrorBody, api_router, error_response

# The route that takes a file: held to DEEPCRITICAL_LIBRARY_MAX_FILE_MB, not to the 64 KiB of the others.
UPLOAD_PATH = "/api/library/documents"


class UploadedDocument(BaseModel):
    id: str
    title: str
    format: str
    passages: int
    outcome: str = Field(description="added, replaced (an updated file) or unchanged (the same file again)")
    embedded: bool = Field(
        True,
        description="False for a large export's records, stored at once: searches find them by their words until "
        "the server, embedding behind, has given them their vectors (or `deepcritical library embed`, after a stop)",
    )


class UploadResult(BaseModel):
    collection: str
    documents: list[UploadedDocument]


async def upload(
    request: Request, filename: str, resources: Resources, on_pending: Callable[[], None] = lambda: None
) -> UploadResult | JSONResponse:
    """The upload endpoint's work: type by extension, size while reading, then parse and store on the server's
    resources; ``on_pending`` when a large export was stored without its vectors (the server embeds it behind)."""
    from deepcritical.documents.reader import EXTENSIONS, SUPPORTED
    from deepcritical.errors import DeepCriticalError
    from deepcritical.service.library_add import add_upload

    settings = resources.settings

    name = PurePath(filename.replace("\\", "/")).name  # a name, never a path
    if PurePath(name).suffix.lower() not in EXTENSIONS:
        return error_response(415, f"unsupported file type {name!r}; supported: {SUPPORTED}", field="filename")
    limit = int(settings.library_max_file_mb * 2**20)
    declared = request.headers.get("content-length", "")
    too_large = f"{name}: larger than {settings.library_max_file_mb:g} MB (the upload limit)"
    if declared.isdigit() and int(declared) > limit:
        return error_response(413, too_large)
    # Streamed to disk as it arrives (the 64 KiB cap of the other routes does not hold here), read once.
    with tempfile.TemporaryFile() as body:
        received = 0
        async for chunk in request.stream():
            received += len(chunk)
            if received > limit:
                return error_response(413, too_large)
            body.write(chunk)

        def store() -> list[tuple[Any, str, bool]]:
            body.seek(0)
            return list(add_upload(body.read(), name, resources, settings.library_collection))

        try:
            added = await asyncio.to_thread(store)
        except DeepCriticalError as error:
            return error_response(422, f"{name}: {error}", field="body")
    if not all(embedded for _, _, embedded in added):
        on_pending()
    return UploadResult(
        collection=settings.library_collection,
        documents=[
            UploadedDocument(
                id=document.id,
                title=document.meta.title,
                format=document.format,
                passages=len(document.passages),
                outcome=outcome,
                embedded=embedded,
            )
            for document, outcome, embedded in added
        ],
    )


def build_library_router(library: Library, embedder: BackgroundEmbedder | None = None) -> APIRouter:
    """The library's routes on the server's resources; ``embedder`` gives an uploaded large export its vectors
    behind the server."""
    router = api_router(tags=["library"])
    collection = library.resources.settings.library_collection

    @router.post(
        UPLOAD_PATH.removeprefix("/api"),
        status_code=201,
        response_model=UploadResult,
        responses={413: {"model": ErrorBody}, 415: {"model": ErrorBody}, 422: {"model": ErrorBody}},
    )
    async def upload_document(
        request: Request, filename: Annotated[str, Query(min_length=1, max_length=255)]
    ) -> UploadResult | JSONResponse:
        """Add a file to the document library: its bytes as the request body, its name (the extension
        says its type: .pdf, .nxml, .xml, .json, .ris, .bib, .md, .txt, .html) in ``filename``. Read in a
        worker process under the server's limits, split into passages that ``library`` searches find."""
        on_pending = embedder.wake if embedder is not None else lambda: None
        return await upload(request, filename, library.resources, on_pending)

    @router.get(UPLOAD_PATH.removeprefix("/api"), response_model=DocumentListing)
    async def library_documents() -> DocumentListing:
        """The documents of the server's library collection (``DEEPCRITICAL_LIBRARY_COLLECTION``): id, format,
        passages (and how many wait for their vectors), full text or not, title."""
        return await asyncio.to_thread(library.listing, collection)

    @router.get("/library/search", response_model=LibrarySearch, responses={404: {"model": ErrorBody}})
    async def library_search(
        q: Annotated[str, Query(min_length=1, max_length=MAX_QUESTION_CHARS, description="Keywords or a question")],
        n: Annotated[int, Query(ge=1, le=50, description="How many passages")] = 10,
    ) -> LibrarySearch | JSONResponse:
        """The passages of the server's library that best match ``q``, best first, as a run's ``library``
        source finds them (404 while nothing was added to it)."""
        try:
            return await library.search(collection, q, n)
        except NoCollectionError as error:
            return error_response(404, str(error))

    return router
