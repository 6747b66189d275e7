"""Klondike rules (RULES.md 5.3) under every option: draw 1|3, moves top|build, passes 0|N."""

from __future__ import annotations

import pytest
from solrace.engine import IllegalMove, from_text, new_game


def refused(g, move: str, fragment: str = "") -> None:
    before = g.to_text()
    with pytest.raises(IllegalMove) as info:
        g.play(move)
    assert g.to_text() == before and fragment in info.value.reason, info.value.reason


def pile(g, name: str) -> list:
    return g.view()["piles"][name]


def test_layout_and_defaults():
    g = new_game("klondike", 11)
    assert g.options == {"draw": 1, "moves": "top", "passes": 0}
    v = g.view()
    for k in range(1, 8):
        p = v["piles"][f"t{k}"]
        assert len(p) == (2 if k > 1 else 1)
        if k > 1:
            assert p[0] == {"hidden": k - 1} and isinstance(p[1], str)
    assert v["piles"]["s"] == [{"hidden": 24}] and v["piles"]["w"] == []
    assert v["deals_left"] is None and v["passes_left"] is None


@pytest.mark.parametrize(
    "opts", [{"draw": 2}, {"moves": "any"}, {"passes": -1}, {"colour": 1}, {"draw": "x"}]
)
def test_bad_options(opts):
    with pytest.raises(ValueError):
        new_game("klondike", 1, opts)


def test_tableau_build_alternate_colour_one_lower(position):
    g = position("klondike", t1="8D", t2="9S", t3="9H", t4="7D", fill="t1")
    assert g.is_legal("t1-t2")
    refused(g, "t1-t3", "8D does not go on 9H")
    refused(g, "t2-t1", "9S does not go on 8D")
    refused(g, "t4-t1", "7D does not go on 8D")


def test_empty_pile_takes_only_a_king(position):
    g = position("klondike", t1="QS", t2="KH", t3="", fill="t1")
    refused(g, "t1-t3", "an empty tableau pile takes only a King, not QS")
    g.play("t2-t3")
    assert pile(g, "t3") == ["KH"] and pile(g, "t2") == []


def test_foundations_up_by_suit_from_ace_any_empty(position):
    g = position("klondike", t1="AH", t2="2H", t3="2S", f2="AS", fill="t1")
    assert [str(m) for m in g.legal_moves() if m.src == "t1"] == [
        "t1-t3",
        "t1-f1",
        "t1-f3",
        "t1-f4",
    ]  # AH on 2S, too
    refused(g, "t2-f1", "an empty foundation takes only an Ace, not 2H")
    refused(g, "t2-f2", "2H does not go on AS")
    g.play("t3-f2")
    g.play("t1-f3")
    assert g.play("t2-f3").home_delta == 1 and g.home() == 4


def test_face_down_card_turns_up_with_the_move_and_undo_turns_it_back(position):
    g = position("klondike", t1="[4C] [9D] 7H", t2="8S", fill="t2")
    eff = g.play("t1-t2")
    assert eff.revealed == ("9D",)
    assert pile(g, "t1") == [{"hidden": 1}, "9D"] and g.to_text().splitlines()[1] == "t1 [4C] 9D"
    g.undo()
    assert g.to_text().splitlines()[1] == "t1 [4C] [9D] 7H"


def test_moves_top_refuses_runs_build_allows_any_face_up_part(position):
    kw = {"t1": "[2C] 9S 8H 7C", "t2": "TD", "t3": "9C", "t4": "", "fill": "t1"}
    top = position("klondike", **kw)
    refused(top, "t1-t2:3", "only the top card of a pile moves (moves=top)")
    assert not any(m.count > 1 for m in top.legal_moves())
    build = position("klondike moves=build", **kw)
    assert build.is_legal("t1-t2:3") and build.is_legal("t1-t3:2")
    refused(build, "t1-t2:2", "8H does not go on TD")
    refused(build, "t1-t2:4", "only the face-up run of t1 moves (3 cards)")
    eff = build.play("t1-t2:3")
    assert eff.revealed == ("2C",) and pile(build, "t2") == ["TD", "9S", "8H", "7C"]


def test_build_king_run_to_empty_pile(position):
    g = position("klondike moves=build", t1="[3C] KD QS JH", t2="", fill="t1")
    assert [str(m) for m in g.legal_moves() if m.dst == "t2"] == ["t1-t2:3"]
    refused(g, "t1-t2:2", "an empty tableau pile takes only a King, not QS")


