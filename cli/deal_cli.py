"""`solrace deal GAME --seed N`: print the position text of a deal.

For puzzles, bug reports and clients in other languages checking their own
shuffle against ours: the output is exactly ``new_game(...).to_text()``.
"""

from __future__ import annotations

import argparse
import sys

from solrace.engine import GAMES, new_game


def _seed(text: str) -> int | str:
    """An all-digit seed is the u64 itself; any other text is a text seed."""
    return int(text) if text.isdigit() else text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", choices=GAMES, help="which game")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "--seed",
        type=_seed,
        help="an unsigned 64-bit integer (digits only); any other text is taken as a text seed "
        "(SHA-256 of its UTF-8, first 8 bytes big-endian), e.g. --seed 2026-11-22",
    )
    group.add_argument(
        "--seed-text",
        help="a text seed, even if it is all digits (--seed-text 42 is not --seed 42)",
    )
    parser.add_argument(
        "--option",
        "-o",
        action="append",
        default=[],
        metavar="K=V",
        help="a game option, repeatable (klondike: draw=1|3, moves=top|build, passes=0|N)",
    )


def run(args: argparse.Namespace) -> int:
    options = {}
    for kv in args.option:
        key, eq, value = kv.partition("=")
        if not eq or not key:
            print(f"solrace deal: --option takes K=V, not {kv!r}", file=sys.stderr)
            return 2
        options[key] = value
    seed = args.seed_text if args.seed_text is not None else args.seed
    try:
        game = new_game(args.game, seed, options)
    except ValueError as exc:
        print(f"solrace deal: {exc}", file=sys.stderr)
        return 2
    print(game.to_text(), end="")
    return 0
