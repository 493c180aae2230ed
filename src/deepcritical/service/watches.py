"""Watched questions: a question DeepCritical re-runs on a schedule, with its research options, its interval, an
optional webhook and the history of its runs; and ``WatchStorage``, what both stores of them keep."""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import structlog
from pydantic import BaseModel, Field, computed_field

from deepcritical.errors import DeepCriticalError
from deepcritical.options import parse_duration
from deepcritical.outputs import confidence_words
from deepcritical.questions import checked_question
from deepcritical.service.webhook_target import WebhookTargetError, check_target
from deepcritical.text import not_utf8, one_line, shorten

logger = structlog.get_logger(__name__)
MIN_INTERVAL = timedelta(hours=1)
# At least once in ten years: a longer interval has no use, and a due time beyond year 9999 cannot be written.
MAX_INTERVAL = timedelta(days=3653)


def verdict_words(label: str, confidence: float, *, split: bool, share: float | None) -> str:
    """'maybe (the studies are divided: 0.88, where 1 is an even split; favourable share 0.562)': a verdict as a watch's
    history compares it. The favourable share says which way the evidence moved under one label: a maybe whose
    split fell from 0.88 to 0.70 has moved toward yes (share 0.562 to 0.649), not lost confidence."""
    if label == "open":  # which intervention: no yes or no, so no confidence in one (the report shows none)
        return "open (no yes or no)"
    shared = f"; favourable share {share:.3f}" if share is not None else ""
    return f"{label} ({confidence_words(label, confidence, split=split)}{shared})"


