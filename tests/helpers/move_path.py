"""Whether the tests run the move path compiled (setup.py's mypyc build), and whether that
build is older than the sources it was made from."""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

from solrace.compiled import PROBE, move_path_compiled
from solrace.compiled import compiled as _compiled

#: the source folders mypyc reads (it compiles against the types of what a module imports)
SOURCES = ("cli", "engine", "protocol", "server")
#: where setup.py writes the digest of the sources it compiled from
DIGEST = "build/mypyc/sources.sha256"


def compiled() -> bool:
    return move_path_compiled()


def stale() -> str | None:
    """What makes the compiled move path stale, if anything: a source changed since the
    build (setup.py's `sources_digest`, written where it built). None: not compiled, up to
    date, or built elsewhere (a wheel)."""
    module = importlib.import_module(PROBE)
    if not _compiled(module):
        return None
    root = Path(str(module.__file__)).resolve().parents[2]  # server/net/transport.*.so
    recorded = root / DIGEST
    if not recorded.exists():
        return None
    if recorded.read_text().strip() != digest(root):
        return "a source file changed since it was built"
    return None


def digest(root: Path) -> str:
    """setup.py's `sources_digest` of the checkout at root."""
    h = hashlib.sha256()
    for folder in SOURCES:
        for path in sorted((root / folder).rglob("*.py")):
            h.update(str(path.relative_to(root / folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()
