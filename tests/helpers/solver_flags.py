"""The Klondike solver's module switches, set for a block and put back after it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from solrace.engine import solve_klondike


@contextmanager
def switched(**flags: Any) -> Iterator[None]:
    """``solve_klondike``'s switches (``C_SEARCH``, ``RETURNED_DRAW``, ...) set to ``flags``
    inside the block; each back to its value before, whatever the block raises."""
    before = {name: getattr(solve_klondike, name) for name in flags}
    try:
        for name, value in flags.items():
            setattr(solve_klondike, name, value)
        yield
    finally:
        for name, value in before.items():
            setattr(solve_klondike, name, value)
