"""Leap Year rules (RULES.md 5.4): four decks, Aces start 16 foundations, up any suit, no wrap."""

from __future__ import annotations

import pytest
from solrace.engine import IllegalMove, new_game
from solrace.engine.cards import RANK, TEXT
from solrace.engine.deal import shuffled_deck


def refused(g, move: str, fragment: str = "") -> None:
    before = g.to_text()
    with pytest.raises(IllegalMove) as info:
        g.play(move)
    assert g.to_text() == before and fragment in info.value.reason


def foundations(**tops: str) -> dict:
    """f1..f16 each holding an Ace; the named ones hold more (text)."""
    out = {f"f{k}": "A" + "CDHS"[(k - 1) % 4] for k in range(1, 17)}
    out.update(tops)
    return out


@pytest.mark.parametrize("seed", [0, 7, 2**64 - 1])
def test_ace_extraction_keeps_order(seed):
    cards = shuffled_deck(seed, 4)
    aces = [TEXT[c] for c in cards if RANK[c] == 1]
    rest = [TEXT[c] for c in cards if RANK[c] != 1]
    v = new_game("leapyear", seed).view()
    assert [v["piles"][f"f{k}"] for k in range(1, 17)] == [[a] for a in aces]
    assert [v["piles"][f"t{i}"] for i in range(1, 9)] == [[c] for c in rest[:8]]
    assert v["stock"] == 184 and v["deals_left"] == 23 and v["home"] == 16 and v["progress"] == 0.0


def test_one_rank_up_any_suit_every_foundation_listed(position):
    g = position(
        "leapyear", t1="2H", t2="3S", t3="5D", **foundations(f3="AH 2D", f9="AC 2C 3C 4C"), fill="s"
    )
    moves = [str(m) for m in g.legal_moves()]
    assert moves == [f"t1-f{k}" for k in range(1, 17) if k not in (3, 9)] + [
        "t2-f3",
        "t3-f9",
        "deal",
    ]
    refused(g, "t2-f2", "3S is not one rank above AD")
    refused(g, "t1-f3", "2H is not one rank above 2D")
    g.play("t3-f9")
    assert g.home() == 16 + 1 + 3 + 1


def test_no_wrap_at_king(position):
    kings = "AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC"
    g = position(
        "leapyear",
        t1="2H",
        t2="QH",
        **foundations(f1=kings, f2="AD 2C 3C 4C 5C 6C 7C 8C 9C TC JC"),
        fill="s",
    )
    refused(g, "t1-f1", "f1 is complete")
    assert [str(m) for m in g.legal_moves() if m.src == "t2"] == ["t2-f2"]
    assert "t1-f1" not in [str(m) for m in g.legal_moves()]


def test_only_tops_no_building_nothing_back(position):
    g = position("leapyear", t1="2H 5C", t2="6D", **foundations(), fill="s")
    refused(g, "t1-f1", "5C is not one rank above AC")
    refused(g, "t1-t2", "cards move only to the foundations")
    refused(g, "f1-t1", "only tableau cards move")
    refused(g, "t1-f1:2", "only single top cards move")
    refused(g, "t9-f1", "there is no pile t9 in leapyear")
    refused(g, "t1-f17", "there is no pile f17 in leapyear")


def test_deal_one_each_including_empty(position):
    g = position(
        "leapyear", t1="2H", t3="9D", s="3C 4C 5C 6C 7C 8C 9C TC", **foundations(), fill="t2"
    )
    g.play("t1-f1")
    eff = g.play("deal")
    assert eff.revealed == ("3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC")
    v = g.view()["piles"]
    assert v["t1"] == ["3C"] and v["t3"] == ["9D", "5C"]
    assert g.deals_left == 0
    refused(g, "deal", "the stock is empty")
    g.undo()
    assert g.view()["piles"]["t1"] == [] and g.deals_left == 1


def test_won_and_dead():
    from solrace.engine import from_text

    runs = " ".join("A23456789TJQK"[i] + "C" for i in range(13))
    lines = ["game leapyear"] + [f"t{i}" for i in range(1, 9)]
    lines[1] = "t1 KD"
    suits = ["C", "D", "H", "S"] * 4
    for k in range(16):
        cards = [r + suits[k] for r in "A23456789TJQK"]
        if k == 1:
            cards = cards[:-1]  # f2 waits for KD
        lines.append(f"f{k + 1} " + " ".join(cards))
    lines.append("s")
    g = from_text("\n".join(lines))
    assert not g.is_won() and g.progress() == pytest.approx(191 / 192)
    g.play("t1-f2")
    assert g.is_won() and g.progress() == 1.0 and g.legal_moves() == []
    assert runs  # keep the literal above readable


def test_dead_when_stuck(position):
    g = position(
        "leapyear",
        t1="5C",
        t2="5D",
        t3="5H",
        t4="5S",
        t5="7C",
        t6="7D",
        t7="7H",
        t8="8S",
        **foundations(),
        fill="t1",
    )
    # all foundations hold only their Ace (via the helper) and the stock is empty: nothing fits
    assert g.legal_moves() == [] and g.is_dead()
