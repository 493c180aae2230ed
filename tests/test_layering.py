"""The layout is the architecture: a module imports only its own layer and the layers below it, so
the foundation never reaches up into sources or stages, stages never into agents, and nothing but the
front ends reaches the run. Checked on the source text, so a new import that breaks it fails here."""

from __future__ import annotations

import ast
import graphlib
from collections.abc import Collection
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "deepcritical"
FOUNDATION = {
    "questions",
    "config",
    "errors",
    "models",
    "options",
    "outputs",
    "events",
    "redaction",
    "logs",
    "text",
    "jsonl",
    "vocabulary",
    "source_settings",
    "source_table",
    "setting_values",
}
# Lowest first; a package may import any package of a lower or the same layer.
LAYERS: list[set[str]] = [
    FOUNDATION,
    {"sources", "evidence", "documents", "reading"},
    {"appraisal"},
    {"report"},
    {"stages"},
    {"agents"},
    {"demo"},
    {"run"},
    {"evaluation"},
    {"service"},
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


def test_the_source_table_imports_nothing_but_the_standard_library() -> None:
    tree = ast.parse((SRC / "source_table.py").read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported <= {"__future__", "dataclasses", "typing", "urllib.parse"}


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


def imported_modules(path: Path, modules: Collection[str]) -> set[str]:
    """Every project module ``path`` imports, by dotted name, lazy imports inside functions included; a
    submodule imported through its package (``from deepcritical.evidence import library``) is that module."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("deepcritical"):
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                names.add(submodule if submodule in modules else node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.startswith("deepcritical."))
    return names


def module_graph() -> dict[str, set[str]]:
    """Project module -> the project modules it imports (a package's ``__init__`` counts as the package)."""

    def name_of(path: Path) -> str:
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    modules = {name_of(path): path for path in SRC.rglob("*.py")}
    return {name: imported_modules(path, modules) & set(modules) - {name} for name, path in modules.items()}


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = module_graph()
    sorter = graphlib.TopologicalSorter(graph)
    try:
        sorter.prepare()
    except graphlib.CycleError as cycle:
        pytest.fail(f"import cycle: {' -> '.join(cycle.args[1])}")


def test_the_mcp_server_imports_neither_the_command_line_nor_the_web_app() -> None:
    reached = {part for path in (SRC / "mcp").rglob("*.py") for part in imported_parts(path)}
    assert not reached & {"cli", "web"}


# The consolidation's bounds (issue 37): a module a reader can hold in mind, a function a screen can show.
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
# What is still over, by name, so the list can only shrink: a module or function that grows past a bound fails,
# and one on this list that comes under it fails too until it is struck off.
OVERSIZED_MODULES: dict[str, str] = {}
OVERSIZED_FUNCTIONS: dict[str, str] = {}


def _sizes() -> tuple[dict[str, int], dict[str, int]]:
    modules: dict[str, int] = {}
    functions: dict[str, int] = {}
    for path in sorted(SRC.rglob("*.py")):
        name = path.relative_to(SRC).as_posix()
        text = path.read_text(encoding="utf-8")
        modules[name] = len(text.splitlines())
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                functions[f"{name}:{node.name}"] = node.end_lineno - node.lineno + 1
    return modules, functions


def test_no_module_or_function_grows_past_its_bound() -> None:
    modules, functions = _sizes()
    over_modules = {name for name, lines in modules.items() if lines > MAX_MODULE_LINES}
    over_functions = {name for name, lines in functions.items() if lines > MAX_FUNCTION_LINES}
    assert over_modules - set(OVERSIZED_MODULES) == set(), f"modules over {MAX_MODULE_LINES} lines"
    assert over_functions - set(OVERSIZED_FUNCTIONS) == set(), f"functions over {MAX_FUNCTION_LINES} lines"
    assert set(OVERSIZED_MODULES) - over_modules == set(), "back under the bound: strike it off OVERSIZED_MODULES"
    assert set(OVERSIZED_FUNCTIONS) - over_functions == set(), "back under the bound: strike it off the list"
