"""The suite's own layering: a test module is imported by nothing (pytest collects it; importing it from another
module runs its tests' module code twice under two names and ties one file's tests to another's), and what several
modules share (fakes, builders, server starters) lives in ``tests/helpers/``."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
HELPERS = TESTS / "helpers"
MODULES = sorted(TESTS.rglob("*.py"))


def is_test_module(name: str) -> bool:
    """``test_*`` and ``conftest`` modules, by the last part of a dotted name (``web.test_api`` included)."""
    last = name.rsplit(".", 1)[-1]
    return last.startswith("test_") or last == "conftest"


def imported_names(path: Path) -> set[str]:
    """Every module an ``import`` or ``from ... import`` names, and every name a ``from`` import takes (a module
    can be imported as ``from web import test_api``). Code inside strings (a child process's script) is not
    read: it is run, not imported by the suite."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def test_no_module_of_the_suite_imports_a_test_module() -> None:
    offending = {
        str(path.relative_to(TESTS)): sorted(name for name in imported_names(path) if is_test_module(name))
        for path in MODULES
    }
    offending = {path: names for path, names in offending.items() if names}
    assert not offending, f"move what these share to tests/helpers/: {offending}"


def test_every_shared_module_of_the_suite_is_in_helpers() -> None:
    shared = [
        str(path.relative_to(TESTS))
        for path in MODULES
        if not is_test_module(path.stem) and path.parent != HELPERS and path.name != "__init__.py"
    ]
    assert not shared, f"modules that are neither tests nor conftest outside tests/helpers/: {shared}"


def test_the_check_sees_each_way_of_importing_a_test_module(tmp_path: Path) -> None:
    module = tmp_path / "test_example.py"
    for line in ("import test_api", "from test_cli import run_cli", "from web.test_api import app_for"):
        module.write_text(line + "\n", encoding="utf-8")
        assert any(is_test_module(name) for name in imported_names(module)), line
    module.write_text("from web import test_live\nfrom conftest import OpenStore\n", encoding="utf-8")
    assert {name for name in imported_names(module) if is_test_module(name)} == {"web.test_live", "conftest"}
    module.write_text("from helpers.builders import evidence\nimport pytest\n", encoding="utf-8")
    assert not [name for name in imported_names(module) if is_test_module(name)]
