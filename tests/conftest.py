"""Shared fixtures. Real reference data lives beside the project in ../shared/data (never copied in)."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """The ../shared/data folder; tests that need it skip with a reason on a user's clone."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real reference data not found at {SHARED_DATA} (it sits beside the clone when CI runs .ci/run)")
    return SHARED_DATA
