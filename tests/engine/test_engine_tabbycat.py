"""Tabby Cat and Manx rules (RULES.md 5.1), each with its legal and illegal neighbours."""

from __future__ import annotations

import pytest
from solrace.engine import IllegalMove, Move, new_game

RUN_K_TO_A = "KS QH JD TC 9S 8H 7D 6C 5S 4H 3D 2C AS"


def refused(g, move: str, fragment: str = "") -> IllegalMove:
    before = g.to_text()
    with pytest.raises(IllegalMove) as info:
        g.play(move)
    assert g.to_text() == before
    assert fragment in info.value.reason
    return info.value


def test_layout():
    g = new_game("tabbycat", 5)
    v = g.view()
    assert all(len(v["piles"][f"t{i}"]) == 1 for i in range(1, 5))
    assert v["stock"] == 48 and v["deals_left"] == 12 and v["piles"]["r"] == []
    assert g.options == {} and new_game("manx", 5).game == "manx"


def test_build_down_any_suit_k_on_a(position):
    g = position("tabbycat", t1="5C", t2="6H", t3="AS", t4="KD")
    assert g.is_legal("t1-t2")  # 5 on 6, any suit
    refused(g, "t2-t1", "6H does not lie on 5C")  # building up is not allowed
    g.play("t4-t3")  # K on A wraps
    assert g.to_text().splitlines()[3] == "t3 AS KD"


def test_top_build_moves_in_part_or_whole(position):
    g = position("tabbycat", t1="9C 8H 7D 6S", t2="TS", t3="7C", t4="2D 3H")
    moves = {str(m) for m in g.legal_moves()}
    assert "t1-t2:4" in moves and "t1-t3" in moves and "t1-t3:2" not in moves
    refused(g, "t1-t2:3", "8H does not lie on TS")
    refused(g, "t1-t2:5", "only the top build of t1 moves (4 cards)")
    # t4's top build is one card (3H does not lie on 2D... 2D lies below 3H, and succ(3) != 2)
    refused(g, "t4-t1:2", "only the top build of t4 moves (1 card)")
    g.play("t1-t2:4")
    assert g.to_text().splitlines()[2] == "t2 TS 9C 8H 7D 6S"


def test_build_longer_than_13_moves_whole(position):
    long_run = "5C 4D 3H 2S AC KD QH JS TC 9D 8H 7S 6C 5D 4H"  # 15 cards, wrapping K on A
    g = position("tabbycat", t1=long_run, t2="6S", fill="t3")
    assert g._blen[0] == 15
    g.play("t1-t2:15")
    assert g.to_text().splitlines()[2] == "t2 6S " + long_run
    assert g._blen[1] == 16
    assert Move("t2", "t4", 16) in g.legal_moves()  # t4 is empty: the whole 16-card build may go
    g.undo()
    assert g._blen == [15, 1, g._blen[2], 0]


def test_empty_tableau_takes_anything(position):
    g = position("tabbycat", t1="QS JH", t2="3C", t3="8D", fill="s")
    for m in ("t1-t4", "t1-t4:2", "t2-t4", "t3-t4"):
        assert g.is_legal(m)


def test_tabby_tail_takes_any_top_part_of_a_build(position):
    g = position("tabbycat", t1="9C 8H 7D", t2="4S", t3="TD", t4="KC")
    g.play("t1-r:2")
    assert g.view()["piles"]["r"] == ["8H", "7D"]
    refused(g, "t2-r", "the tail is not empty")
    refused(g, "r-t3", "the whole tail moves at once (r-t3:2)")
    refused(g, "r-t2:2", "8H does not lie on 4S")
    refused(g, "r-f1:2", "the tail goes only to a tableau pile")
    g.play("r-t1:2")  # back where it came from
    assert g.view()["piles"]["r"] == []
    refused(g, "t1-r:4", "only the top build of t1 moves to the tail (3 cards)")


def test_manx_tail_takes_a_single_card_even_from_a_build(position):
    g = position("manx", t1="9C 8H 7D", t2="4S")
    refused(g, "t1-r:2", "single card")
    assert [str(m) for m in g.legal_moves() if m.dst == "r"] == ["t1-r", "t2-r"]
    g.play("t1-r")
    refused(g, "t2-r", "the tail is not empty")
    assert [str(m) for m in g.legal_moves() if m.src == "r"] == ["r-t1", "r-t3", "r-t4"]


def test_tail_onto_empty_or_accepting_pile_only(position):
    g = position("tabbycat", t1="6C", t2="8S", r="5H 4D", fill="s")
    refused(g, "r-t2:2", "5H does not lie on 8S")
    assert g.is_legal("r-t1:2") and g.is_legal("r-t3:2")


