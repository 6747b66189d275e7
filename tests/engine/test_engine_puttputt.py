"""Putt Putt rules (RULES.md 5.2): Golf with K-A wrap both ways, deal any time."""

from __future__ import annotations

import pytest
from solrace.engine import IllegalMove, new_game


def refused(g, move: str, fragment: str = "") -> None:
    before = g.to_text()
    with pytest.raises(IllegalMove) as info:
        g.play(move)
    assert g.to_text() == before and fragment in info.value.reason


def test_layout():
    g = new_game("puttputt", 9)
    v = g.view()
    assert [len(v["piles"][f"t{i}"]) for i in range(1, 8)] == [5] * 7
    assert len(v["piles"]["f1"]) == 1 and v["stock"] == 16 and v["deals_left"] == 16
    assert g.home() == 0 and g.progress() == 0.0


def test_one_rank_above_or_below(position):
    g = position("puttputt", t1="6C", t2="8D", t3="7S", t4="9H", f1="7H", fill="s")
    assert [str(m) for m in g.legal_moves()] == ["t1-f1", "t2-f1", "deal"]
    refused(g, "t3-f1", "7S is not one rank above or below 7H")
    refused(g, "t4-f1", "9H is not one rank above or below 7H")
    home = g.home()
    assert g.play("t2-f1").home_delta == 1
    assert g.home() == home + 1 and g.view()["piles"]["f1"] == ["7H", "8D"]


@pytest.mark.parametrize("top,card", [("KC", "AD"), ("AC", "KD"), ("KC", "QD"), ("AC", "2D")])
def test_wrap_both_ways(position, top, card):
    g = position("puttputt", t1=card, f1=top, fill="s")
    g.play("t1-f1")
    assert g.view()["piles"]["f1"] == [top, card]


def test_no_wrap_beyond_neighbours(position):
    g = position("puttputt", t1="QD", t2="2D", f1="AC", fill="s")
    refused(g, "t1-f1", "QD is not one rank above or below AC")
    g2 = position("puttputt", t1="2D", f1="KC", fill="s")
    refused(g2, "t1-f1")


def test_only_single_top_cards_to_f1(position):
    g = position("puttputt", t1="5C 6D", f1="7H", fill="s")
    refused(g, "t1-f1:2", "only single top cards move")
    refused(g, "f1-t1", "cards move only to f1")
    refused(g, "t1-t2", "cards move only to f1")
    refused(g, "t9-f1", "there is no pile t9 in puttputt")
    refused(g, "t8-f1", "there is no pile t8 in puttputt")


def test_empty_pile_stays_empty(position):
    g = position("puttputt", t1="6D", t2="KC", f1="7H", s="9C", fill="f1")
    g.play("t1-f1")
    assert all(m.src != "t1" for m in g.legal_moves())
    refused(g, "t1-f1", "t1 is empty")


def test_deal_any_time_onto_f1(position):
    g = position("puttputt", t1="6D", f1="7H", s="QC", fill="f1")
    assert g.view()["piles"]["f1"][-1] == "7H"
    assert g.is_legal("t1-f1")  # a play exists, deal still allowed
    eff = g.play("deal")
    assert eff.revealed == ("QC",) and g.view()["piles"]["f1"][-2:] == ["7H", "QC"]
    refused(g, "deal", "the stock is empty")
    g.undo()
    assert g.view()["stock"] == 1


def test_won_with_stock_left_and_dead(position):
    g = position("puttputt", t1="8D", f1="7H", s="2C", fill="f1")
    # fill put the other cards under f1; t1 holds the last tableau card
    assert g.home() == 34
    g.play("t1-f1")
    assert g.is_won() and g.progress() == 1.0 and g.legal_moves() == [] and not g.is_dead()
    refused(g, "deal", "the game is won")
    d = position("puttputt", t1="9D", f1="7H", s="", fill="f1")
    assert d.legal_moves() == [] and d.is_dead()
