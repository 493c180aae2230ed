"""How the evidence store calls Chroma: off the event loop, in one session of the store (for the embedded
store, one hold of its cross-process lock), with every failure a StoreError naming the backend, and a full
disk a DiskFullError (a run stops where it is and keeps its checkpoint, rather than failing)."""

from __future__ import annotations

import asyncio
import errno
from collections.abc import Callable
from typing import TypeVar

from deepcritical.errors import DeepCriticalError, DiskFullError, StoreError
from deepcritical.evidence import chroma

T = TypeVar("T")

# How a full disk reads once Chroma has wrapped it: SQLite's words, the C library's, and Rust's (HNSW segments).
_DISK_FULL_WORDS = ("database or disk is full", "no space left on device", "disk quota exceeded", "storagefull")


def disk_full(error: BaseException) -> bool:
    """Whether ``error`` (or what it was raised from) says the disk or the quota is full."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if any(words in str(current).lower() for words in _DISK_FULL_WORDS):
            return True
        current = current.__cause__ or current.__context__
    return False


async def call_in_session(
    connection: chroma.Connection,
    operation: str,
    work: Callable[[chroma.Session], T],
    *,
    touches: tuple[str, ...],
    writes: bool = False,
) -> T:
    """``work`` in one session of ``connection``, off the event loop; ``operation`` names it in a failure."""

    def in_session() -> T:
        with connection.session(touches=touches, writes=writes) as session:
            return work(session)

    try:
        return await asyncio.to_thread(in_session)
    except DeepCriticalError:
        raise
    except Exception as error:  # Chroma raises ValueError, HTTP and Rust errors: all are store failures
        if disk_full(error):
            raise DiskFullError(f"{operation} failed in {connection.where}: no space left on its disk") from error
        raise StoreError(f"{operation} failed in {connection.where}: {error}") from error
