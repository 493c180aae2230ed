"""The MCP tools of watched questions: ``watch_add``, ``watch_list`` and ``watch_changes``. A watch is
run by ``deepcritical watch run --due`` (cron, a timer); these tools add one and read what its runs found.
Docstrings and field descriptions are written for the calling model: they are what it reads."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from deepcritical.config import Settings
from deepcritical.service.watch_run import add_watch
from deepcritical.service.watches import WatchOptions, WatchStorage, describe_interval, folder_in_home
from deepcritical.service.watches_redis import open_watches

MAX_WATCH_ID_CHARS = 20
CONFIDENCE = "How sure the verdict is; for a maybe weighed from the studies: how evenly they split (1 when evenly)"
VERDICT_TEXT = (
    "The verdict as the report words it, with the favourable share of the weighed studies (yes from 0.65, no up to "
    "0.35): compare runs by it, not by the confidence alone"
)


class WatchSummary(BaseModel):
    """A watched question and where it stands."""

    id: str = Field(description="The watch id, e.g. w-1a2b3c4d (watch_changes takes it)")
    question: str
    every: str = Field(description="How often it runs: 12h, 7d, 2w")
    next_due: datetime
    last_run: datetime | None
    verdict: str | None = Field(description="The verdict of its last run (yes, no, maybe, supported, ...)")
    confidence: float | None = Field(description=CONFIDENCE)
    verdict_text: str | None = Field(description=VERDICT_TEXT)


class WatchList(BaseModel):
    watches: list[WatchSummary]
    unreadable: list[str] = Field(
        default_factory=list, description="Watches whose stored record cannot be read, one line each (left out)"
    )


class RunChanges(BaseModel):
    """One run of a watch and what changed since the run before it."""

    run_at: datetime
    verdict: str | None
    confidence: float | None = Field(description=CONFIDENCE)
    verdict_text: str | None = Field(description=VERDICT_TEXT)
    counted_studies: int
    changed: bool = Field(description="Whether the evidence or the verdict moved (an alert was sent)")
    changes: list[str] = Field(description="One line per change: new studies, retractions, the verdict's move")
    folder: str = Field(description="The run's folder: report.md, run.json, changes.json")


class WatchHistory(BaseModel):
    id: str
    question: str
    runs: list[RunChanges] = Field(description="Every run, oldest first")


def register_watch_tools(server: MCPServer[Any], settings: Settings, *, over_http: bool = False) -> None:
    """Add the watch tools to ``server``; watches live under the server's home (``watches.sqlite``), or a
    team's in its Redis. ``over_http``: a run's folder is given under the home, not as the server's path."""

    def shown(folder: str) -> str:
        return folder_in_home(folder, settings.home) if over_http else folder

    opened: list[WatchStorage] = []

    def store() -> WatchStorage:
        # Opened at the first call, then kept (a team's store, in its Redis, holds a connection pool).
        if not opened:
            opened.append(open_watches(settings))
        return opened[0]

    @server.tool(annotations=ToolAnnotations(title="Watch a research question", read_only_hint=False))
    async def watch_add(
        question: Annotated[str, Field(description="The research question to keep re-running, in plain words")],
        every: Annotated[str, Field(max_length=20, description="How often: 12h, 7d, 2w (at least 1h)")] = "7d",
    ) -> WatchSummary:
        """Keep watching QUESTION: DeepCritical re-runs it every interval (from the next scheduled
        `deepcritical watch run --due`), searching only what appeared since the last run, re-checking
        retractions, and records what changed: new studies, retractions, the verdict moving. Returns the
        watch id; watch_changes reads its history later."""
        options = WatchOptions(demo=settings.demo_mode)
        watch = add_watch(store, settings, question, options, every=every)
        return _summary(watch_id=watch.id, store=store())

    @server.tool(annotations=ToolAnnotations(title="List watched questions", read_only_hint=True))
    async def watch_list() -> WatchList:
        """Every watched question with its last run's verdict and confidence and when it runs next."""
        watches = store()
        listed = [_summary(watch_id=watch.id, store=watches) for watch in watches.watches()]
        return WatchList(watches=listed, unreadable=[error.message for error in watches.damaged])

    @server.tool(annotations=ToolAnnotations(title="What changed for a watched question", read_only_hint=True))
    async def watch_changes(
        watch_id: Annotated[str, Field(max_length=MAX_WATCH_ID_CHARS, description="The id watch_add returned")],
    ) -> WatchHistory:
        """A watched question's history: each run's date, verdict, confidence, counted studies and what
        changed since the run before (new studies with their design, retractions, a verdict change)."""
        watches = store()
        watch, history = watches.get(watch_id.strip()), watches.history(watch_id.strip())
        runs = [
            RunChanges(
                run_at=run.run_at,
                verdict=run.verdict,
                confidence=run.confidence,
                verdict_text=run.verdict_text,
                counted_studies=run.counted,
                changed=run.changed,
                changes=run.summary,
                folder=shown(run.folder),
            )
            for run in history
        ]
        return WatchHistory(id=watch.id, question=watch.question, runs=runs)


def _summary(*, watch_id: str, store: WatchStorage) -> WatchSummary:
    watch = store.get(watch_id)
    last = watch.last_run
    return WatchSummary(
        id=watch.id,
        question=watch.question,
        every=describe_interval(watch.interval),
        next_due=watch.next_due,
        last_run=last.run_at if last else None,
        verdict=last.verdict if last else None,
        confidence=last.confidence if last else None,
        verdict_text=last.verdict_text if last else None,
    )
