"""A run as the run manager holds it (``RunEntry``) and the refusals a manager gives. Kept apart so that the
manager module holds the manager's logic alone."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Literal

from deepcritical.errors import DeepCriticalError
from deepcritical.run.request import RunPlan
from deepcritical.run.store import ENDED, RunInfo, RunStore

STOPPED = {
    "cancelled": "cancelled by the user",
    "interrupted": "the server stopped before the run ended",
}


class QueueFullError(DeepCriticalError):
    """Too many runs are waiting already."""


class RunNotFoundError(DeepCriticalError):
    """No run has this id."""


class RunEndedError(DeepCriticalError):
    """The run has ended already, so it cannot be cancelled."""


@dataclass
class RunEntry:
    info: RunInfo
    store: RunStore
    signal: asyncio.Event = field(default_factory=asyncio.Event)  # set, and replaced, at every change
    task: asyncio.Task[None] | None = None
    stop_as: Literal["cancelled", "interrupted"] = "cancelled"
    position: int | None = None
    resume: bool = False  # the next start continues from the run's checkpoint
    foreign: bool = False  # queued or running in another live process (its lease says so): read, never run
    plan: RunPlan | None = None  # None for a run of an earlier start, until it is resumed

    @property
    def ended(self) -> bool:
        return self.info.status in ENDED

    def notify(self) -> None:
        self.signal.set()
        self.signal = asyncio.Event()
