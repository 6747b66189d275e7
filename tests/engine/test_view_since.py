"""`Game.view_since` builds again only the piles a move changed, and must give exactly
`view()`: checked along random games of every family (moves, deals, recycles, undos), for
Klondike with draw one and draw three (its waste shows up to three cards)."""

from __future__ import annotations

import random

import pytest
from solrace.engine import Game, new_game

CASES = [
    ("klondike", {}),
    ("klondike", {"draw": 3}),
    ("puttputt", {}),
    ("leapyear", {}),
    ("tabbycat", {}),
    ("manx", {}),
]


def random_step(game: Game, rng: random.Random, undo_share: float) -> tuple[int, ...] | None:
    """One step of a random game that has a move or a move to take back: an undo (at
    `undo_share`, or when no move is left) or a random legal move; the piles it touched
    (`Game.touched`)."""
    moves = game.legal_moves()
    if game.history and (not moves or rng.random() < undo_share):
        return game.touched(game.undo())
    move = rng.choice(moves)
    game.play(move)
    return game.touched(move)


@pytest.mark.parametrize(("name", "options"), CASES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_view_since_is_the_view(name: str, options: dict[str, int], seed: int) -> None:
    game = new_game(name, seed=seed, options=options)
    rng = random.Random(seed)
    states: list[object] = []
    view = game.view_since(None, states)
    assert view == game.view()
    for _ in range(300):
        moves = game.legal_moves()
        if game.history and (not moves or rng.random() < 0.15):
            game.undo()
        elif moves:
            game.play(rng.choice(moves))
        else:
            break
        before = view
        view = game.view_since(before, states)
        assert view == game.view()
        # the piles that did not change are shared with the view before, not built again
        unchanged = [n for n, p in view["piles"].items() if p == before["piles"][n]]
        assert all(view["piles"][n] is before["piles"][n] for n in unchanged)


@pytest.mark.parametrize(
    "options", [{}, {"draw": 3}, {"moves": "build"}, {"draw": 3, "moves": "build", "passes": 1}]
)
def test_klondikes_first_move_search_agrees_with_the_full_one(options: dict[str, object]) -> None:
    """The dead check stops at the first move found (`_any_move`): it must find one exactly
    when the full generation does, along random games with undos."""
    for seed in range(1, 9):
        game = new_game("klondike", seed=seed, options=options)
        rng = random.Random(seed)
        for _ in range(250):
            assert game._any_move() == bool(game._legal_moves(False))  # type: ignore[attr-defined]
            moves = game.legal_moves()
            if game.history and (not moves or rng.random() < 0.1):
                game.undo()
            elif moves:
                game.play(rng.choice(moves))
            else:
                break


@pytest.mark.parametrize(("name", "options"), CASES)
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_view_since_over_the_touched_piles_is_the_view(
    name: str, options: dict[str, int], seed: int
) -> None:
    """Given the piles the moves played and taken back since the last view say they touch
    (`Game.touched`; None: every pile), the view compares only those and is still exactly
    `view()`, also when several moves and undos come between two views."""
    game = new_game(name, seed=seed, options=options)
    rng = random.Random(seed)
    states: list[object] = []
    view = game.view_since(None, states)
    touched: set[int] | None = set()
    for _ in range(300):
        if not game.legal_moves() and not game.history:
            break
        piles = random_step(game, rng, 0.15)
        if touched is not None:
            touched = None if piles is None else touched | set(piles)
        if rng.random() < 0.3:
            continue  # the next view comes after more than one change
        view = game.view_since(view, states, touched)
        assert view == game.view()
        touched = set()
    if name == "klondike":
        assert game.touched(game.legal_moves()[0]) is not None  # Klondike says what it touches


@pytest.mark.parametrize(
    "options",
    [{}, {"draw": 3}, {"passes": 1}, {"draw": 3, "passes": 3}, {"moves": "build", "passes": 2}],
)
def test_klondike_dead_check_kept_across_views_is_the_full_check(
    options: dict[str, object],
) -> None:
    """Klondike's dead check in `view_since` is skipped while the move the last one found has
    both its piles untouched (`_dead_since`): along random games played to their end (undos
    too), each view's `dead` is what a full check of a copy says, and some games end dead."""
    deaths = skipped = 0
    for seed in range(1, 41):
        game = new_game("klondike", seed=seed, options=options)
        rng = random.Random(seed)
        states: list[object] = []
        view = game.view_since(None, states)
        for _ in range(400):
            if not game.legal_moves():
                break
            piles = random_step(game, rng, 0.05)
            assert piles is not None
            alive = game._alive  # type: ignore[attr-defined]
            touched = set(piles)
            skipped += alive is not None and touched.isdisjoint(alive)
            view = game.view_since(view, states, touched)
            full = game.copy()
            assert view["dead"] == full.is_dead(), (seed, len(game.history))
            if view["dead"]:
                deaths += 1
                break
    assert skipped > 0
    if options.get("moves") != "build":  # random build games rarely die in 400 moves
        assert deaths > 0
