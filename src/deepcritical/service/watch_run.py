"""One run of a watch: a normal run of its question that knows what the watch already holds.

1. The sources with a date filter search only what appeared since the last run (``search_since``: PubMed's
   Entrez date, Europe PMC's first publication, ClinicalTrials.gov's last update); the others are searched
   whole, and what they find that the watch holds merges into the held record (one study, every identity).
2. The earlier run's evidence is carried forward into this run, after its retractions and expressions of
   concern are re-checked at PubMed (one efetch of every held PMID): a study retracted since is set aside.
3. The run writes its normal folder (``run_to_folder``, the one "run a question into a folder" path), with an
   addendum computed from the finished run before any file is written: ``changes.json`` and a "What changed
   since DATE" section at the top of its report (``report.json`` and the ``report.md`` written from it).
4. The history is recorded; when something changed, the feed is rewritten and the webhook is called.

``run_watch_once`` is the one entry: the command line (``watch run``), the server and a scheduler call it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

import httpx2
import structlog
from pydantic import BaseModel, ValidationError

from deepcritical.config import Settings
from deepcritical.errors import DeepCriticalError
from deepcritical.evidence.resources import Resources
from deepcritical.models import Evidence, SearchResult, SourceName
from deepcritical.run import setup
from deepcritical.run.checkpoint import CHECKPOINT_FILE
from deepcritical.run.events import ProgressEvent
from deepcritical.run.execute import ClientFactory, RunSource, RunSourceFactory, run_to_folder
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.outcome import ResearchOutcome, new_run_id
from deepcritical.run.record import Addendum
from deepcritical.run.request import REQUEST_FILE, RunRequest
from deepcritical.run.store import RunStore
from deepcritical.service.watch_alerts import alert_body, atom_feed, send_webhook, write_feed
from deepcritical.service.watch_changes import Changes, compare, counted, section_blocks, unavailable_sources
from deepcritical.service.watches import Watch, WatchError, WatchOptions, WatchRun, WatchStorage
from deepcritical.stages.ports import SearchHandlerLike

logger = structlog.get_logger(__name__)
CHANGES_NAME = "changes.json"
EventSink = Callable[[ProgressEvent], None]
WebhookSender = Callable[[str, dict[str, Any], Settings], Awaitable[bool]]


def watch_request(question: str, options: WatchOptions) -> RunRequest:
    """The run request of one run of a watch: its question under the watch's own research options, the
    request every front end builds (``run.request``). An option it refuses (nine sources, a collection name
    it cannot take) is a WatchError naming that option."""
    try:
        return RunRequest(
            question=question,
            sources=options.sources,
            collection=options.collection,
            model=options.model,
            max_iterations=options.max_iterations,
            no_llm=options.no_llm,
            recall=False if options.no_recall else None,
            demo=options.demo,
        )
    except ValidationError as error:
        first = error.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "options"
        raise WatchError(field, f"{field}: {first['msg']}") from None


def settings_for(options: WatchOptions, base: Settings, question: str = "") -> Settings:
    """The settings a watch runs with: ``base`` (the environment) under the watch's own options, validated
    as the environment's values are (``RunRequest.settings``)."""
    return watch_request(question, options).settings(base)


def add_watch(
    store: Callable[[], WatchStorage],
    base: Settings,
    question: str,
    options: WatchOptions,
    *,
    every: str = "7d",
    webhook: str | None = None,
) -> Watch:
    """A new watch of every front end: its options checked against ``base`` first (not at its first run; the
    store is opened after), due at once on the watch's clock. Blocks while the webhook's host is resolved."""
    now, private = watch_clock(settings_for(options, base)), base.webhook_allow_private
    return store().add(question, every=every, options=options, webhook=webhook, now=now, allow_private_webhook=private)


def watch_clock(settings: Settings) -> datetime:
    """Now, for a watch: the demo clock's day (at noon UTC) when the stand-ins run on one, else the time."""
    if settings.stand_in_sources and settings.demo_today is not None:
        return datetime.combine(settings.demo_today, time(12), UTC)
    return datetime.now(UTC)


def read_outcome(folder: Path) -> ResearchOutcome | None:
    """The outcome a run folder's ``run.json`` records; None when there is none or it cannot be read."""
    try:
        record = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        record.pop("record_version", None)
        record.pop("sources", None)
        return ResearchOutcome.model_validate({**record, "markdown": ""})
    except (OSError, ValueError) as error:
        logger.warning("watch_earlier_run_unreadable", folder=str(folder), error=type(error).__name__)
        return None


