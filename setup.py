"""The build's compiled parts. Everything else is in pyproject.toml.

Both kinds are optional: an install with no C compiler (or no mypy) still works, in plain
Python, only slower.

* The solvers' searches in C (engine/_solve_klondike_c.c, engine/_solve_leapyear_c.c): the
  engine's solvers use them when they built (`C_SEARCH`).
* The move path compiled with mypyc (MOVE_PATH): the modules a move goes through on the
  server, from the socket's bytes to the ack and the room's frames. They are plain typed
  Python; mypyc turns each into a C extension that the import system prefers to the .py
  beside it. docs/ARCHITECTURE.md, "Compiled modules", says what that asks of their code.
  Asked for with `SOLRACE_MYPYC=1` at install time: the server image does
  (server/deploy/Dockerfile); the development install (`./dev`) does not unless asked, so
  an edit needs no two-minute build. CI runs the whole suite on both. One fresh-clone CI run
  of the compiled build (2026-12-05) lost a pytest worker to a segmentation fault; the
  likely cause, found since: mypyc keeps a handled exception in the thread's state, and the
  move path awaited in its handlers (docs/ARCHITECTURE.md, "Compiled modules": no await
  while an exception is handled).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tomllib
from pathlib import Path
from types import ModuleType

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent

#: the modules mypyc compiles, by import name (the move path: bench/load.py's paced profile)
MOVE_PATH = [
    "solrace.engine.game",
    "solrace.engine.golf",
    "solrace.engine.klondike",
    "solrace.engine.leapyear",
    "solrace.engine.tabbycat",
    "solrace.protocol.codes",
    "solrace.protocol.messages",
    "solrace.protocol.names",
    "solrace.server.common.room_locks",
    "solrace.server.net.clocks",
    "solrace.server.net.conn",
    "solrace.server.net.fanout",
    "solrace.server.net.handlers_room",
    "solrace.server.net.transport",
    "solrace.server.net.ws_server",
    "solrace.server.race.service",
    "solrace.server.rules.projection",
    "solrace.server.rules.room",
    "solrace.server.store.batch",
]
#: the mypyc group's shared library (every compiled module's code; each module's own
#: extension is a small shim that loads it), inside the package
GROUP = "solrace.move_path"


def _compiled_module() -> ModuleType:
    """cli/compiled.py (solrace.compiled), loaded by path: the package is not installed
    while it builds. Its SOURCES and `sources_digest` are the tests' too."""
    spec = importlib.util.spec_from_file_location("_solrace_compiled", ROOT / "cli" / "compiled.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_COMPILED = _compiled_module()
#: the source folders mypyc reads (solrace.compiled.SOURCES)
SOURCES: tuple[str, ...] = _COMPILED.SOURCES
#: the digest of the sources the move path was last built from (tests/helpers/move_path.py)
DIGEST = ROOT / _COMPILED.DIGEST_FILE

C_SEARCHES = [
    Extension("solrace.engine._solve_klondike_c", ["engine/_solve_klondike_c.c"], optional=True),
    Extension("solrace.engine._solve_leapyear_c", ["engine/_solve_leapyear_c.c"], optional=True),
]


def package_dirs() -> dict[str, str]:
    """pyproject.toml's package-dir: import name -> source folder."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        dirs: dict[str, str] = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    return dirs


def stage() -> Path:
    """A tree whose folders are named as the packages are imported (solrace/server/...):
    mypyc names a module by its path, and the source folders (cli/, server/, ...) are mapped
    to packages by package-dir. Copies, not links: a module is named by its own path."""
    tree = ROOT / "build" / "mypyc" / "src"
    shutil.rmtree(tree, ignore_errors=True)
    for package, folder in package_dirs().items():
        if folder not in SOURCES:
            continue
        shutil.copytree(
            ROOT / folder,
            tree / package.replace(".", "/"),
            ignore=shutil.ignore_patterns("__pycache__", "node_modules", "*.so", "*.c"),
            dirs_exist_ok=True,
        )
    return tree


def source_of(tree: Path, module: str) -> Path:
    return (tree / module.replace(".", "/")).with_suffix(".py")


def remove_built_move_path() -> None:
    """An editable install builds in place: a move path built before, and not now, would
    still be imported instead of the .py files. Every extension with a .py of its name
    beside it is one (a module an earlier MOVE_PATH listed included), and the library."""
    for folder in SOURCES:
        for built in (ROOT / folder).rglob("*.so"):
            name = built.name.split(".", 1)[0]
            if built.with_name(name + ".py").exists() or name.endswith("__mypyc"):
                built.unlink()


def move_path_extensions() -> list[Extension]:
    """The move path's extensions, or none (with the reason on stderr) when mypyc is not
    installed or refuses a module."""
    if os.environ.get("SOLRACE_MYPYC") != "1":
        remove_built_move_path()  # asked for only: see the module's docstring
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("solrace: mypyc is not installed; the move path stays interpreted", file=sys.stderr)
        remove_built_move_path()
        return []
    tree = stage()
    # Third-party packages are not installed where pip builds (an isolated environment):
    # their types are Any in every build, wherever it runs, so compiled code never trusts
    # a library's annotations with a runtime check. No config file: the project's (strict
    # checks, for `./dev lint`) is not the compiler's business.
    flags = ["--no-site-packages", "--ignore-missing-imports", "--config-file="]
    cwd = os.getcwd()
    os.chdir(tree)  # mypyc finds the package roots from the files' folders
    try:
        extensions: list[Extension] = mypycify(
            [*flags, *(str(source_of(tree, m).relative_to(tree)) for m in MOVE_PATH)],
            group_name=GROUP,
            target_dir=str(ROOT / "build" / "mypyc" / "c"),
        )
    except BaseException as exc:  # mypy's errors exit (SystemExit)
        print(f"solrace: mypyc failed ({exc!r}); the move path stays interpreted", file=sys.stderr)
        remove_built_move_path()
        return []
    finally:
        os.chdir(cwd)
    for ext in extensions:
        ext.optional = True
    return extensions


class BuildExt(build_ext):
    """A module's shim is useless (its import fails) without the group's library: when the
    library did not build, the shims are dropped, and the .py files run instead."""

    def build_extensions(self) -> None:
        super().build_extensions()
        library = f"{GROUP}__mypyc"
        names = {e.name for e in self.extensions}
        if library in names and os.path.exists(self.get_ext_fullpath(library)):
            DIGEST.write_text(_COMPILED.sources_digest(ROOT) + "\n")
        elif library in names:
            print("solrace: the move path's library did not build; it stays interpreted")
            remove_built_move_path()
            for ext in list(self.extensions):
                if ext.name in MOVE_PATH:
                    path = self.get_ext_fullpath(ext.name)
                    if os.path.exists(path):
                        os.remove(path)
                    self.extensions.remove(ext)


setup(ext_modules=[*C_SEARCHES, *move_path_extensions()], cmdclass={"build_ext": BuildExt})
