"""Load bots choose moves from their own view only; these views are built by hand."""

from __future__ import annotations

from solrace.bench.load import room_options
from solrace.bench.load_policy import klondike_move, next_move, puttputt_move
from solrace.bench.load_procs import BENCH_SECRET
from solrace.engine import Game, new_game
from solrace.server.rules.room import text_deal_seed


def klondike_view(**piles: list) -> dict:
    base = {f"t{i}": [{"hidden": i - 1}, "9S"] for i in range(1, 8)}
    base.update({f"f{i}": [] for i in range(1, 5)})
    base.update({"s": [{"hidden": 10}], "w": []})
    base.update(piles)
    return {"game": "klondike", "piles": base, "stock": 10}


def test_klondike_ace_from_waste_goes_to_first_empty_foundation() -> None:
    assert klondike_move(klondike_view(w=[{"hidden": 2}, "AH"])) == "w-f1"


def test_klondike_next_card_of_suit_goes_home_from_tableau() -> None:
    view = klondike_view(f2=["AC", "2C"], t4=[{"hidden": 3}, "3C"])
    assert klondike_move(view) == "t4-f2"


def test_klondike_waste_card_onto_tableau_of_other_colour() -> None:
    view = klondike_view(w=["8H"])
    assert klondike_move(view) == "w-t1"


def test_klondike_deals_then_recycles() -> None:
    view = klondike_view(w=["8S"])
    assert klondike_move(view) == "deal"
    view["stock"] = 0
    assert klondike_move(view) == "recycle"


def test_puttputt_plays_neighbour_rank_with_wrap_else_deals() -> None:
    piles = {f"t{i}": ["5C"] for i in range(1, 8)}
    piles["t6"] = ["KD"]
    piles["f1"] = ["AS"]
    view = {"piles": piles, "stock": 16}
    assert puttputt_move(view) == "t6-f1"
    piles["t6"] = []
    assert puttputt_move(view) == "deal"


def test_no_view_yet_means_deal() -> None:
    assert next_move("klondike", None) == "deal"
    assert next_move("puttputt", None) == "deal"


def bench_deal(game: str) -> Game:
    """The deal the bench's race servers deal its rooms: the rooms' text seed keyed with the
    servers' secret, as any server deals a text seed (not the engine's plain text seed)."""
    seed = text_deal_seed(BENCH_SECRET.encode(), room_options(game, 1)["seed"])
    return new_game(game, seed=seed)


def test_klondike_bot_plays_only_legal_moves_and_the_bench_deal_never_ends() -> None:
    """The throughput runs rely on the bench's deal lasting: check it against the real engine
    (a deal on which the bots were dead within 60 moves made runs that measured no move)."""
    g = bench_deal("klondike")
    for _ in range(1500):
        g.play(next_move("klondike", g.view()))  # IllegalMove would fail the test
        assert not g.is_dead() and not g.is_won()
    assert g.home() > 0


def test_puttputt_bot_plays_legal_moves_to_the_end() -> None:
    g = bench_deal("puttputt")
    for _ in range(60):
        if g.is_dead() or g.is_won():
            break
        g.play(next_move("puttputt", g.view()))
    assert g.is_dead() or g.is_won()
