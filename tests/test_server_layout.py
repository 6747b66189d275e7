"""The server's subsystems import each other only downwards.

Each package under server/ says in its docstring what it may import; this test is that rule in
code, read from the source (every import statement, also those inside functions), so that a
shortcut from the race rules to a socket, or from the store to the race core, fails here
rather than in a review."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SERVER = Path(__file__).resolve().parent.parent / "server"

#: each subsystem and the subsystems it may import (engine and protocol are always allowed)
ALLOWED: dict[str, set[str]] = {
    "common": set(),
    "store": {"common"},
    "rules": {"common"},
    "solver": {"common", "rules"},
    "league": {"common", "store", "rules", "solver"},
    "race": {"common", "store", "rules", "solver", "league"},
    "net": {"common", "store", "rules", "solver", "league", "race"},
    "config": {"common", "store", "rules", "solver", "league", "race", "net"},
    "app": {"common", "store", "rules", "solver", "league", "race", "net", "config"},
    "main": {"common", "store", "rules", "solver", "league", "race", "net", "config", "app"},
}


def subsystem(path: Path) -> str:
    rel = path.relative_to(SERVER)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def imported_subsystems(path: Path) -> set[str]:
    """The server subsystems a module names in its imports (absolute or relative)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError(f"{path}: relative import; the server imports absolutely")
            base = node.module or ""
            names = [f"{base}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["solrace", "server"] and len(parts) > 2:
                found.add(parts[2])
    return found


def modules() -> list[Path]:
    return sorted(p for p in SERVER.rglob("*.py") if p.name != "__init__.py")


def test_every_module_belongs_to_a_known_subsystem() -> None:
    unknown = [str(p.relative_to(SERVER)) for p in modules() if subsystem(p) not in ALLOWED]
    assert not unknown, f"modules outside the known subsystems: {unknown}"


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(SERVER)))
def test_imports_go_only_downwards(path: Path) -> None:
    own = subsystem(path)
    wrong = imported_subsystems(path) - ALLOWED[own] - {own}
    assert not wrong, f"server/{path.relative_to(SERVER)} ({own}) may not import {sorted(wrong)}"


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from solrace.server.net import conn\n")
    assert imported_subsystems(bad) == {"net"}


def test_each_package_says_its_job() -> None:
    for package in SERVER.iterdir():
        if package.is_dir() and (package / "__init__.py").exists():
            doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text()))
            assert doc and "May import" in doc, f"server/{package.name}/__init__.py: no job or rule"
