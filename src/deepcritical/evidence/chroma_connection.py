"""Connecting to Chroma: an embedded store under the home (with sessions that make it safe for
concurrent processes: a file lock and a record of which collections each process wrote) or a server.

Everything here is synchronous; the store calls it through ``asyncio.to_thread``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import uuid
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, ClassVar

import chromadb
from chromadb.config import Settings as ChromaSettings
from filelock import FileLock, Timeout

from deepcritical.config import Settings
from deepcritical.errors import StoreError

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]+")

# Waiting longer than this for another process's store operation means that process is stuck.
LOCK_TIMEOUT_SECONDS = 120.0
LOCK_FILE = "chroma.lock"
WRITES_FILE = "chroma-writes.json"
# ``touches`` for an operation on the store as a whole (listing collections): sees every other write.
EVERY_COLLECTION = ("*",)


class Session:
    """The store as one locked operation sees it: collections by name, up to date."""

    def __init__(self, client: Any, collections: dict[str, Any]) -> None:
        self.client = client
        self._collections = collections
        self.deleted: set[str] = set()

    def delete(self, name: str) -> None:
        """Delete the collection ``name``."""
        self.client.delete_collection(name)
        self._collections.pop(name, None)
        self.deleted.add(name)

    def collection(self, name: str) -> Any:
        """The collection ``name`` (opened with ``open_collection`` earlier in this process)."""
        if name not in self._collections:
            self._collections[name] = self.client.get_collection(name, embedding_function=None)
        return self._collections[name]


class Connection(ABC):
    """A Chroma client and where it is (for messages); use it only inside ``session``. ``index_path`` is
    the run index's file (``run_index``)."""

    where: str
    index_path: Path

    @abstractmethod
    def session(self, *, touches: Collection[str], writes: bool) -> AbstractContextManager[Session]:
        """A context in which the collections named in ``touches`` may be used (and written, when
        ``writes``)."""

    @property
    @abstractmethod
    def max_batch(self) -> int:
        """The most records one write may carry."""

    @abstractmethod
    def close(self) -> None:
        """Release the client; closing twice is harmless."""

    def disk_bytes(self) -> int | None:
        """The store's size on disk, when it is on this machine."""
        return None


class ServerConnection(Connection):
    """A Chroma server: it serialises writers itself, so a session is just the client."""

    def __init__(self, client: Any, where: str, index_path: Path) -> None:
        self.where = where
        self.index_path = index_path
        self._client = client
        self._collections: dict[str, Any] = {}
        self._closed = False

    @contextlib.contextmanager
    def session(self, *, touches: Collection[str], writes: bool) -> Iterator[Session]:
        yield Session(self._client, self._collections)

    @property
    def max_batch(self) -> int:
        return int(self._client.get_max_batch_size())

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._client.close()


class EmbeddedStore:
    """The embedded store of one directory, as this process holds it.

    Chroma's embedded client is not safe across processes: each keeps collection indexes in memory and
    does not see what another process wrote, so concurrent runs on one home failed ("Error finding id").
    So every operation holds a file lock beside the store (held for that operation only), and a small
    file under the same lock records which process wrote each collection last. An operation that
    touches a collection another process wrote since this one last looked first reopens the client, so
    it reads what is on disk. A run alone never reopens; concurrent runs reopen only when they share a
    collection (the library).

    Chroma keeps one client per directory per process, so this is shared the same way: every store
    opened on the directory in this process uses it, and it closes with the last of them.
    """

    _open: ClassVar[dict[Path, EmbeddedStore]] = {}
    _open_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = f"the evidence store directory {path}"
        self._lock = FileLock(path.parent / LOCK_FILE, timeout=LOCK_TIMEOUT_SECONDS)
        self._writes_file = path.parent / WRITES_FILE
        self._token = uuid.uuid4().hex  # this process's client, in the writes file
        self._client: Any = None
        self._collections: dict[str, Any] = {}
        self._seen: dict[str, list[Any]] = {}
        self._users = 0

    @classmethod
    def acquire(cls, path: Path) -> EmbeddedStore:
        with cls._open_lock:
            store = cls._open.setdefault(path, cls(path))
            store._users += 1
            return store

    def release(self) -> None:
        with self._open_lock:
            self._users -= 1
            if self._users > 0:
                return
            self._open.pop(self.path, None)
        with self._lock:
            self._close_client()

    @contextlib.contextmanager
    def session(self, *, touches: Collection[str], writes: bool) -> Iterator[Session]:
        try:
            self._lock.acquire()
        except Timeout as error:
            raise StoreError(
                f"{self.where} stayed locked by another deepcritical process for {LOCK_TIMEOUT_SECONDS:g} s; "
                f"if none is running, delete {self._lock.lock_file}"
            ) from error
        try:
            written = self._read_writes()
            if self._client is None or self._stale(written, touches):
                self._reopen(written)
            session = Session(self._client, self._collections)
            try:
                yield session
            finally:
                if writes:  # even a write that failed half-way may have changed the collection
                    self._record_writes(written, touches, session.deleted)
        finally:
            self._lock.release()

    def _record_writes(self, written: dict[str, list[Any]], touches: Collection[str], deleted: set[str]) -> None:
        for name in touches:
            count = written.get(name, [None, 0])[1]
            written[name] = [self._token, (count if isinstance(count, int) else 0) + 1]
            self._seen[name] = written[name]
        for name in deleted:  # a deleted collection needs no entry: the file stays as small as the store
            written.pop(name, None)
            self._seen.pop(name, None)
        if deleted:  # but whoever lists the collections must see that the list changed
            self._record_writes(written, EVERY_COLLECTION, set())
            return
        self._write_writes(written)

    def _stale(self, written: dict[str, list[Any]], touches: Collection[str]) -> bool:
        names = written if "*" in touches else touches
        return any(
            name in written and written[name] != self._seen.get(name) and written[name][0] != self._token
            for name in names
        )

    def _reopen(self, written: dict[str, list[Any]]) -> None:
        self._close_client()
        self._client = chromadb.PersistentClient(path=str(self.path), settings=_chroma_settings())
        self._seen = {name: list(entry) for name, entry in written.items()}

    def _close_client(self) -> None:
        if self._client is not None:
            self._client.close()
        self._client = None
        self._collections = {}

    def _read_writes(self) -> dict[str, list[Any]]:
        try:
            data = json.loads(self._writes_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):  # damaged: treat everything as written by someone else
            return {}
        return data if isinstance(data, dict) else {}

    def _write_writes(self, written: dict[str, list[Any]]) -> None:
        partial = self._writes_file.with_name(f"{self._writes_file.name}.{self._token}")
        partial.write_text(json.dumps(written), encoding="utf-8")
        os.replace(partial, self._writes_file)

    def max_batch(self) -> int:
        with self.session(touches=(), writes=False) as session:
            return int(session.client.get_max_batch_size())


