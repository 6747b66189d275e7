"""Types of the compiled Klondike search (engine/_solve_klondike_c.c)."""

from collections.abc import Sequence

Move = tuple[int, int, int, int, int, tuple[int, int, int, int]]

def solve(
    tab: Sequence[Sequence[int]],
    down: Sequence[int],
    found: Sequence[int],
    talon: Sequence[int],
    p: int,
    rec: int,
    draw: int,
    build: bool,
    passes: int,
    budget: int,
    # DEFER_HOME, CHAIN, TWIN, POINTER_KEY, DOMINANCE, RETURNED[, RETURNED_DRAW,
    # LOOSE_SAFE_DRAW, RELAXED, WASTE_STACK]
    flags: tuple[bool, ...],
    schedule: tuple[int, float, int, float, bool],
) -> tuple[str, list[Move], int]: ...
def mt_words(seed: int, n: int) -> list[int]: ...
def table_sizes(big: int, first: int) -> tuple[int, int]: ...
def arena_step(step: int) -> int: ...
def arena_caps(need: int) -> list[int] | None: ...
