"""The watches over HTTP: list, add and remove watched questions, read one's history, and its Atom feed
(``/api/watches/{id}/feed.atom``) for a feed reader. Under ``/api``, so ``ApiGuard`` applies its token and
same-origin rules as to every other route; errors have the API's one shape, ``{"error", "field"}``
(``web.api.install_error_handlers``: an unknown watch is 404, a refused or damaged one 422)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Annotated

import structlog
from fastapi import APIRouter, Response
from fastapi import Path as PathParameter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StrictBool
from redis.exceptions import RedisError

from deepcritical.config import Settings
from deepcritical.errors import ConfigError
from deepcritical.run.request import Utf8Str
from deepcritical.service import watch_run
from deepcritical.service.manager import RunManager
from deepcritical.service.team import TeamRunManager
from deepcritical.service.watch_alerts import atom_feed
from deepcritical.service.watch_run import settings_for, watch_clock
from deepcritical.service.watch_schedule import watch_job
from deepcritical.service.watches import (
    Watch,
    WatchOptions,
    WatchRun,
    WatchStorage,
    describe_interval,
    folder_in_home,
)
from deepcritical.service.watches_redis import open_watches
from deepcritical.source_table import KNOWN_SOURCES
from deepcritical.text import MAX_QUESTION_CHARS
from deepcritical.web.api import ErrorBody, api_router, error_response

logger = structlog.get_logger(__name__)
UNREADABLE_HEADER = "X-DeepCritical-Unreadable"
WatchId = Annotated[str, PathParameter(pattern=r"^w-[0-9a-f]{8}$")]


class WatchRequest(BaseModel):
    """A question to watch. Options left out take the server's settings."""

    model_config = ConfigDict(extra="forbid")

    question: Utf8Str = Field(max_length=MAX_QUESTION_CHARS * 2)
    every: Utf8Str = Field(default="7d", max_length=20, description="12h, 7d, 2w (at least 1h)")
    webhook: Utf8Str | None = Field(default=None, max_length=2000, description="An http(s) URL for alerts")
    sources: list[Annotated[Utf8Str, Field(max_length=40)]] | None = Field(
        default=None, min_length=1, max_length=len(KNOWN_SOURCES)
    )
    no_llm: StrictBool = False


class WatchView(BaseModel):
    id: str
    question: str
    every: str
    webhook: bool = Field(description="Whether alerts go to a webhook (its URL is not shown)")
    created: datetime
    next_due: datetime
    last_run: WatchRun | None
    history: list[WatchRun] | None = Field(default=None, description="Every run, oldest first (one watch only)")
    links: dict[str, str]


def _in_home(run: WatchRun, home: Path) -> WatchRun:
    return run.model_copy(update={"folder": folder_in_home(run.folder, home)})


def watch_view(watch: Watch, home: Path, history: list[WatchRun] | None = None) -> WatchView:
    return WatchView(
        id=watch.id,
        question=watch.question,
        every=describe_interval(watch.interval),
        webhook=watch.webhook is not None,
        created=watch.created,
        next_due=watch.next_due,
        last_run=_in_home(watch.last_run, home) if watch.last_run else None,
        history=[_in_home(run, home) for run in history] if history is not None else None,
        links={"self": f"/api/watches/{watch.id}", "feed": f"/api/watches/{watch.id}/feed.atom"},
    )


async def schedule_first_run(manager: RunManager, watch: Watch, settings: Settings) -> None:
    """In a team deployment, queue a new watch's first run at once rather than at the queue's next scan for
    due watches (``service.watch_schedule``: its key is the due time's, so the scan adds no second one)."""
    if not isinstance(manager, TeamRunManager):
        return
    try:
        await manager.run_queue.queue.enqueue(watch_job(watch, settings))
    except (RedisError, OSError) as error:  # the watch is kept: the next scan finds it due
        logger.warning("watch_first_run_not_queued", watch=watch.id, error=type(error).__name__)


def build_watch_router(settings: Settings, manager: RunManager) -> APIRouter:
    router = api_router(tags=["watches"])

    opened: list[WatchStorage] = []

    def store() -> WatchStorage:
        # Opened at the first request (a server that never serves a watch never opens the database), then kept:
        # a team's store holds a Redis connection pool.
        if not opened:
            opened.append(open_watches(settings))
        return opened[0]

    _reading_routes(router, settings, store)
    _changing_routes(router, settings, manager, store)
    return router


def _reading_routes(router: APIRouter, settings: Settings, store: Callable[[], WatchStorage]) -> None:
    """The watches, one watch with its history, and its feed."""

    @router.get("/watches", response_model=list[WatchView])
    async def list_watches(response: Response) -> list[WatchView]:
        """Every watched question: its last run, its verdict then and when it is next due. A watch whose record
        cannot be read is left out, and named in the ``X-DeepCritical-Unreadable`` header (its ids)."""
        watches = store()
        views = [watch_view(watch, settings.home) for watch in watches.watches()]
        if watches.damaged:
            response.headers[UNREADABLE_HEADER] = ", ".join(error.watch_id for error in watches.damaged)
        return views

    @router.get("/watches/{watch_id}", response_model=WatchView, responses={404: {"model": ErrorBody}})
    async def get_watch(watch_id: WatchId) -> WatchView:
        """One watch with its history: each run's verdict, confidence, counted studies and what changed."""
        watches = store()
        return watch_view(watches.get(watch_id), settings.home, watches.history(watch_id))

    @router.get("/watches/{watch_id}/feed.atom", responses={404: {"model": ErrorBody}})
    async def watch_feed(watch_id: WatchId) -> Response:
        """The watch's Atom feed: one entry per run in which something changed."""
        watches = store()
        watch = watches.get(watch_id)
        feed = atom_feed(watch, watches.history(watch_id), now=watch_clock(settings_for(watch.options, settings)))
        return Response(feed, media_type="application/atom+xml; charset=utf-8")


def _changing_routes(
    router: APIRouter, settings: Settings, manager: RunManager, store: Callable[[], WatchStorage]
) -> None:
    """Adding a watch (and scheduling its first run) and removing one."""

    @router.post("/watches", status_code=201, response_model=WatchView, responses={422: {"model": ErrorBody}})
    async def add_watch(body: WatchRequest) -> WatchView | JSONResponse:
        """Watch a question: it runs at the next ``deepcritical watch run --due`` (in a team deployment: queued
        at once), then every interval."""
        options = WatchOptions(sources=body.sources, no_llm=body.no_llm, demo=settings.demo_mode)
        try:
            # Off the event loop: the webhook's host is resolved (a slow DNS server would hold every request).
            add = partial(watch_run.add_watch, store, settings, body.question, options, webhook=body.webhook)
            watch = await asyncio.to_thread(add, every=body.every)
        except ConfigError as error:
            return error_response(422, str(error), "sources")
        await schedule_first_run(manager, watch, settings)
        return watch_view(watch, settings.home)

    @router.delete("/watches/{watch_id}", status_code=204, responses={404: {"model": ErrorBody}})
    async def remove_watch(watch_id: WatchId) -> Response:
        """Stop watching (the run folders stay)."""
        store().remove(watch_id)
        return Response(status_code=204)