class CarriedHandler:
    """The run's search handler with the watch's held evidence added to the first search's result: the
    run collects it as it collects what its sources find (merged by identity with a record found again),
    so the verdict and the report weigh everything the watch holds."""

    def __init__(self, inner: SearchHandlerLike, held: Sequence[Evidence]) -> None:
        self._inner = inner
        self._held = list(held)

    @property
    def source_names(self) -> list[SourceName]:
        return self._inner.source_names

    @property
    def unavailable(self) -> Mapping[SourceName, str]:
        return self._inner.unavailable

    async def execute(self, query: str, max_results_per_tool: int = 10) -> SearchResult:
        result = await self._inner.execute(query, max_results_per_tool)
        held, self._held = self._held, []
        if not held:
            return result
        # ``total_found`` stays what the sources found: the held items are not this search's finds.
        return result.model_copy(update={"evidence": [*held, *result.evidence]})


# What a watch's run is made from: the evidence it carries forward and the process's resources.
WatchSourceFactory = Callable[[Sequence[Evidence], Resources], RunSourceFactory]


def carrying(held: Sequence[Evidence], resources: Resources) -> RunSourceFactory:
    """A run source (``run_to_folder``'s ``run_source``) on ``resources`` whose first search brings ``held`` along."""

    def build(settings: Settings, client: httpx2.AsyncClient) -> RunSource:
        parts = setup.assemble(settings, client, resources=resources)
        return Orchestrator(dataclasses.replace(parts, handler=CarriedHandler(parts.handler, held)))

    return build


async def recheck(
    held: Sequence[Evidence], settings: Settings, client_factory: ClientFactory | None = None
) -> tuple[list[Evidence], str]:
    """``held`` with each PubMed record's retraction and expression of concern as PubMed shows them now,
    and one line saying what was re-checked. A flag once seen is kept (a failed or partial answer never
    clears one); a re-check that fails leaves every flag as it was and says so."""
    pmids = [item.citation.pmid for item in held if item.citation.pmid]
    if not pmids:
        return list(held), "no held study has a PMID to re-check"
    async with (client_factory or setup.http_client)(settings) as client:
        checker = setup.record_checker(settings, client)
        try:
            fresh = {item.citation.pmid: item for item in await checker.fetch(pmids)}
        except (DeepCriticalError, httpx2.HTTPError) as error:
            logger.warning("watch_recheck_failed", error=str(error))
            return list(held), f"not re-checked this time (PubMed: {type(error).__name__}); earlier flags kept"
    updated = []
    for item in held:
        now = fresh.get(item.citation.pmid) if item.citation.pmid else None
        if now is not None and (
            now.retracted > item.retracted or now.expression_of_concern > item.expression_of_concern
        ):
            item = item.model_copy(
                update={
                    "retracted": item.retracted or now.retracted,
                    "expression_of_concern": item.expression_of_concern or now.expression_of_concern,
                }
            )
        updated.append(item)
    return updated, f"{len(fresh)} of {len(set(pmids))} held PubMed record(s) re-checked at PubMed"


class WatchOutcome(BaseModel):
    """What one run of a watch did."""

    watch_id: str
    folder: Path
    changes: Changes
    alerted: bool
    webhook_delivered: bool | None = None


async def _deliver(url: str, body: dict[str, Any], settings: Settings) -> bool:
    # No proxy from the environment: the request goes to the address the webhook's check resolved.
    async with httpx2.AsyncClient(follow_redirects=False, trust_env=False) as client:
        return await send_webhook(
            url, body, settings.webhook_secret, client=client, allow_private=settings.webhook_allow_private
        )


def last_good_run(store: WatchStorage, watch: Watch) -> tuple[ResearchOutcome | None, date | None]:
    """What a re-run compares with, and the date it searches from. The comparison is with the newest run
    that did not fail (a failed run holds too little). The date is that of the newest run in which every
    source answered: a source that was down then has not yet been asked for what appeared since the run
    before, so the window stays open from there."""
    before: ResearchOutcome | None = None
    for run in reversed(store.history(watch.id)):
        outcome = read_outcome(Path(run.folder))
        if outcome is None or outcome.error is not None:
            continue
        before = before or outcome
        if not unavailable_sources(outcome):
            return before, run.run_at.date()
    return before, None


def unfinished_run(store: WatchStorage, watch: Watch, *, exclusive: bool = False) -> Path | None:
    """The newest run folder of ``watch`` that was started and not finished (a checkpoint, or the request a
    run writes as it starts, and no ``run.json``) and is not in its history: a run that was killed. A folder
    whose lease says its owner is alive is a run going on in another process, and is left to it, unless
    ``exclusive``: the caller alone holds the watch's due time (the queue's job for it), and a worker killed
    on another machine leaves a lease that looks alive for a minute (``LEASE_STALE_SECONDS``)."""
    recorded = {Path(run.folder) for run in store.history(watch.id)}
    runs = store.folder(watch.id) / "runs"
    candidates = sorted(runs.iterdir(), reverse=True) if runs.is_dir() else []
    return next((folder for folder in candidates if folder not in recorded and _killed(folder, exclusive)), None)


