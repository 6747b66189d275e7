"""The move path runs compiled exactly when the install asked for it (SOLRACE_MYPYC=1,
setup.py) and could: a module mypyc starts to refuse makes the build fall back to the .py
files quietly, so this says it loudly."""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import sys

import pytest
from helpers import move_path


def test_the_move_path_is_compiled_exactly_when_asked_and_possible() -> None:
    """Compiled only with SOLRACE_MYPYC=1 at install time (opt-in, setup.py), and then
    always where mypyc and a C compiler are."""
    if os.environ.get("SOLRACE_INTERPRETED") == "1":
        pytest.skip("SOLRACE_INTERPRETED=1 loads the .py files on purpose")
    can = importlib.util.find_spec("mypyc") is not None and bool(
        shutil.which("cc") or shutil.which("gcc")
    )
    asked = os.environ.get("SOLRACE_MYPYC") == "1"
    assert move_path.compiled() == (asked and can), (
        f"SOLRACE_MYPYC={'1' if asked else 'unset'}, mypyc and a C compiler "
        f"{'present' if can else 'missing'}: `./dev setup` says why the build differs "
        "(mypyc's errors, or the library's build; setup.py's MOVE_PATH)"
    )


def test_the_interpreted_switch_loads_every_module_from_its_source() -> None:
    """SOLRACE_INTERPRETED=1 in a fresh interpreter: the move path's modules load from their
    .py files, and the solvers' C searches (no .py) still load."""
    import subprocess

    code = (
        "import solrace.server.net.transport as t, solrace.engine.klondike as k, "
        "solrace.engine.solve_klondike as s; "
        "print(t.__file__.endswith('.py'), k.__file__.endswith('.py'), s.C_SEARCH)"
    )
    env = {**os.environ, "SOLRACE_INTERPRETED": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out[:2] == ["True", "True"], out
    assert out[2] == str(importlib.import_module("solrace.engine.solve_klondike").C_SEARCH)
