"""The JSON API under ``/api``: start, list, follow (Server-Sent Events), cancel and download runs.
Every error is JSON, ``{"error": one line, "field": the input at fault or null}``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from enum import Enum
from typing import Annotated

import structlog
from fastapi import APIRouter, Depends, FastAPI, Header, Request
from fastapi import Path as PathParameter
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.security import HTTPBearer
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.exceptions import HTTPException

from deepcritical import __version__
from deepcritical.appraisal.readers import installed_readers
from deepcritical.config import Settings
from deepcritical.demo.records import load_corpus
from deepcritical.models import SOURCE_LABELS
from deepcritical.options import ReaderName
from deepcritical.run.request import RunRequest, RunRequestError
from deepcritical.run.store import RunInfo
from deepcritical.service.admission import RunRateLimit
from deepcritical.service.entries import QueueFullError, RunEndedError, RunNotFoundError
from deepcritical.service.manager import RunManager
from deepcritical.service.watches import WatchError, WatchNotFoundError
from deepcritical.text import MAX_QUESTION_CHARS, NOT_UTF8, shorten
from deepcritical.web.report_html import folder_report_html

logger = structlog.get_logger(__name__)

SSE_PING_SECONDS = 15
# Run ids are ``research-YYYYMMDD-HHMMSS-xxxxxx``; a longer one is refused before it is looked up or echoed.
MAX_RUN_ID_CHARS = 64
# No error message repeats more of what a client sent than this.
MAX_ERROR_CHARS = 300
# A run has at most 10,000 events; an id past any (a hostile or broken client) is refused, never sent on.
MAX_EVENT_ID = 2**53
RunId = Annotated[str, PathParameter(max_length=MAX_RUN_ID_CHARS, description="A run id, as POST /api/runs gave it")]
MEDIA_TYPES = {
    ".md": "text/markdown; charset=utf-8",
    ".json": "application/json",
    ".ris": "application/x-research-info-systems",
    ".bib": "application/x-bibtex; charset=utf-8",
    ".svg": "image/svg+xml",  # a run's figures, drawn by report/figure_files.py with every text escaped
    ".png": "image/png",
}


class RunView(RunInfo):
    """A run's record, with its place in the queue, its files and where to find them."""

    position: int | None = Field(description="1 for the next queued run to start; null when not waiting")
    files: list[str] = Field(description="Outputs to download: report.md, run.json and any other export")
    links: dict[str, str]


class ServerInfo(BaseModel):
    """What the page needs to know to offer its options."""

    version: str
    demo: bool
    token_required: bool
    sources: list[str]
    source_labels: dict[str, str] = Field(description="How to show each source to a person: pubmed -> PubMed")
    max_iterations: int
    max_question_chars: int
    examples: list[str]
    reader: ReaderName = Field(description="The result reader a run uses when its request names none")
    readers: list[ReaderName] = Field(description="The result readers a run request may name")


class ErrorBody(BaseModel):
    error: str
    field: str | None = None


def error_response(status: int, message: str, field: str | None = None, **headers: str) -> JSONResponse:
    body = ErrorBody(error=shorten(message, MAX_ERROR_CHARS), field=field)
    return JSONResponse(body.model_dump(), status_code=status, headers=headers or None)


def _field_of(location: tuple[int | str, ...]) -> str:
    """``("body", "question")`` → ``question``, ``("body", "sources", 1)`` → ``sources`` (positions are
    dropped), a body that is no JSON → ``body``, a header → its name (``Last-Event-ID``)."""
    parts = [part for part in location[1:] if isinstance(part, str)] or [str(location[0])]
    return ".".join(parts)


