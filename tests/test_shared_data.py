"""The real reference data beside the clone: a test that needs it skips in a user's clone, and fails in CI
(``DEEPCRITICAL_REQUIRE_DATA=1``, set by .ci/run), so a pinned figure cannot pass by being skipped."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

REQUIRE_DATA = "DEEPCRITICAL_REQUIRE_DATA"


def test_missing_data_is_a_skip_in_a_users_clone(
    monkeypatch: pytest.MonkeyPatch, shared_data: Callable[[str], Path]
) -> None:
    monkeypatch.delenv(REQUIRE_DATA, raising=False)
    with pytest.raises(pytest.skip.Exception, match="no-such-folder"):
        shared_data("no-such-folder")


def test_missing_data_is_a_failure_when_ci_requires_it(
    monkeypatch: pytest.MonkeyPatch, shared_data: Callable[[str], Path]
) -> None:
    monkeypatch.setenv(REQUIRE_DATA, "1")
    with pytest.raises(pytest.fail.Exception, match="DEEPCRITICAL_REQUIRE_DATA=1 requires it"):
        shared_data("no-such-folder")


def test_ci_requires_the_data_for_its_test_step() -> None:
    script = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text(encoding="utf-8")
    assert f"{REQUIRE_DATA}=1 .venv/bin/pytest" in script
