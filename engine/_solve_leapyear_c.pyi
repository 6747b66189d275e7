"""Types of the compiled Leap Year search (engine/_solve_leapyear_c.c)."""

from collections.abc import Sequence

def solve(
    tab: Sequence[Sequence[int]],
    stock: Sequence[int],
    tops: Sequence[int],
    budget: int,
    first_run: int,
    grow_permille: int,
) -> tuple[str, list[int], int, int]: ...  # verdict, moves (-1: deal), positions, fewest left
def beam(
    tab: Sequence[Sequence[int]],
    stock: Sequence[int],
    tops: Sequence[int],
    width: int,
    inversions: int,
    future: int,
    held: int,
    phase_cap: int,
    budget: int,
) -> tuple[str, list[int], int]: ...  # verdict ("lost": no position left out), moves, positions
