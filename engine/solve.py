"""solve(): is a position winnable, and how.

::

    from solrace.engine import solve
    r = solve(game, budget=2_000_000)   # any engine game object, at any position
    r.verdict     # "won" | "lost" | "unknown" (the budget of expanded positions ran out)
    r.moves       # canonical move texts from this position to a win ("won" only, else [])
    r.nodes       # positions expanded

    solve_deal("puttputt", seed, options=None, budget=...)   # a deal, by plain arguments
    solve_text(position_text, budget=...)                   # a position text (RULES.md 4)

Exactness: "won" comes with a solution that is replayed with the engine's
checked ``play`` on a copy before it is returned (a solver bug raises
SolverBug rather than claim a false win); "lost" only after a search that
expanded every reachable position, up to symmetries the rules guarantee (see
each family module: solve_puttputt, solve_klondike, solve_tabbycat,
solve_leapyear); the restarting searches of Klondike, Tabby Cat, Manx and Leap Year
expand them over several runs and keep between runs only positions already
proved lost. The solvers read the game only through ``to_text()`` and
never change it.

For process pools: ``solve``, ``solve_deal`` and ``solve_text`` are module
level functions, and their arguments and SolveResult pickle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .game import Game
from .registry import from_text, new_game
from .solve_common import LOST, UNKNOWN, WON, Answer, Position, parse_position
from .solve_klondike import solve_klondike
from .solve_leapyear import solve_leapyear
from .solve_puttputt import solve_puttputt
from .solve_tabbycat import solve_tabbycat

__all__ = [
    "LOST",
    "UNKNOWN",
    "WON",
    "SolveResult",
    "SolverBug",
    "solve",
    "solve_deal",
    "solve_text",
]

DEFAULT_BUDGET = 2_000_000

SOLVERS: dict[str, Callable[[Position, int], Answer]] = {
    "puttputt": solve_puttputt,
    "klondike": solve_klondike,
    "tabbycat": solve_tabbycat,
    "manx": solve_tabbycat,
    "leapyear": solve_leapyear,
}


class SolverBug(RuntimeError):
    """A solver claimed a win whose moves the engine refuses or that does not end won."""


@dataclass(frozen=True)
class SolveResult:
    """The answer for one position: verdict, the winning moves (when won), positions expanded."""

    verdict: str
    moves: list[str] = field(default_factory=list)
    nodes: int = 0


def solve(game: Game, budget: int = DEFAULT_BUDGET) -> SolveResult:
    """Judge ``game`` from its current position without changing it."""
    if budget < 0:
        raise ValueError(f"budget is a count of positions >= 0, not {budget}")
    if game.is_won():
        return SolveResult(WON, [], 0)
    text = game.to_text()
    pos = parse_position(text)
    solver = SOLVERS.get(pos.game)
    if solver is None:
        raise ValueError(f"no solver for game {pos.game!r}")
    ans = solver(pos, budget)
    if ans.verdict == WON:
        _verify(game, ans.moves)
    return SolveResult(ans.verdict, list(ans.moves) if ans.verdict == WON else [], ans.nodes)


def _verify(game: Game, moves: list[str]) -> None:
    """Replay a claimed win with the engine's checked play on a copy."""
    g = game.copy()
    for i, m in enumerate(moves):
        try:
            g.play(m)
        except ValueError as exc:
            raise SolverBug(f"solution move {i} ({m}) refused: {exc}\n{game.to_text()}") from exc
    if not g.is_won():
        raise SolverBug(f"solution of {len(moves)} moves does not win\n{game.to_text()}")


def solve_deal(
    game: str,
    seed: int | str,
    options: dict[str, Any] | None = None,
    budget: int = DEFAULT_BUDGET,
) -> SolveResult:
    """Judge the deal of ``game`` from ``seed`` (plain, picklable arguments for a process pool)."""
    return solve(new_game(game, seed, options), budget)


def solve_text(text: str, budget: int = DEFAULT_BUDGET) -> SolveResult:
    """Judge a position given as position text (RULES.md 4)."""
    return solve(from_text(text), budget)
