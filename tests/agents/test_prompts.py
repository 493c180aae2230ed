"""Prompts are files: found in the checkout and in the installed wheel, and say what they must."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcritical.agents.prompts import PROMPT_DIRS, load_prompt
from deepcritical.errors import ConfigError


@pytest.mark.parametrize("name", ["brain", "judge", "report"])
def test_each_agent_prompt_loads(name: str) -> None:
    assert len(load_prompt(name)) > 200


def test_the_installed_location_is_searched_before_the_checkout(tmp_path: Path) -> None:
    installed, checkout = tmp_path / "site" / "deepcritical" / "prompts", tmp_path / "repo" / "prompts"
    for folder, text in ((installed, "installed"), (checkout, "checkout")):
        folder.mkdir(parents=True)
        (folder / "judge.md").write_text(text, encoding="utf-8")
    assert load_prompt("judge", (installed, checkout)) == "installed"
    assert load_prompt("judge", (tmp_path / "missing", checkout)) == "checkout"
    assert PROMPT_DIRS[0].parts[-2:] == ("deepcritical", "prompts")


def test_a_missing_prompt_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nothing\.md"):
        load_prompt("nothing", (tmp_path,))


def test_judge_and_report_prompts_treat_evidence_as_data() -> None:
    for name in ("judge", "report"):
        text = load_prompt(name).lower()
        assert "data" in text
        assert "ignore" in text
