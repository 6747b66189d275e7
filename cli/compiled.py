"""Which of solrace's modules run compiled, and a switch to run them all as Python.

The move path's modules are compiled with mypyc when the install asks for it
(`SOLRACE_MYPYC=1`, setup.py, MOVE_PATH; the server image does):
each becomes a C extension beside its .py, and the import system prefers the extension.
`SOLRACE_INTERPRETED=1` in the environment makes every solrace module load from its .py
instead. That is for the white-box tests (they replace a method or a module's function to
watch the move path, which compiled code calls directly), for a benchmark's interpreted
baseline, and for a traceback with source lines. The C searches of the solvers
(`engine/_solve_*_c`) have no .py and are not affected.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

ENV = "SOLRACE_INTERPRETED"
#: a module of setup.py's MOVE_PATH: compiled exactly when the install compiled the move path
PROBE = "solrace.server.net.transport"
#: the source folders mypyc reads: the compiled modules and what they import (client/ and
#: bench/ are not imported by them)
SOURCES = ("cli", "engine", "protocol", "server")
#: where a checkout's build records the digest of the sources it compiled (setup.py)
DIGEST_FILE = "build/mypyc/sources.sha256"


class _Interpreted(importlib.abc.MetaPathFinder):
    """Finds a solrace module compiled beside its .py as the .py."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("solrace.") or path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.origin is None or not spec.origin.endswith(".so"):
            return None
        source = Path(spec.origin).with_name(fullname.rpartition(".")[2] + ".py")
        if not source.exists():
            return None  # a C module with no Python form (the solvers' searches)
        return importlib.util.spec_from_file_location(fullname, source)


def install() -> None:
    """Load solrace's modules from their .py files when the environment asks for it."""
    if os.environ.get(ENV) == "1" and not any(isinstance(f, _Interpreted) for f in sys.meta_path):
        sys.meta_path.insert(0, _Interpreted())


def compiled(module: ModuleType) -> bool:
    """Whether this module runs compiled (its file is an extension, not a .py)."""
    return str(getattr(module, "__file__", "")).endswith(".so")


def move_path_compiled() -> bool:
    """Whether this process runs the move path compiled (the server's log, the benchmarks,
    the tests and `./dev test` ask)."""
    return compiled(importlib.import_module(PROBE))


def sources_digest(root: Path) -> str:
    """A digest of every module mypyc reads in the checkout at `root`: setup.py records it
    when the move path builds, and the tests refuse a build whose sources changed since.
    Standard library only: setup.py loads this file by path, before solrace is installed."""
    h = hashlib.sha256()
    for folder in SOURCES:
        for path in sorted((root / folder).rglob("*.py")):
            h.update(str(path.relative_to(root / folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()
