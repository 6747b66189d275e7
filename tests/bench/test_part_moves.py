"""bench/part_moves.py: the part moves of a win that Solvitaire's Klondike preset refuses."""

from __future__ import annotations

import json

import pytest
from helpers.positions import build_position
from solrace.bench import part_moves

STD = "klondike draw=3 moves=build"


def test_a_part_move_uncovering_a_card_that_cannot_go_home_is_refused() -> None:
    # 5S off t1's run (9S 8H 7C 6D 5S) onto 6H uncovers 6D, which cannot go home (no diamond
    # on the foundations): Solvitaire's preset refuses it
    game = build_position(STD, t1="[KC] 9S 8H 7C 6D 5S", t2="6H")
    assert part_moves.refused(game, "t1-t2:1") == "6D"


def test_a_part_move_is_allowed_when_the_uncovered_card_goes_home() -> None:
    game = build_position(STD, t1="[KC] 9S 8H 7C 6D 5S", t2="6H", f1="AD 2D 3D 4D 5D")
    assert part_moves.refused(game, "t1-t2:1") is None  # 6D goes on 5D
    assert part_moves.refused(game, "t1-t3:5") is None  # the whole run, onto an empty pile


def test_wins_are_checked_move_by_move(capsys: pytest.CaptureFixture[str]) -> None:
    # standard seed 5 is won within a few hundred positions, with part moves the preset
    # refuses; seed 3's line has none (docs/SOLVABILITY.md)
    assert part_moves.main(["--seeds", "3,5", "--budget", "20000"]) == 0
    rows = {r["seed"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert rows[3]["verdict"] == "won" and rows[3]["refused"] == []
    assert rows[5]["verdict"] == "won" and rows[5]["refused"]
    assert all(move.startswith("t") and ":" in move for _, move, _ in rows[5]["refused"])