def install_error_handlers(app: FastAPI) -> None:
    async def invalid(_: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        first = error.errors()[0]
        field = _field_of(tuple(first.get("loc", ("body",))))
        if first.get("type") == "string_unicode":  # pydantic's words for a lone surrogate, as every door says it
            return error_response(422, f"{field}: {NOT_UTF8} (a lone surrogate)", field)
        message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
        return error_response(422, f"{field}: {message}", field)

    async def refused(_: Request, error: Exception) -> JSONResponse:
        # A run request (its field) or a watch refused; an unknown run or watch; a run that has ended.
        status = 404 if isinstance(error, RunNotFoundError | WatchNotFoundError) else 422
        status = 409 if isinstance(error, RunEndedError) else status
        return error_response(status, str(error), getattr(error, "field", None))

    async def full(_: Request, error: Exception) -> JSONResponse:
        return error_response(503, f"the run queue is full: {error}", **{"Retry-After": "60"})

    async def http_error(_: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, HTTPException)
        return error_response(error.status_code, str(error.detail))

    async def unwritable(_: Request, error: Exception) -> JSONResponse:
        # The server's own paths are not the client's business: the reason, and what to fix, without them.
        reason = error.strerror if isinstance(error, OSError) and error.strerror else type(error).__name__
        message = f"the server cannot write its runs folder ({reason}); its DEEPCRITICAL_HOME must be writable"
        return error_response(503, message, **{"Retry-After": "60"})

    async def crashed(_: Request, error: Exception) -> JSONResponse:
        logger.error("request_failed", error=type(error).__name__, exc_info=error)
        return error_response(500, "the server failed on this request; its log (--verbose) says why")

    app.add_exception_handler(RequestValidationError, invalid)
    for refusal in (RunRequestError, RunNotFoundError, RunEndedError, WatchError):
        app.add_exception_handler(refusal, refused)
    app.add_exception_handler(QueueFullError, full)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(OSError, unwritable)
    app.add_exception_handler(Exception, crashed)  # the JSON error shape, never a plain-text 500


def examples() -> list[str]:
    """The example questions the page offers: the demo corpus's topics, which a demo run can answer."""
    return [topic.question for topic in load_corpus().topics]


def run_view(manager: RunManager, info: RunInfo) -> RunView:
    base = f"/api/runs/{info.run_id}"
    files = manager.files(info.run_id)
    links = {"self": base, "events": f"{base}/events"}
    if "report.md" in files:
        links["report.html"] = f"{base}/report.html"
    links |= {name: f"{base}/{name}" for name in files}
    return RunView(**info.model_dump(), position=manager.position(info.run_id), files=files, links=links)


def api_router(tags: list[str | Enum] | None = None) -> APIRouter:
    """A router under ``/api`` whose routes declare the bearer scheme in the OpenAPI document (so /docs can send
    it); ``ApiGuard`` enforces it."""
    bearer = HTTPBearer(auto_error=False, description="DEEPCRITICAL_API_TOKEN, when the server has one")
    return APIRouter(prefix="/api", dependencies=[Depends(bearer)], tags=tags)


def build_router(manager: RunManager, settings: Settings, rate_limit: RunRateLimit | None = None) -> APIRouter:
    """The ``/api`` routes: the server's options, starting runs, then each run's state and files (the library's
    are ``web.library_api``'s, the watches' ``web.watch_api``'s)."""
    router = api_router()
    _add_server_routes(router, manager, settings, rate_limit or RunRateLimit(settings.runs_per_minute))
    _add_run_routes(router, manager)
    return router


def _add_server_routes(router: APIRouter, manager: RunManager, settings: Settings, rate_limit: RunRateLimit) -> None:
    """``/info`` and starting a run."""

    @router.get("/info", response_model=ServerInfo, tags=["server"])
    async def info() -> ServerInfo:
        """The server's options and limits: demo mode, enabled sources, maximum iterations, examples, its result
        reader and the ones a run may name."""
        return ServerInfo(
            version=__version__,
            demo=settings.demo_mode,
            token_required=settings.api_token is not None,
            sources=list(settings.sources),
            source_labels={name: SOURCE_LABELS.get(name, name) for name in settings.sources},
            max_iterations=settings.max_iterations,
            max_question_chars=MAX_QUESTION_CHARS,
            examples=examples(),
            reader=settings.reader,
            readers=installed_readers(),
        )

    @router.post(
        "/runs",
        status_code=202,
        response_model=RunView,
        tags=["runs"],
        responses={422: {"model": ErrorBody}, 429: {"model": ErrorBody}, 503: {"model": ErrorBody}},
    )
    async def create_run(body: RunRequest, request: Request) -> RunView | JSONResponse:
        """Start a research run; it waits in a queue while the server runs its maximum at once. Every
        per-run option of the command line is here; what is left out takes the server's settings."""
        plan = manager.accept(body)  # a request outside this server's limits is refused before it counts
        client = request.client.host if request.client else "unknown"
        wait = await rate_limit.retry_after(client)
        if wait is not None:
            return error_response(429, rate_limit.refusal(client), **{"Retry-After": str(wait)})
        info = manager.create(body, plan=plan)
        return run_view(manager, info)


def _add_run_routes(router: APIRouter, manager: RunManager) -> None:
    """Each run: listed, read, cancelled, resumed, followed, and its report and files."""

    @router.get("/runs", response_model=list[RunView], tags=["runs"])
    async def list_runs() -> list[RunView]:
        """Every run this server knows, newest first, the ones from before a restart included."""
        return [run_view(manager, info) for info in manager.all_runs()]

    @router.get("/runs/{run_id}", response_model=RunView, tags=["runs"], responses={404: {"model": ErrorBody}})
    async def get_run(run_id: RunId) -> RunView:
        """A run's status, outcome summary and links to its events and files."""
        return run_view(manager, manager.get(run_id))

    @router.delete(
        "/runs/{run_id}",
        response_model=RunView,
        tags=["runs"],
        responses={404: {"model": ErrorBody}, 409: {"model": ErrorBody}},
    )
    async def cancel_run(run_id: RunId) -> RunView:
        """Cancel a queued or running run (409 when it has ended already)."""
        return run_view(manager, await manager.cancel(run_id))

    @router.post(
        "/runs/{run_id}/resume",
        response_model=RunView,
        status_code=202,
        tags=["runs"],
        responses={404: {"model": ErrorBody}, 409: {"model": ErrorBody}, 429: {"model": ErrorBody}},
    )
    async def resume_run(run_id: RunId) -> RunView:
        """Continue an interrupted run from its last checkpoint (409 when it is not interrupted, or stopped
        before its first checkpoint). Its events go on from the last one."""
        return run_view(manager, manager.resume(run_id))

    @router.get(
        "/runs/{run_id}/events",
        tags=["runs"],
        response_class=EventSourceResponse,
        responses={200: {"content": {"text/event-stream": {}}}, 404: {"model": ErrorBody}},
    )
    async def run_events(
        run_id: RunId,
        last_event_id: Annotated[int | None, Header(alias="Last-Event-ID", ge=0, le=MAX_EVENT_ID)] = None,
    ) -> EventSourceResponse:
        """The run's progress as Server-Sent Events, from the first (or after ``Last-Event-ID``) to the
        last, ``run_ended``; a finished run replays them all. Each event's ``event`` is its ``kind``."""
        manager.get(run_id)

        async def stream() -> AsyncIterator[ServerSentEvent]:
            async for event in manager.follow(run_id, after=last_event_id or 0):
                yield ServerSentEvent(data=json.dumps(event.data), event=event.kind, id=str(event.id))

        return EventSourceResponse(stream(), ping=SSE_PING_SECONDS, headers={"Cache-Control": "no-store"})

    @router.get("/runs/{run_id}/report.html", response_class=HTMLResponse, tags=["runs"])
    async def run_report_html(run_id: RunId) -> HTMLResponse:
        """The report as an HTML fragment: outside text escaped, links to http(s) only. Written from the run's
        report document (report.json); a folder of an earlier version says how to upgrade it."""
        report = manager.file(run_id, "report.md")  # 404 until the run has written its report
        return HTMLResponse(folder_report_html(report.parent, files=f"/api/runs/{run_id}/"))

    @router.get("/runs/{run_id}/{name}", tags=["runs"], responses={404: {"model": ErrorBody}})
    @router.head("/runs/{run_id}/{name}", include_in_schema=False)
    async def run_file(run_id: RunId, name: Annotated[str, PathParameter(max_length=100)]) -> Response:
        """One of the run's outputs: ``report.md``, ``run.json`` or another export it has."""
        path = manager.file(run_id, name)
        media_type = MEDIA_TYPES.get(path.suffix, "application/octet-stream")
        return FileResponse(path, media_type=media_type, filename=name, content_disposition_type="attachment")
