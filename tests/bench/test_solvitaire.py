"""bench/solvitaire.py: our Klondike deals in Solvitaire's deal format, its lines replayed."""

from __future__ import annotations

from pathlib import Path

from solrace.bench import solvitaire
from solrace.engine import new_game

# Solvitaire's printout of its win of standard seed 7, its first eight positions (the deal,
# six tableau moves, then one stock move: four deals to a card played on t7)
START7 = (Path(__file__).parent / "data" / "solvitaire_seed7_start.txt").read_text()


def test_the_deal_maps_piles_face_down_cards_tens_and_the_stock() -> None:
    d = solvitaire.deal(7)
    game = new_game("klondike", 7, solvitaire.STANDARD)
    assert len(d["tableau piles"]) == 7
    assert d["tableau piles"][0] == ["4D"]  # t1: one face-up card
    assert d["tableau piles"][5] == ["10h", "2c", "7c", "10s", "Qh", "8D"]  # t6, bottom first
    assert len(d["stock"]) == 24
    # Solvitaire deals from the end of its list: the last card is our first dealt
    game.play("deal")
    first = game.to_text().splitlines()[-1].split()[1]  # "w 9C JD 6H": 9C came first
    assert d["stock"][-1] == solvitaire.card(first, True) == "9C"
    assert solvitaire.card("TH", False) == "10h"


def test_the_printed_positions_match_ours_and_a_stock_move_is_deals_then_a_play() -> None:
    line = solvitaire.states(START7)
    assert len(line) == 8
    game = new_game("klondike", 7, solvitaire.STANDARD)
    assert solvitaire.view(game) == line[0]
    assert solvitaire._reach(game, line[1]) == ["t7-f1"]
    assert solvitaire._reach(game, line[2]) is None  # two moves away
    played = []
    for target in line[1:7]:
        step = solvitaire._reach(game, target)
        assert step is not None and len(step) == 1
        game.play(step[0])
        played += step
    assert played == ["t7-f1", "t2-t4", "t1-t2", "t2-t4:2", "t5-t4", "t4-t6:5"]
    # its stock move "deal to a card and play it" is four deals here, then w-t7
    assert solvitaire._reach(game, line[7]) == ["deal"] * 4 + ["w-t7"]


def test_a_move_that_empties_the_stock_may_end_with_a_recycle() -> None:
    # Solvitaire turns the waste over when its stock runs out, so its positions never show
    # an empty stock beside a waste: the same position here needs our recycle after the deal
    game = new_game("klondike", 7, solvitaire.STANDARD)
    start = solvitaire.view(game)
    for _ in range(7):
        game.play("deal")
    assert solvitaire._reach(game, start) == ["deal", "recycle"]


def test_the_report_is_parsed() -> None:
    assert solvitaire.parse("Solution Type: unsolvable\nStates Searched: 211\n") == {
        "verdict": "lost",
        "states": 211,
    }
    assert solvitaire.parse("Solution Type: solved\nStates Searched: 9\n")["verdict"] == "won"
    assert solvitaire.parse("") == {"verdict": "unknown", "states": -1}
