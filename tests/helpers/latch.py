"""A solver job that holds its worker until the test lets it go (a file appears).

Spawned solver workers import it by name, so it lives in a module of its own.
"""

from __future__ import annotations

import os
import time


def hold(path: str, timeout: float = 60.0) -> str:
    """Run in a solver worker: return once `path` exists (or after `timeout`)."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.005)
    return "held"