def test_discard_complete_k_to_a_run(position):
    g = position("tabbycat", t1="3C " + RUN_K_TO_A, t2="5H", fill="t3")
    refused(g, "t1-f1", "only a complete 13-card run")
    refused(g, "t1-f1:12", "only a complete 13-card run")
    g.play("t1-f2:13")  # any empty discard pile, it may sit on other cards
    assert g.home() == 13 and g.progress() == 0.25
    assert g.to_text().splitlines()[1] == "t1 3C"
    assert g.view()["piles"]["f2"] == RUN_K_TO_A.split()
    refused(g, "f2-t2", "nothing moves from f2")
    g.undo()
    assert g.home() == 0


def test_discard_needs_empty_pile(position):
    run = RUN_K_TO_A.split()
    other = "KC QD JS TH 9C 8D 7S 6H 5C 4D 3S 2H AC"
    g = position(
        "tabbycat",
        t1=" ".join(run),
        t2=other,
        f1="KH QC JH TS 9H 8C 7H 6S 5H 4C 3H 2S AH",
        fill="s",
    )
    refused(g, "t1-f1:13", "f1 is not empty")
    assert [str(m) for m in g.legal_moves() if m.dst and m.dst[0] == "f"] == [
        "t1-f2:13",
        "t1-f3:13",
        "t1-f4:13",
        "t2-f2:13",
        "t2-f3:13",
        "t2-f4:13",
    ]


def test_run_with_wrap_is_not_discardable(position):
    # ... 2 A K on top: K lies on A (wrap), but the top 13 are not K..A bottom to top
    g = position("tabbycat", t1="QS JH TD 9C 8S 7H 6D 5C 4S 3H 2D AC KS", fill="s")
    assert g._blen[0] == 13
    refused(g, "t1-f1:13", "are not K Q J T 9 8 7 6 5 4 3 2 A")
    assert not any(m.dst == "f1" for m in g.legal_moves())


def test_deal_onto_every_pile_including_empty(position):
    g = position("tabbycat", t1="5C", t3="9D", s="4H 8C QS 2D")
    eff = g.play("deal")
    assert eff.revealed == ("4H", "8C", "QS", "2D")
    lines = g.to_text().splitlines()
    assert lines[1:5] == ["t1 5C 4H", "t2 8C", "t3 9D QS", "t4 2D"]
    g.undo()
    assert g.to_text().splitlines()[1:5] == ["t1 5C", "t2", "t3 9D", "t4"]


def test_deal_extends_cached_build(position):
    g = position("tabbycat", t1="5C", t2="9D", s="4H 8C QS 2D")
    g.play("deal")
    assert g._blen[:2] == [2, 2] and g._blen[2:] == [1, 1]


def test_twelve_deals_then_no_redeal():
    g = new_game("manx", 3)
    for i in range(12):
        assert g.deals_left == 12 - i
        g.play("deal")
    assert g.deals_left == 0 and g.view()["piles"]["s"] == []
    refused(g, "deal", "the stock is empty")


def test_won_and_dead(position):
    build_position = position
    runs = [
        "KS QH JD TC 9S 8H 7D 6C 5S 4H 3D 2C AS",
        "KH QS JC TD 9H 8S 7C 6D 5H 4S 3C 2D AH",
        "KD QC JS TH 9D 8C 7S 6H 5D 4C 3S 2H AD",
        "KC QD JH TS 9C 8D 7H 6S 5C 4D 3H 2S AC",
    ]
    text = (
        "game tabbycat\nt1 "
        + runs[0]
        + "\nt2\nt3\nt4\nf1\nf2 "
        + runs[1]
        + "\nf3 "
        + runs[2]
        + "\nf4 "
        + runs[3]
        + "\nr\ns\n"
    )
    from solrace.engine import from_text

    g = from_text(text)
    assert not g.is_won() and not g.is_dead()
    g.play("t1-f1:13")
    assert g.is_won() and not g.is_dead() and g.legal_moves() == [] and g.progress() == 1.0
    refused(g, "t1-t2", "the game is won")
    # dead: stock empty, tail full, no top fits anywhere
    d = build_position("manx", t1="2C", t2="4D", t3="6H", t4="8S", r="TC", fill="t1")
    assert d.legal_moves() == [] and d.is_dead() and not d.is_won()


def test_unknown_piles_refused():
    g = new_game("tabbycat", 1)
    refused(g, "t9-t1", "there is no pile t9 in tabbycat")
    refused(g, "t1-t5", "there is no pile t5 in tabbycat")
    refused(g, "w-t1", "there is no pile w in tabbycat")
    refused(g, "recycle", "there is no recycle in tabbycat")
    refused(g, "t1-t1", "a pile cannot move onto itself")
    refused(g, "s-t1", "nothing moves from s")