class WatchError(DeepCriticalError):
    """A watch that cannot be added, found or run; ``field`` names the input at fault. The message names it as
    the API and MCP take it ("every '30m': ..."); ``on_command_line`` as the command line does ("--every")."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message

    @property
    def on_command_line(self) -> str:
        flagged = self.field in ("every", "webhook") and self.message.startswith(f"{self.field} ")
        return f"--{self.message}" if flagged else self.message


class WatchNotFoundError(WatchError):
    def __init__(self, watch_id: str) -> None:
        super().__init__("id", f"no watch has the id {watch_id!r}")

    @property
    def on_command_line(self) -> str:
        return f"{self.message} (see `deepcritical watch list`)"


class WatchDamagedError(WatchError):
    """A watch whose stored record cannot be read (edited by hand, written by a broken disk): named, and left
    out of every listing, so that one damaged row stops no command and no other watch."""

    def __init__(self, watch_id: str, reason: str) -> None:
        self.watch_id = watch_id[:64]
        super().__init__("id", f"watch {watch_id[:64]!r} cannot be read ({one_line(reason)[:200]}); remove it")

    @property
    def on_command_line(self) -> str:
        return self.message.removesuffix("remove it") + "`deepcritical watch remove ID` removes it"


# What reading a damaged record raises: a value of the wrong form (ValidationError is a ValueError), a number
# beyond a timedelta's range, a missing key.
DAMAGE = (ValueError, TypeError, OverflowError, KeyError)


class WatchOptions(BaseModel):
    """The research options a watch runs with (None: the settings of whoever runs it)."""

    sources: list[str] | None = None
    collection: str | None = None
    model: str | None = None
    no_llm: bool = False
    no_recall: bool = False
    demo: bool = False
    max_iterations: int | None = None


class WatchRun(BaseModel):
    """One run of a watch, as its history shows it."""

    run_at: datetime
    folder: str
    verdict: str | None
    confidence: float | None
    counted: int
    changed: bool
    summary: list[str] = Field(default_factory=list, description="What changed, one line each")
    confidence_is_split: bool = Field(
        default=False, description="The confidence of a maybe or mixed: how evenly the evidence is split, 1 when evenly"
    )
    favourable_share: float | None = Field(
        default=None,
        description="The favourable share of the weight the counted studies' verdict is read from (yes from 0.65, "
        "no up to 0.35); None for a model's verdict",
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verdict_text(self) -> str | None:
        """'maybe (how evenly the evidence is split: 0.70 of 1; favourable share 0.649)', or None before a verdict."""
        if self.verdict is None or self.confidence is None:
            return None
        return verdict_words(self.verdict, self.confidence, split=self.confidence_is_split, share=self.favourable_share)


class Watch(BaseModel):
    id: str
    question: str
    interval: timedelta
    options: WatchOptions
    webhook: str | None
    created: datetime
    next_due: datetime
    last_run: WatchRun | None = None

    def due(self, now: datetime) -> bool:
        # A watch that never ran is due at once, whatever the clock says: a demo clock set before the day
        # the watch was added (``DEEPCRITICAL_DEMO_TODAY``) still takes its baseline.
        return self.last_run is None or self.next_due <= now


class WatchStorage(ABC):
    """Where watches are kept: ``service.watches_sqlite.WatchStore`` (SQLite in the user's home) on one machine,
    ``service.watches_redis.RedisWatchStore`` (the queue's Redis) in a team deployment. Both check a new
    watch here and keep it their own way."""

    def add(
        self,
        question: str,
        *,
        every: str = "7d",
        options: WatchOptions | None = None,
        webhook: str | None = None,
        now: datetime,
        allow_private_webhook: bool = False,
    ) -> Watch:
        """A new watch, its input checked, due at once (its first run is its baseline). A webhook must be at
        a public address unless ``allow_private_webhook`` (``service.webhook_target``)."""
        watch = Watch(
            id=f"w-{uuid.uuid4().hex[:8]}",
            question=check_question(question),
            interval=parse_interval(every),
            options=options or WatchOptions(),
            webhook=check_webhook(webhook, allow_private=allow_private_webhook),
            created=now,
            next_due=now,
        )
        self._insert(watch)
        return watch

    @abstractmethod
    def _insert(self, watch: Watch) -> None: ...

    @abstractmethod
    def folder(self, watch_id: str) -> Path:
        """Where a watch's runs and its feed are written."""

    @abstractmethod
    def get(self, watch_id: str) -> Watch:
        """One watch; WatchNotFoundError for an unknown id, WatchDamagedError for a record that cannot be read."""

    @abstractmethod
    def watches(self) -> list[Watch]:
        """Every watch that can be read; a damaged one is logged, kept in ``damaged`` and left out."""

    damaged: tuple[WatchDamagedError, ...] = ()  # what the last listing left out (each listing sets its own)

    def readable(self, watch_ids: list[str]) -> list[Watch]:
        """The watches of ``watch_ids`` that can be read, in that order: one removed meanwhile is left out, and
        so is a damaged one (logged, and kept in ``damaged`` for a front end to name)."""
        found: list[Watch] = []
        damaged: list[WatchDamagedError] = []
        for watch_id in watch_ids:
            try:
                found.append(self.get(watch_id))
            except WatchDamagedError as error:
                logger.warning("watch_unreadable", watch=watch_id[:64], error=error.message)
                damaged.append(error)
            except WatchNotFoundError:  # removed since the ids were read
                continue
        self.damaged = tuple(damaged)
        return found

    @abstractmethod
    def due(self, now: datetime) -> list[Watch]:
        """The watches whose next run is due at ``now``, the longest overdue first."""

    @abstractmethod
    def history(self, watch_id: str) -> list[WatchRun]:
        """Every run of the watch, oldest first; an unknown id is an error, not an empty history."""

    @abstractmethod
    def record_run(self, watch_id: str, run: WatchRun, next_due: datetime) -> None:
        """A finished run joins the history and the watch is due again at ``next_due``, in one step; a
        watch removed meanwhile is not found (WatchNotFoundError), and not brought back."""

    @abstractmethod
    def claim(self, watch: Watch, now: datetime) -> bool:
        """Take ``watch``'s run for its due time: its next due time moves on by one interval, if it is still
        the one ``watch`` was read with (compare-and-set). Of two schedulers that read the same due watch
        (overlapping cron jobs, a timer and a hand-typed ``--due``), one claims it and the other skips it:
        one run per due time."""

    @abstractmethod
    def remove(self, watch_id: str) -> None: ...


def parse_interval(text: str) -> timedelta:
    """``12h``, ``7d``, ``2w`` (the duration form of ``DEEPCRITICAL_RETENTION``), at least an hour."""
    try:
        interval = parse_duration(text)
    except ValueError as error:
        raise WatchError("every", f"every {shorten(text, 40)!r}: {error}") from None
    if interval is None or interval < MIN_INTERVAL:
        raise WatchError("every", f"every {text!r}: a watch runs at most once an hour (e.g. 12h, 7d, 2w)")
    if interval > MAX_INTERVAL:
        raise WatchError("every", f"every {text!r}: a watch runs at least once in ten years (at most 3653d)")
    return interval


def describe_interval(interval: timedelta) -> str:
    """``14d``, ``7d``, ``12h``: in days at most (``--every 7d`` is shown back as ``7d``, not ``1w``), else
    the largest unit that divides the interval."""
    seconds = int(interval.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def check_webhook(url: str | None, *, allow_private: bool = False) -> str | None:
    """An http(s) URL with a host at a public address (``service.webhook_target``), or None. The message
    names the URL's scheme and host only: its path or query may carry the receiver's token."""
    if url is None or not url.strip():
        return None
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WatchError("webhook", f"webhook {shorten(url, 120)!r}: expected an http:// or https:// URL")
    try:
        check_target(url, allow_private=allow_private)
    except WebhookTargetError as error:
        raise WatchError("webhook", f"webhook {parts.scheme}://{parts.hostname}: {error}") from None
    return url


def check_question(question: str) -> str:
    if problem := not_utf8(question):
        raise WatchError("question", f"the question {problem}")
    text, problem = checked_question(question)
    if problem:
        raise WatchError("question", problem)
    return text


def folder_in_home(folder: str, home: Path) -> str:
    """A run's folder under the server's home ("watches/w-.../runs/watch-..."), for a client on another machine:
    the server's own paths name its user and layout."""
    path = Path(folder)
    return (path.relative_to(home) if path.is_relative_to(home) else Path(path.name)).as_posix()


def stamp(moment: datetime) -> str:
    """A moment as both stores keep it (UTC, to the second): compared as text, so one form everywhere."""
    return moment.astimezone(UTC).isoformat(timespec="seconds")
