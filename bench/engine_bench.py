"""`solrace bench engine`: how fast the rules engine plays and lists moves, per game.

Random playouts are recorded first, then replayed under the clock so that only
the measured calls are timed: ``play(Move)`` (the bot path), ``play(text)`` (the
server path: parse cache + check + apply), ``legal_moves()`` and ``view()``.
A baseline loop of list appends/pops is timed in the same run, so figures from
different machines or runs compare as ratios. Prints a table; never asserts.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from solrace.engine import Game, Move, new_game

VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("tabbycat", {}),
    ("manx", {}),
    ("puttputt", {}),
    ("klondike", {}),
    ("klondike", {"draw": 3, "moves": "build"}),
    ("leapyear", {}),
]
GOAL_PLAY = 50_000
GOAL_LEGAL = 20_000

#: recorded playouts: (untouched start position, the moves played from it)
Recorded: TypeAlias = list[tuple[Game, list[Move]]]


def record_playouts(
    game: str, options: dict[str, Any], playouts: int, max_moves: int, seed: int
) -> Recorded:
    """(fresh game, move list) pairs from random play; the game objects are untouched copies."""
    rng = random.Random(seed)
    out: Recorded = []
    for i in range(playouts):
        g = new_game(game, seed * 1_000_003 + i, options)
        start = g.copy()
        moves: list[Move] = []
        for _ in range(max_moves):
            legal = g.legal_moves()
            if not legal:
                break
            m = rng.choice(legal)
            g.apply(m)
            moves.append(m)
        out.append((start, moves))
    return out


def time_play(recorded: Recorded, as_text: bool) -> tuple[int, float]:
    calls = 0
    elapsed = 0.0
    clock = time.perf_counter
    for start, moves in recorded:
        g = start.copy()
        seq: Sequence[Move | str] = [m.text for m in moves] if as_text else moves
        play = g.play
        t0 = clock()
        for m in seq:
            play(m)
        elapsed += clock() - t0
        calls += len(seq)
    return calls, elapsed


def time_positions(recorded: Recorded, method: str) -> tuple[int, float]:
    """Call ``method`` once in every position of every playout (timing only that call)."""
    calls = 0
    elapsed = 0.0
    clock = time.perf_counter
    for start, moves in recorded:
        g = start.copy()
        fn = getattr(g, method)
        apply = g.apply
        for m in moves:
            t0 = clock()
            fn()
            elapsed += clock() - t0
            apply(m)
        calls += len(moves)
    return calls, elapsed


def best_of(repeat: int, fn: Callable[..., tuple[int, float]], *args: Any) -> tuple[int, float]:
    """The fastest of ``repeat`` runs, as timeit does: slower runs measure interference, not the engine."""
    runs = [fn(*args) for _ in range(max(1, repeat))]
    return min(runs, key=lambda r: r[1])


def time_baseline(n: int) -> float:
    """A raw loop of n list append+pop pairs: the machine's Python speed, for ratios."""
    stack: list[int] = [0]
    push = stack.append
    pop = stack.pop
    t0 = time.perf_counter()
    for i in range(n):
        push(i)
        pop()
    return time.perf_counter() - t0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="solrace bench engine", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--playouts", type=int, default=60, help="random playouts per game (default 60)"
    )
    parser.add_argument(
        "--max-moves", type=int, default=300, help="moves per playout at most (default 300)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the playouts (default 1)")
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed runs per figure; the best is shown (default 3)"
    )
    parser.add_argument("--games", nargs="*", help="only these games (default: all variants)")
    args = parser.parse_args(list(argv) if argv is not None else None)

    base_n = 1_000_000
    base = base_n / min(time_baseline(base_n) for _ in range(3))
    print(f"baseline: {base:,.0f} list append+pop pairs/s (one core, same run)")
    print(f"goals: play() >= {GOAL_PLAY:,}/s, legal_moves() >= {GOAL_LEGAL:,}/s for every game")
    header = f"{'game':<28} {'moves':>7} {'play(Move)/s':>13} {'play(text)/s':>13} {'legal_moves/s':>14} {'view/s':>9} {'play/base':>10} {'legal/base':>10}"
    print(header)
    print("-" * len(header))
    for game, options in VARIANTS:
        if args.games and game not in args.games:
            continue
        label = game + ("".join(f" {k}={v}" for k, v in options.items()))
        recorded = record_playouts(game, options, args.playouts, args.max_moves, args.seed)
        time_play(
            recorded, as_text=True
        )  # warm-up: fills the parse cache, as a long-running server would
        n_play, t_play = best_of(args.repeat, time_play, recorded, False)
        n_text, t_text = best_of(args.repeat, time_play, recorded, True)
        n_legal, t_legal = best_of(args.repeat, time_positions, recorded, "legal_moves")
        n_view, t_view = best_of(args.repeat, time_positions, recorded, "view")
        play_rate = n_play / t_play if t_play else float("nan")
        text_rate = n_text / t_text if t_text else float("nan")
        legal_rate = n_legal / t_legal if t_legal else float("nan")
        view_rate = n_view / t_view if t_view else float("nan")
        print(
            f"{label:<28} {n_play:>7} {play_rate:>13,.0f} {text_rate:>13,.0f} {legal_rate:>14,.0f} {view_rate:>9,.0f}"
            f" {play_rate / base:>10.4f} {legal_rate / base:>10.4f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
