"""Which part moves of a Klondike win another solver's rules would not allow.

    python -m solrace.bench.part_moves --seeds 7 [-o draw=3 -o moves=build] [--budget N]

RULES.md lets ``moves=build`` move any face-up run (``tX-tY:N``). Solvitaire's Klondike
preset (``"move built group": "partial-if-card-above-buildable"``) moves part of a pile's
face-up run onto another tableau pile only when the card the move uncovers can go to a
foundation at once. So a deal can be won here and not there: this prints, for each seed
our solver wins, the moves of its winning line that Solvitaire's preset refuses (the move's
index in the line, its text and the card it uncovers), to tell a rules difference from a
disagreement between solvers. One JSON line per seed.
"""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

from solrace.engine import Game, new_game
from solrace.engine.solve import solve_deal

from .solve_sample import _seeds

RANKS = "A23456789TJQK"
PART = re.compile(r"t(\d)-t(\d):(\d+)")


def piles(game: Game) -> dict[str, list[tuple[str, bool]]]:
    """Each pile of the position text as (card, face up), bottom first."""
    out: dict[str, list[tuple[str, bool]]] = {}
    for line in game.to_text().splitlines()[1:]:
        name, *cards = line.split()
        out[name] = [(c.strip("[]"), not c.startswith("[")) for c in cards]
    return out


def goes_home(card: str, table: dict[str, list[tuple[str, bool]]]) -> bool:
    """Could ``card`` go to a foundation now (an Ace to an empty one, else on its suit's
    card one rank lower)?"""
    rank = RANKS.index(card[0]) + 1
    for k in range(1, 5):
        found = table[f"f{k}"]
        if not found:
            if rank == 1:
                return True
            continue
        top = found[-1][0]
        if top[1] == card[1] and RANKS.index(top[0]) + 1 == rank - 1:
            return True
    return False


def refused(game: Game, move: str) -> str | None:
    """The card ``move`` uncovers when Solvitaire's preset refuses it, else None."""
    m = PART.fullmatch(move)
    if m is None:
        return None
    table = piles(game)
    src, dst, n = table[f"t{m.group(1)}"], table[f"t{m.group(2)}"], int(m.group(3))
    face_up = sum(1 for _, up in src if up)
    if n >= face_up or not dst:  # the whole run, or onto an empty pile: both allowed there
        return None
    left = src[-n - 1][0]
    return None if goes_home(left, table) else left


def check(seed: int, options: dict[str, Any], budget: int) -> dict[str, Any]:
    """Solve the deal; list the winning line's moves Solvitaire's preset refuses."""
    result = solve_deal("klondike", seed, options, budget)
    game = new_game("klondike", seed, options)
    found: list[tuple[int, str, str]] = []
    for i, move in enumerate(result.moves or []):
        left = refused(game, move)
        if left is not None:
            found.append((i, move, left))
        game.play(move)
    return {
        "seed": seed,
        "verdict": result.verdict,
        "nodes": result.nodes,
        "moves": len(result.moves or []),
        "refused": found,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="part_moves")
    ap.add_argument("--seeds", required=True)
    ap.add_argument(
        "-o", "--option", action="append", help="default: draw=3 moves=build (standard Klondike)"
    )
    ap.add_argument("--budget", type=int, default=6_000_000)
    args = ap.parse_args(argv)
    options: dict[str, Any] = dict(
        kv.split("=", 1) for kv in args.option or ["draw=3", "moves=build"]
    )
    for seed in _seeds(args.seeds):
        print(json.dumps(check(seed, options, args.budget)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
