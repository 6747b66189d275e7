"""Klondike's `_any_move` (the first half of the dead check a server runs after every stored
move) looks each source card up in the set of cards the targets take; it must agree with the
full move generation, `bool(_legal_moves(False))`, on every position: checked along random
games (random legal moves, deals and recycles, sometimes an undo) of every option set, and
with the greedy policy the load bench's bots play (long deal cycles with few moves left)."""

from __future__ import annotations

import random

import pytest
from solrace.bench.load_policy import next_move
from solrace.engine import new_game
from solrace.engine.klondike import Klondike

OPTION_SETS = [
    {},
    {"draw": 3},
    {"moves": "build"},
    {"draw": 3, "moves": "build"},
    {"passes": 1},
    {"draw": 3, "moves": "build", "passes": 3},
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=str)
def test_any_move_agrees_with_the_move_generation(options: dict[str, object]) -> None:
    rng = random.Random(21)
    found = {True: 0, False: 0}
    for seed in range(1, 31):
        game = new_game("klondike", seed=seed, options=options)
        assert isinstance(game, Klondike)
        for _ in range(250):
            any_move = game._any_move()
            assert any_move == bool(game._legal_moves(False)), (seed, game.to_text())
            found[any_move] += 1
            moves = game.legal_moves()
            if not moves:
                break
            if game.history and rng.random() < 0.1:
                game.undo()
            else:
                game.play(rng.choice(moves))
    assert found[True] > 100 and found[False] > 100  # both answers are exercised


def test_any_move_along_the_bench_bots_games() -> None:
    found = {True: 0, False: 0}
    for seed in range(1, 16):
        game = new_game("klondike", seed=seed)
        assert isinstance(game, Klondike)
        for _ in range(300):
            if game.is_won():
                break
            any_move = game._any_move()
            assert any_move == bool(game._legal_moves(False)), (seed, game.to_text())
            found[any_move] += 1
            game.play(next_move("klondike", game.view()))
    assert found[True] > 100 and found[False] > 100
