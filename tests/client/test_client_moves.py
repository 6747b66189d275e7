"""The client's view-only move generator agrees with the engine, position by position.

Random walks (fixed seeds) through real engine games: at every position the
moves listed from the view alone must be exactly the engine's legal moves,
and a move played on the client's Board must give the engine's next view
(where the engine reveals a card, the client has the unknown `*`).
"""

import random

import pytest
from solrace.client.moves import UNKNOWN, Board, apply, legal_moves
from solrace.engine import new_game

CASES = [
    ("tabbycat", {}),
    ("manx", {}),
    ("puttputt", {}),
    ("klondike", {}),
    ("klondike", {"draw": 3, "moves": "build", "passes": 2}),
    ("leapyear", {}),
]


def _same_after(mine: Board, theirs: Board) -> bool:
    if mine.stock != theirs.stock or mine.piles.keys() != theirs.piles.keys():
        return False
    for name, pile in mine.piles.items():
        other = theirs.piles[name]
        if len(pile) != len(other):
            return False
        if any(a != b and a != UNKNOWN for a, b in zip(pile, other, strict=False)):
            return False
    return True


@pytest.mark.parametrize("game, options", CASES, ids=lambda c: str(c))
def test_view_moves_match_engine_on_random_walks(game, options):
    checked = 0
    for seed in range(6):
        rng = random.Random(seed)
        g = new_game(game, seed=seed, options=options)
        for _ in range(120):
            engine_moves = sorted(str(m) for m in g.legal_moves())
            view = g.view()
            assert sorted(legal_moves(view)) == engine_moves, (seed, g.to_text())
            if not engine_moves:
                break
            move = rng.choice(engine_moves)
            before = Board.from_view(view)
            g.play(move)
            checked += 1
            if move not in ("deal", "recycle"):
                assert _same_after(apply(before, move), Board.from_view(g.view())), (seed, move)
    assert checked > 100