def test_foundation_back_to_tableau(position):
    g = position("klondike", t1="8C", f1="AH 2H 3H 4H 5H 6H 7H", fill="t1")
    assert g.is_legal("f1-t1")
    g.play("f1-t1")
    assert g.home() == 6 and pile(g, "t1")[-2:] == ["8C", "7H"]
    refused(g, "f1-f2", "a foundation card goes back only to the tableau")
    refused(g, "t1-f1:2", "only single cards")


def test_waste_plays_and_draw_one_visibility(position):
    g = position("klondike", s="KS 3D", w="5C 6D AH", t1="5S", fill="t1")
    assert pile(g, "w") == [{"hidden": 2}, "AH"]
    eff = g.play("w-f1")
    assert eff.revealed == ("6D",) and pile(g, "w") == [{"hidden": 1}, "6D"]
    assert g.play("deal").revealed == ("KS",)
    assert pile(g, "w") == [{"hidden": 2}, "KS"]
    refused(g, "w-t1:2", "only single cards")
    refused(g, "s-t2", "the stock is used by 'deal'")
    refused(g, "s-w", "nothing moves onto w")
    refused(g, "t1-w", "nothing moves onto w")


def test_deal_recycle_order_and_unlimited_passes(position):
    g = position("klondike", s="2C 3C 4C", t1="5S", fill="t1")
    refused(g, "recycle", "the stock is not empty yet")
    for _ in range(3):
        g.play("deal")
    assert g.to_text().splitlines()[-1] == "w 2C 3C 4C"
    refused(g, "deal", "the stock is empty (recycle the waste)")
    for _ in range(5):  # unlimited passes
        assert g.play("recycle").revealed == ()
        assert g.to_text().splitlines()[-2:] == ["s 2C 3C 4C", "w"] and pile(g, "w") == []
        refused(g, "recycle", "the stock is not empty yet")
        for _ in range(3):
            g.play("deal")
    assert "recycled" not in g.to_text().splitlines()[0]


def test_draw_three_groups_and_fan(position):
    g = position("klondike draw=3", s="2C 3C 4C 5C 6C 7C 8C", t1="5S", fill="t1")
    assert g.play("deal").revealed == ("2C", "3C", "4C")
    assert pile(g, "w") == ["2C", "3C", "4C"]
    g.play("deal")
    assert pile(g, "w") == [{"hidden": 3}, "5C", "6C", "7C"]
    assert g.play("deal").revealed == ("8C",)  # a short last group
    assert pile(g, "w") == [{"hidden": 4}, "6C", "7C", "8C"]


def test_draw_three_fan_shrinks_and_shown_goes_on_the_game_line(position):
    g = position("klondike draw=3", t1="9D", t2="TS", s="3H 8C 2S AS", fill="t1")
    g.play("deal")  # 3H 8C 2S
    refused(g, "w-f1", "an empty foundation takes only an Ace, not 2S")
    g.play("deal")  # AS
    assert pile(g, "w") == [{"hidden": 1}, "8C", "2S", "AS"]
    assert g.play("w-f1").revealed == ()  # the fan shrinks, nothing new shows
    assert pile(g, "w") == [{"hidden": 1}, "8C", "2S"]
    assert g.to_text().splitlines()[0] == "game klondike draw=3 shown=2"
    g.play("w-f1")
    assert pile(g, "w") == [{"hidden": 1}, "8C"]
    assert g.to_text().splitlines()[0] == "game klondike draw=3 shown=1"
    eff = g.play("w-t1")
    assert eff.revealed == ("3H",) and pile(g, "w") == ["3H"]
    assert g.to_text().splitlines()[0] == "game klondike draw=3"
    again = from_text(g.to_text())
    assert again.view() == {**g.view(), "moves": 0}
    for _ in range(4):
        g.undo()
    assert pile(g, "w") == ["3H", "8C", "2S"] and g.view()["stock"] == 1


def test_pass_limit_and_recycled_on_the_game_line(position):
    g = position("klondike passes=2", s="2C 3C", t1="5S", fill="t1")
    assert g.view()["passes_left"] == 1
    g.play("deal")
    g.play("deal")
    g.play("recycle")
    assert g.to_text().splitlines()[0] == "game klondike passes=2 recycled=1"
    assert g.view()["passes_left"] == 0
    g.play("deal")
    g.play("deal")
    refused(g, "recycle", "no passes left (passes=2)")
    assert from_text(g.to_text()).legal_moves() == g.legal_moves()
    for _ in range(3):
        g.undo()
    assert g.to_text().splitlines()[0] == "game klondike passes=2" and g.view()["passes_left"] == 1


