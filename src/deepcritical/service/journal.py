"""Moved to ``deepcritical.run.store`` (``RunStore``, the one writer of a run folder); these names stay
importable from here for code written against the service's journal."""

from __future__ import annotations

from deepcritical.run.store import (
    ENDED,
    EVENTS_FILE,
    LEASE_BEAT_SECONDS,
    LEASE_FILE,
    LEASE_STALE_SECONDS,
    RUN_ID,
    STATUS_FILE,
    Lease,
    RunEnded,
    RunInfo,
    RunJournal,
    RunQueued,
    RunStatus,
    RunStore,
    RunSummary,
    StoredEvent,
    new_owner_token,
    now_text,
    process_alive,
)

__all__ = [
    "ENDED",
    "EVENTS_FILE",
    "LEASE_BEAT_SECONDS",
    "LEASE_FILE",
    "LEASE_STALE_SECONDS",
    "RUN_ID",
    "STATUS_FILE",
    "Lease",
    "RunEnded",
    "RunInfo",
    "RunJournal",
    "RunQueued",
    "RunStatus",
    "RunStore",
    "RunSummary",
    "StoredEvent",
    "new_owner_token",
    "now_text",
    "process_alive",
]