def _killed(folder: Path, exclusive: bool) -> bool:
    started = (folder / CHECKPOINT_FILE).is_file() or (
        (folder / REQUEST_FILE).is_file() and not (folder / "run.json").is_file()
    )
    if not started or exclusive:
        return started
    lease = RunStore(folder).lease()
    return lease is None or lease.owner_gone(datetime.now(UTC).timestamp())


async def run_watch_once(
    watch: Watch,
    base: Settings,
    store: WatchStorage,
    *,
    on_event: EventSink | None = None,
    client_factory: ClientFactory | None = None,
    webhook: WebhookSender = _deliver,
    now: datetime | None = None,
    next_due: datetime | None = None,
    run_source: WatchSourceFactory = carrying,
    exclusive: bool = False,
    resources: Resources | None = None,
) -> WatchOutcome:
    """Run ``watch`` once (whether due or not), record it, and alert when something changed. ``now`` is
    the run's time (default: the watch's clock), ``next_due`` when the watch is due again (default: an
    interval after ``now``); ``run_source`` makes the run's source from the held evidence; ``exclusive``:
    see ``unfinished_run``; ``resources``: the process's (else the run builds its own, for it alone)."""
    resources = resources or Resources(base, share_connection=False)
    settings = settings_for(watch.options, base, watch.question)
    now = now or watch_clock(settings)
    before, since = last_good_run(store, watch)
    held: list[Evidence] = []
    check = ""
    if before is not None:
        held, check = await recheck(before.evidence, settings, client_factory)
        # Room for everything held as well as what is new, and only what appeared since the last run.
        settings = settings.with_values(search_since=since, max_evidence=settings.max_evidence + len(held))
    # A run of this watch that was killed (its folder has a checkpoint, the history has no record of it)
    # continues where it stopped, as any run does; otherwise a new run.
    killed = unfinished_run(store, watch, exclusive=exclusive)
    run_id = killed.name if killed is not None else new_run_id("watch")
    folder = killed or store.folder(watch.id) / "runs" / run_id
    compared: list[Changes] = []

    def what_changed(outcome: ResearchOutcome) -> Addendum:
        """The run's "What changed since DATE" section and ``changes.json``, written with its other files."""
        changes = compare(before, outcome, watch_id=watch.id, run_at=now, since=since, recheck=check)
        compared.append(changes)
        return Addendum(section_blocks(changes), {CHANGES_NAME: changes.model_dump_json(indent=2) + "\n"})

    finished = await run_to_folder(
        watch.question,
        settings,
        folder=folder,
        run_id=run_id,
        on_event=on_event,
        client_factory=client_factory,
        run_source=run_source(held, resources),
        resume=killed is not None,
        addendum=what_changed,
        resources=resources,
    )
    outcome, changes = finished.outcome, compared[-1]
    verdict = outcome.verdict
    store.record_run(
        watch.id,
        WatchRun(
            run_at=now,
            folder=str(folder),
            verdict=verdict.label if verdict is not None else None,
            confidence=verdict.confidence if verdict is not None else None,
            counted=len(counted(outcome).counted),
            changed=changes.changed,
            summary=changes.summary(),
            confidence_is_split=verdict is not None and verdict.confidence_is_split,
            favourable_share=verdict.favourable_share if verdict is not None else None,
        ),
        next_due=next_due or now + watch.interval,
    )
    delivered: bool | None = None
    if changes.changed:
        write_feed(store.folder(watch.id), atom_feed(watch, store.history(watch.id), now=now))
        if watch.webhook:
            delivered = await webhook(watch.webhook, alert_body(watch, changes, folder, settings.home), settings)
    logger.info("watch_run", watch=watch.id, changed=changes.changed, folder=str(folder))
    return WatchOutcome(
        watch_id=watch.id, folder=folder, changes=changes, alerted=changes.changed, webhook_delivered=delivered
    )


async def run_due(
    store: WatchStorage, base: Settings, *, now: datetime | None = None, on_event: EventSink | None = None
) -> list[WatchOutcome]:
    """Every watch due at ``now`` (default: each watch's own clock, the demo clock for a demo watch), one
    after another, the longest overdue first. Each is claimed first (``WatchStorage.claim``): a watch another
    scheduler has taken for this due time is skipped."""
    outcomes = []
    for watch in store.due(datetime.max.replace(tzinfo=UTC)):
        moment = now or watch_clock(settings_for(watch.options, base))
        if watch.due(moment) and store.claim(watch, moment):
            outcomes.append(await run_watch_once(watch, base, store, on_event=on_event))
    return outcomes