def test_one_pass_means_no_recycle(position):
    g = position("klondike passes=1", s="2C", t1="5S", fill="t1")
    g.play("deal")
    refused(g, "recycle", "no passes left")
    assert g.view()["passes_left"] == 0


def test_won(position):
    suits = "CDHS"
    found = {f"f{k + 1}": " ".join(r + suits[k] for r in "A23456789TJQK") for k in range(4)}
    found["f4"] = " ".join(r + "S" for r in "A23456789TJQ")
    g = position("klondike", t3="KS", **found, fill="s")
    assert not g.is_won()
    g.play("t3-f4")
    assert g.is_won() and g.progress() == 1.0 and g.legal_moves() == [] and not g.is_dead()
    refused(g, "f4-t1", "the game is won")


def test_dead_needs_no_stock_card_ever_playable(position):
    # tableau: only useless moves; foundations empty except as given; stock holds a 2C with f1 on AC
    base = {"t1": "[KC] 5H", "t2": "[QD] 9S", "f1": "AC", "fill": "t1"}
    alive = position("klondike", s="4D 2C 7H", **base)
    assert alive.legal_moves() == [alive.legal_moves()[0]] and str(alive.legal_moves()[0]) == "deal"
    assert not alive.is_dead()
    # draw 3: 2C is the middle of the only group and never becomes the top; 7H does not fit 9S... (needs 8)
    stuck = position("klondike draw=3", s="4D 2C 7H", **base)
    stuck_moves = [str(m) for m in stuck.legal_moves()]
    assert stuck_moves == ["deal"] and stuck.is_dead()


def test_dead_counts_the_pass_limit(position):
    base = {"t1": "[KC] 5H", "t2": "[QD] 9S", "f1": "AC", "fill": "t1"}
    # the playable 2C is below the waste top; only a recycle could bring it back
    unlimited = position("klondike", w="2C 7H", **base)
    assert [str(m) for m in unlimited.legal_moves()] == ["recycle"] and not unlimited.is_dead()
    limited = position("klondike passes=1", w="2C 7H", **base)
    assert limited.legal_moves() == [] and limited.is_dead()
    used = position("klondike passes=3 recycled=2", w="2C 7H", **base)
    assert used.is_dead()
    one_left = position("klondike passes=3 recycled=1", w="2C 7H", **base)
    assert not one_left.is_dead()


def test_draw_three_cycle_shift_after_recycle(position):
    # stock 4 cards with draw 3: tops are the 3rd and the 4th; after a recycle the groups are the same
    base = {"t1": "[KC] 5H", "t2": "[QD] 9S", "f1": "AC", "fill": "t1"}
    g = position("klondike draw=3", s="4D 7H 2C 6S", **base)
    assert not g.is_dead()  # 2C is the 3rd card: it tops the first group
    h = position("klondike draw=3", s="4D 2C 7H 6S", **base)
    assert h.is_dead()


def test_from_text_klondike_refusals():
    good = new_game("klondike", 1).to_text()
    import solrace.engine as eng

    with pytest.raises(eng.BadPosition):
        from_text(good.replace("t3 [4D] [9S] 2D", "t3 4D [9S] 2D"))
    with pytest.raises(eng.BadPosition):
        from_text(good.replace("t2 [9C] 6D", "t2 [9C] [6D]"))
    with pytest.raises(eng.BadPosition):
        from_text(good.replace("game klondike", "game klondike passes=2 recycled=2"))
    with pytest.raises(eng.BadPosition):
        from_text(good.replace("game klondike", "game klondike shown=2"))
    with pytest.raises(eng.BadPosition):
        from_text(good.replace("\ns ", "\ns [").replace("\nw", "]\nw", 1).replace(" ]", "]"))


def test_recycle_needs_a_waste(position):
    g = position("klondike", t1="5S", fill="t1")
    refused(g, "recycle", "the waste is empty")
    refused(g, "deal", "the stock is empty")
    assert g.legal_moves() == [] and g.is_dead()


def test_waste_to_tableau_and_no_wrap(position):
    g = position(
        "klondike",
        t1="9S",
        t2="AH",
        t3="KD",
        w="8D",
        f1="AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC",
        fill="t1",
    )
    assert [str(m) for m in g.legal_moves() if m.src == "w"] == ["w-t1"]
    refused(g, "t3-t2", "KD does not go on AH")  # no K-on-A wrap in Klondike
    refused(g, "t2-f1", "AH does not go on KC")  # foundations do not wrap either
    eff = g.play("w-t1")
    assert pile(g, "t1")[-2:] == ["9S", "8D"] and pile(g, "w") == [] and eff.revealed == ()
    g.undo()
    assert pile(g, "w") == ["8D"]
