"""A demo run's library source searches the demo store only, and says so: the user's own library, in the
real store, is never searched beside the synthetic evidence, and a run that asks for it hears why."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcritical.config import load_settings
from deepcritical.errors import SearchError
from deepcritical.sources.library import LibraryTool


async def test_a_demo_runs_library_source_says_it_does_not_search_your_own_library(tmp_path: Path) -> None:
    settings = load_settings(demo_mode=True, home=tmp_path)
    with pytest.raises(SearchError) as failed:
        await LibraryTool(settings).search("metformin fertility", 3)
    message = str(failed.value)
    assert "no document collection 'documents'" in message
    assert "chroma-demo" in message
    assert "never your own library: run without --demo to search it" in message
    assert not message.startswith("library: library:")  # the source is named once, by the handler


async def test_a_real_runs_library_source_says_nothing_of_demo_mode(tmp_path: Path) -> None:
    with pytest.raises(SearchError) as failed:
        await LibraryTool(load_settings(home=tmp_path)).search("metformin fertility", 3)
    assert "demo" not in str(failed.value)
