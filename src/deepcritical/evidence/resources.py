"""What a process builds once, at its entry point (a command, the API's start, the MCP server's, a worker),
and passes down: the redactor of its secrets, the embedding service (one model load, one vector cache) and
the connection to the evidence store, opened on first use and closed when the process is done with it.

Nothing of one run lives here: each run opens its own collection (``EvidenceStore.open``) and its own HTTP
client, so no run sees another's state."""

from __future__ import annotations

import threading
from collections.abc import Callable

from deepcritical.config import Settings
from deepcritical.evidence import chroma
from deepcritical.evidence.embeddings import EmbeddingService
from deepcritical.redaction import Redactor


class Resources:
    """The process's redactor, embedding service and store connection, built from its settings (each one given
    is used as it is: a test's stand-in model, a connection already open, which ``close`` then closes).
    ``share_connection=False`` builds them for one run or one search: its store and library source each open
    and close a connection of their own (``connect`` is None), so nothing is left open when it ends."""

    def __init__(
        self,
        settings: Settings,
        *,
        redactor: Redactor | None = None,
        embeddings: EmbeddingService | None = None,
        connection: chroma.Connection | None = None,
        share_connection: bool = True,
    ) -> None:
        self.settings = settings
        self._shares = share_connection or connection is not None
        self.redactor = redactor or Redactor.for_settings(settings)
        self.embeddings = embeddings or EmbeddingService.for_settings(settings)
        self._connection = connection
        self._lock = threading.Lock()

    def connection(self) -> chroma.Connection:
        """The store connection, opened on the first call (synchronous, so called in a thread by async code).
        Shared by every user in the process and closed only by ``close``: Chroma's embedded clients share one
        System per directory, stopped when the last client closes, so runs opening and closing their own
        clients at the same moment could break each other. Raises StoreError saying what to fix."""
        with self._lock:
            if self._connection is None:
                self._connection = chroma.connect(self.settings)
            return self._connection

    @property
    def connect(self) -> Callable[[], chroma.Connection] | None:
        """How a run's store and library source reach the store: the shared ``connection``, or None when each
        opens and closes its own."""
        return self.connection if self._shares else None

    def close(self) -> None:
        """Close the store connection, if it was opened; closing twice is harmless."""
        with self._lock:
            connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def __enter__(self) -> Resources:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
