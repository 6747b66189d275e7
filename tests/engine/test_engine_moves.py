"""Move objects and the canonical-text parser."""

from __future__ import annotations

import copy
import pickle

import pytest
from solrace.engine import IllegalMove, Move, new_game


@pytest.mark.parametrize(
    "text",
    [
        "t1-t3",
        "t1-t3:4",
        "w-f2",
        "t5-f1",
        "f3-t2",
        "t2-r:3",
        "r-t4:3",
        "t2-f1:13",
        "deal",
        "recycle",
        "t12-f16",
    ],
)
def test_canonical_round_trip(text):
    m = Move.parse(text)
    assert str(m) == text
    assert eval(repr(m)) is m  # the repr pastes back into Python
    assert Move.parse(text) is m


def test_fields_and_interning():
    m = Move("t1", "t3", 4)
    assert (m.src, m.dst, m.count) == ("t1", "t3", 4)
    assert Move.parse("t1-t3:4") is m and hash(m) == hash(Move("t1", "t3", 4))
    assert Move("deal").dst is None and Move("deal").count == 0
    assert copy.deepcopy(m) is m and pickle.loads(pickle.dumps(m)) is m
    with pytest.raises(AttributeError):
        m.count = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    "text",
    [
        "T1-t3",
        "t1-T3",
        "t1 -t3",
        " t1-t3",
        "t1-t3 ",
        "t1-t3:1",
        "t1-t3:0",
        "t1-t3:04",
        "t0-t1",
        "t01-t2",
        "x1-t2",
        "t1-t",
        "t1t3",
        "t1-t3:",
        "t1-t3:-2",
        "Deal",
        "DEAL",
        "deal ",
        "",
        "t1_t3",
        "t1—t3",
        "f1-t1:1",
    ],
)
def test_parser_refusals(text):
    with pytest.raises(IllegalMove) as info:
        Move.parse(text)
    assert "is not canonical move text" in info.value.reason
    assert isinstance(info.value, ValueError)


def test_non_text_is_refused():
    with pytest.raises(IllegalMove):
        Move.parse(5)  # type: ignore[arg-type]
    g = new_game("tabbycat", 1)
    with pytest.raises(IllegalMove):
        g.play(None)  # type: ignore[arg-type]


def test_play_refuses_noncanonical_and_changes_nothing():
    g = new_game("klondike", 3)
    before = g.to_text()
    for bad in ("T1-T3", "t1-t3:1", "t0-t1", "t8-t1", "t1-f5", "r-t1"):
        with pytest.raises(IllegalMove) as info:
            g.play(bad)
        assert str(info.value).startswith(bad)
    assert g.to_text() == before and g.history == []


def test_t9_in_a_four_pile_game():
    g = new_game("manx", 3)
    with pytest.raises(IllegalMove) as info:
        g.play("t9-t1")
    assert info.value.reason == "there is no pile t9 in manx"


def test_constructor_checks():
    for args in (("t0", "t1"), ("t1", "x"), ("t1", "t2", 0), ("t1", "t2", True), ("flip",)):
        with pytest.raises(ValueError):
            Move(*args)
