"""Watches of a team deployment, kept where its job queue is: the Redis of ``DEEPCRITICAL_QUEUE_URL``.

Every server and worker of a team reads and changes the same watches, and the queue's scheduling
(``service.watch_schedule``) compares a watch's next due time with the due time a job was made for. SQLite
in the shared home would need a file lock every machine honours, which network file systems do not give
(SQLite's own advice: not over NFS); Redis is already the one thing every process of a team reaches, and
its scripts change a watch's next due time and its history in one step.

Layout (``deepcritical:watches:*``): ``version`` (the layout's version; a newer one is refused rather than
misread), ``all`` (id -> the watch as JSON, without its next due time), ``due`` (id -> next due time, the
form ``watches.stamp`` writes, compared as text), ``runs:<id>`` (run time -> the run as JSON)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from redis import Redis
from redis.exceptions import RedisError

from deepcritical.config import Settings
from deepcritical.errors import ConfigError
from deepcritical.service.queue import unreachable
from deepcritical.service.watches import (
    DAMAGE,
    Watch,
    WatchDamagedError,
    WatchNotFoundError,
    WatchRun,
    WatchStorage,
    stamp,
)
from deepcritical.service.watches_sqlite import WatchStore

PREFIX = "deepcritical:watches:"
LAYOUT_VERSION = 1

# A run joins the history and the watch's next due time moves, together, only while the watch exists (a
# watch removed during its run is not brought back by it).
_RECORD = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
return 1
"""
# Compare-and-set of a next due time: moved only if it is still the one the caller read.
_CLAIM = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
"""


class RedisWatchStore(WatchStorage):
    """The ``WatchStorage`` of a team: one Redis, shared by every server and worker."""

    def __init__(self, url: str, home: Path) -> None:
        self.home = home
        self.redis: Redis = Redis.from_url(url, decode_responses=True)
        self._all, self._due = PREFIX + "all", PREFIX + "due"
        self._record = self.redis.register_script(_RECORD)
        self._claim = self.redis.register_script(_CLAIM)
        try:
            self.redis.set(PREFIX + "version", LAYOUT_VERSION, nx=True)
            found = int(cast(str, self.redis.get(PREFIX + "version")))
        except (RedisError, OSError) as error:
            raise unreachable(url, error) from error
        if found > LAYOUT_VERSION:
            raise ConfigError(
                f"the team's watches in Redis are of version {found}, newer than this DeepCritical knows "
                f"({LAYOUT_VERSION})"
            )

    def close(self) -> None:
        self.redis.close()

    def _runs(self, watch_id: str) -> str:
        return f"{PREFIX}runs:{watch_id}"

    def folder(self, watch_id: str) -> Path:
        """Where a watch's runs and feed are written: under the team's shared home, as its runs are."""
        return self.home / "watches" / watch_id

    def _insert(self, watch: Watch) -> None:
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(self._all, watch.id, watch.model_dump_json(exclude={"next_due", "last_run"}))
            pipe.hset(self._due, watch.id, stamp(watch.next_due))
            pipe.execute()

    def _watch(self, watch_id: str, record: str | None, due: str | None, runs: dict[str, str]) -> Watch:
        if record is None or due is None:
            raise WatchNotFoundError(watch_id)
        try:
            last = WatchRun.model_validate_json(runs[max(runs)]) if runs else None
            return Watch.model_validate({**json.loads(record), "next_due": due, "last_run": last})
        except DAMAGE as error:
            raise WatchDamagedError(watch_id, str(error)) from None

    def get(self, watch_id: str) -> Watch:
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.hget(self._all, watch_id)
            pipe.hget(self._due, watch_id)
            pipe.hgetall(self._runs(watch_id))
            record, due, runs = pipe.execute()
        return self._watch(watch_id, record, due, runs)

    def watches(self) -> list[Watch]:
        found = self.readable(cast(list[str], self.redis.hkeys(self._all)))
        return sorted(found, key=lambda watch: (watch.created, watch.id))

    def due(self, now: datetime) -> list[Watch]:
        limit = stamp(now)
        dues = cast(dict[str, str], self.redis.hgetall(self._due))
        return self.readable(
            [watch_id for watch_id, due in sorted(dues.items(), key=lambda item: (item[1], item[0])) if due <= limit]
        )

    def history(self, watch_id: str) -> list[WatchRun]:
        self.get(watch_id)
        runs = cast(dict[str, str], self.redis.hgetall(self._runs(watch_id)))
        try:
            return [WatchRun.model_validate_json(runs[key]) for key in sorted(runs)]
        except DAMAGE as error:
            raise WatchDamagedError(watch_id, f"a run of it: {error}") from None

    def record_run(self, watch_id: str, run: WatchRun, next_due: datetime) -> None:
        args: list[Any] = [watch_id, stamp(run.run_at), run.model_dump_json(), stamp(next_due)]
        if not self._record(keys=[self._all, self._due, self._runs(watch_id)], args=args):
            raise WatchNotFoundError(watch_id)

    def claim(self, watch: Watch, now: datetime) -> bool:
        args = [watch.id, stamp(watch.next_due), stamp(now + watch.interval)]
        return bool(self._claim(keys=[self._due], args=args))

    def remove(self, watch_id: str) -> None:
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.hdel(self._all, watch_id)
            pipe.hdel(self._due, watch_id)
            pipe.delete(self._runs(watch_id))
            removed, _, _ = pipe.execute()
        if not removed:
            raise WatchNotFoundError(watch_id)


def open_watches(settings: Settings) -> WatchStorage:
    """The watches of this deployment: the team's Redis when ``DEEPCRITICAL_QUEUE_URL`` is set, else
    ``$DEEPCRITICAL_HOME/watches.sqlite``."""
    if settings.queue_url is not None:
        return RedisWatchStore(settings.queue_url.get_secret_value(), settings.home)
    return WatchStore.at_home(settings.home)
