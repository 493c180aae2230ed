"""Vectors for what a server's uploads stored without them, made behind the server.

A large export uploaded to the page is stored at once, its passages pending (``evidence.pending``), so the
request does not wait for the embedding model; this gives them their vectors in the same process while it
serves, so that a team's library does not stay searchable by words alone until someone runs
``deepcritical library embed``. One task per server: an upload while it runs is taken by its next pass, and
at shutdown it stops after the part under way (what it embedded is kept; ``library embed`` takes the rest).
"""

from __future__ import annotations

import asyncio
import threading

import structlog

from deepcritical.errors import DeepCriticalError
from deepcritical.evidence.pending import embed_pending
from deepcritical.evidence.resources import Resources
from deepcritical.text import collapse_whitespace

logger = structlog.get_logger(__name__)


class BackgroundEmbedder:
    def __init__(self, resources: Resources) -> None:
        self._resources = resources  # the server's: its embedding service and store connection
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._stop = threading.Event()
        self.embedded = 0  # passages given their vectors since the server started

    def wake(self) -> None:
        """Something was stored without its vectors: embed it (now, or in the pass after the one under way)."""
        self._again = True
        if not self._stop.is_set() and (self._task is None or self._task.done()):
            self._task = asyncio.get_running_loop().create_task(self._run(), name="library-embed")

    async def wait(self) -> None:
        """Until every pass asked for so far has run (tests, and the shutdown's last part)."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def aclose(self) -> None:
        self._stop.set()
        await self.wait()

    async def _run(self) -> None:
        while self._again and not self._stop.is_set():
            self._again = False
            try:
                self.embedded += await asyncio.to_thread(self._embed_pending)
            except DeepCriticalError as error:
                # The passages stay pending and findable by their words; the next upload, or `library embed`,
                # tries again. One line: the server keeps serving.
                logger.warning("library embedding behind the server stopped", error=collapse_whitespace(str(error)))
                return

    def _embed_pending(self) -> int:
        resources = self._resources
        return embed_pending(
            resources.connection(), resources.embeddings, resources.settings.library_collection, stop=self._stop.is_set
        )
