"""Agent prompts live as Markdown files in the top-level ``prompts/`` folder, which the wheel ships as
``deepcritical/prompts``. The loader looks in the installed location first, then in the checkout."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from deepcritical.errors import ConfigError

PACKAGE_DIR = Path(__file__).resolve().parents[1]
PROMPT_DIRS: tuple[Path, ...] = (PACKAGE_DIR / "prompts", PACKAGE_DIR.parents[1] / "prompts")


def load_prompt(name: str, search_path: Sequence[Path] = PROMPT_DIRS) -> str:
    """The text of ``<name>.md`` from the first folder of ``search_path`` that has it."""
    for folder in search_path:
        path = folder / f"{name}.md"
        if path.is_file():
            text = path.read_text(encoding="utf-8").strip()
            if text:
                return text
    searched = ", ".join(str(folder) for folder in search_path)
    raise ConfigError(f"prompt {name!r} not found (looked for {name}.md in: {searched}); reinstall deepcritical")
