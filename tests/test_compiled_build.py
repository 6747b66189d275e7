"""The move path runs compiled wherever the build can compile it (setup.py): a module mypyc
starts to refuse makes the build fall back to the .py files quietly, so this says it loudly."""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import sys

import pytest
from helpers import move_path


def test_the_move_path_is_compiled_where_it_can_be() -> None:
    if os.environ.get("SOLRACE_INTERPRETED") == "1" or os.environ.get("SOLRACE_NO_MYPYC") == "1":
        pytest.skip("the move path is interpreted on purpose here")
    if importlib.util.find_spec("mypyc") is None or not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no mypyc or no C compiler: the build keeps the .py files")
    assert move_path.compiled(), (
        "the move path was not compiled: `./dev setup` says why (mypyc's errors, or the "
        "library's build), and setup.py's MOVE_PATH lists what it compiles"
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
