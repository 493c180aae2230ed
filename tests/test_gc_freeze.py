"""A command's coroutine runs with the imports' objects out of the cyclic collector's reach (gc.freeze),
and what the command makes afterwards is still collected."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from deepcritical.cli.common import run_async


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()  # the rest of the session collects as usual


class Node:
    def __init__(self) -> None:
        self.cycle = self


def test_run_async_freezes_what_exists_and_still_collects_what_comes_after(unfrozen: None) -> None:
    async def command() -> tuple[int, weakref.ref[Node]]:
        frozen = gc.get_freeze_count()
        garbage = Node()  # a cycle made during the command: only the collector frees it
        return frozen, weakref.ref(garbage)

    frozen, made_later = run_async(command())
    assert frozen > 1000  # the interpreter's and the imports' objects
    gc.collect()
    assert made_later() is None
