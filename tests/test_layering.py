"""The layout is the architecture: a module imports only its own layer and the layers below it, so
the foundation never reaches up into sources or stages, stages never into agents, and nothing but the
front ends reaches the run. Checked on the source text, so a new import that breaks it fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "deepcritical"
FOUNDATION = {"config", "errors", "models", "outputs", "events", "redaction", "logs", "text"}
# Lowest first; a package may import any package of a lower or the same layer.
LAYERS: list[set[str]] = [
    FOUNDATION,
    {"sources", "evidence", "documents"},
    {"stages"},
    {"agents"},
    {"demo"},
    {"run"},
    {"cli", "web", "mcp"},
]


def layer_of(part: str) -> int:
    return next(index for index, names in enumerate(LAYERS) if part in names)


def imported_parts(path: Path) -> set[str]:
    """The first component under ``deepcritical`` of every project module ``path`` imports."""
    parts: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("deepcritical."):
            parts.add(node.module.split(".")[1])
        elif isinstance(node, ast.ImportFrom) and node.module == "deepcritical":
            parts.update(alias.name for alias in node.names if alias.name != "__version__")
        elif isinstance(node, ast.Import):
            parts.update(a.name.split(".")[1] for a in node.names if a.name.startswith("deepcritical."))
    return parts


MODULES = sorted(p for p in SRC.rglob("*.py") if (p.name != "__main__.py" and p.parent != SRC) or p.stem in FOUNDATION)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_imports_a_layer_above_its_own(path: Path) -> None:
    relative = path.relative_to(SRC)
    own = relative.parts[0] if len(relative.parts) > 1 else relative.stem
    above = {part for part in imported_parts(path) if layer_of(part) > layer_of(own)}
    assert not above, f"{relative} imports {sorted(above)}, a layer above {own}"


def test_every_package_and_top_level_module_has_a_layer() -> None:
    names = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    names |= {p.stem for p in SRC.glob("*.py") if p.stem not in ("__init__", "__main__")}
    unplaced = {name for name in names if not any(name in layer for layer in LAYERS)}
    assert not unplaced


def test_nothing_in_the_source_imports_httpx_but_httpx2() -> None:
    offenders = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if (isinstance(node, ast.Import) and any(a.name == "httpx" or a.name.startswith("httpx.") for a in node.names))
        or (isinstance(node, ast.ImportFrom) and node.module is not None and node.module.split(".")[0] == "httpx")
    ]
    assert offenders == []
