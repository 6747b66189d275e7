"""Whether the tests run the move path compiled (setup.py's mypyc build), and whether that
build is older than the sources it was made from."""

from __future__ import annotations

import importlib
from pathlib import Path

from solrace.compiled import DIGEST_FILE, PROBE, move_path_compiled, sources_digest
from solrace.compiled import compiled as _compiled


def compiled() -> bool:
    return move_path_compiled()


def stale() -> str | None:
    """What makes the compiled move path stale, if anything: a source changed since the
    build (the digest setup.py recorded where it built, solrace.compiled.sources_digest).
    None: not compiled, up to date, or built elsewhere (a wheel)."""
    module = importlib.import_module(PROBE)
    if not _compiled(module):
        return None
    root = Path(str(module.__file__)).resolve().parents[2]  # server/net/transport.*.so
    recorded = root / DIGEST_FILE
    if not recorded.exists():
        return None
    if recorded.read_text().strip() != sources_digest(root):
        return "a source file changed since it was built"
    return None