class EmbeddedConnection(Connection):
    """One store's use of the directory's ``EmbeddedStore``."""

    def __init__(self, store: EmbeddedStore) -> None:
        self.where = store.where
        self.index_path = store.path.parent / f"{store.path.name}-runs.sqlite3"
        self._store = store
        self._closed = False

    def session(self, *, touches: Collection[str], writes: bool) -> AbstractContextManager[Session]:
        return self._store.session(touches=touches, writes=writes)

    @property
    def max_batch(self) -> int:
        return self._store.max_batch()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._store.release()

    def disk_bytes(self) -> int | None:
        return sum(path.stat().st_size for path in self._store.path.rglob("*") if path.is_file())


def _chroma_settings() -> ChromaSettings:
    # No telemetry: DeepCritical makes no call it does not need. A new object every time: the clients
    # write their own choices (server or embedded) into the settings they are given.
    return ChromaSettings(anonymized_telemetry=False)


def connect(settings: Settings) -> Connection:
    """A Chroma client: a server when ``CHROMA_HOST`` is set, else an embedded store under the home."""
    if settings.chroma_host:
        where = f"the Chroma server at {settings.chroma_host}:{settings.chroma_port}"
        try:
            client = chromadb.HttpClient(
                host=settings.chroma_host, port=settings.chroma_port, settings=_chroma_settings()
            )
        except Exception as error:  # connection refused, DNS, TLS, HTTP errors: all "unreachable"
            raise StoreError(
                f"cannot reach {where}: {error}. Fix: start it (`chroma run --host {settings.chroma_host} "
                f"--port {settings.chroma_port} --path DIR`) or unset CHROMA_HOST to use the embedded store "
                "under DEEPCRITICAL_HOME."
            ) from error
        # The run index of a server's runs started from this home (``run_index``).
        server = f"{_UNSAFE.sub('-', settings.chroma_host)}-{settings.chroma_port}"
        return ServerConnection(client, where, settings.home / f"chroma-server-{server}-runs.sqlite3")
    path = store_directory(settings)
    where = f"the evidence store directory {path}"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StoreError(
            f"cannot create {where}: {error.strerror or error}. Fix: set DEEPCRITICAL_HOME to a writable directory."
        ) from error
    if not os.access(path, os.W_OK | os.X_OK):
        raise StoreError(f"{where} is not writable. Fix: set DEEPCRITICAL_HOME to a writable directory.")
    store = EmbeddedStore.acquire(path.resolve())
    connection = EmbeddedConnection(store)
    try:
        with connection.session(touches=(), writes=False):
            pass
    except StoreError:
        connection.close()
        raise
    except Exception as error:  # sqlite, Rust bindings and settings errors all mean "cannot open"
        connection.close()
        raise StoreError(
            f"cannot open {where}: {error}. Fix: check the directory, or set DEEPCRITICAL_HOME elsewhere."
        ) from error
    return connection


def store_directory(settings: Settings) -> Path:
    """Where the embedded store lives. A demo run has a store of its own beside the user's, so synthetic
    evidence never reaches the user's library and the user's evidence never reaches a demo report."""
    return settings.home / ("chroma-demo" if settings.demo_mode else "chroma")
