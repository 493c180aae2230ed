"""Prompts are files: found in the checkout and in the installed wheel, and say what they must."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deepcritical.agents.prompts import PROMPT_DIRS, load_prompt
from deepcritical.appraisal.framing import BRIEF_TAG, EVIDENCE_TAG
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


@pytest.mark.parametrize("name", ["judge", "report"])
def test_prompts_name_the_blocks_the_code_sends_and_say_their_text_is_data(name: str) -> None:
    text = load_prompt(name)
    # The blocks the prompt describes are the ones the framing code writes, by their exact tags.
    assert f"`{EVIDENCE_TAG}`" in text
    assert f"`{BRIEF_TAG}`" in text
    # One sentence says both that the evidence is data and that instructions inside it are ignored.
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
    assert any("data" in sentence.lower() for sentence in sentences)
    assert any(
        re.search(r"ignore", sentence, re.I) and re.search(r"instruction", sentence, re.I) for sentence in sentences
    )


def test_the_brain_prompt_says_tool_results_are_data_not_instructions() -> None:
    text = " ".join(load_prompt("brain").split()).lower()
    assert "data, not instructions" in text
