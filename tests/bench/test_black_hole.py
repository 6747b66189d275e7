"""The black-hole-solver comparison: its board is exactly our deal, and its answers are read right.

The C solver itself is not part of the project; the last test runs it only when
``$BLACK_HOLE_SOLVE`` names a built binary (see bench/black_hole.py for how it was built).
"""

from __future__ import annotations

import os

import pytest
from solrace.bench import black_hole
from solrace.engine import new_game, solve


def test_board_from_the_deck_is_the_engines_deal() -> None:
    for seed in (1, 2, 5, 77, 1999, 2**64 - 1):
        assert black_hole.board_text(seed) == black_hole.engine_board_text(seed)
    lines = black_hole.board_text(1).splitlines()
    g = new_game("puttputt", 1)
    view = g.view()["piles"]
    # the last card of each column line is the pile's top: the card the player can move
    assert [ln.split()[-1] for ln in lines[2:]] == [view[f"t{x}"][-1] for x in range(1, 8)]
    assert lines[1] == "Foundations: " + view["f1"][-1]
    # the first talon card is the one the engine's `deal` puts on f1
    g.play("deal")
    assert lines[0].split()[1] == g.view()["piles"]["f1"][-1]


def _as_its_output(moves: list[str]) -> str:
    """A solution written the way black-hole-solve prints one (columns numbered from 0)."""
    parts = ["Solved!"]
    for m in moves:
        if m == "deal":
            parts.append("Deal talon\n\nInfo: Card moved is XX\n\n\n====================\n")
        else:
            col = int(m[1 : m.index("-")]) - 1
            parts.append(
                f"Move a card from stack {col} to the foundations\n\n"
                "Info: Card moved is XX\n\n\n====================\n"
            )
    parts.append("--------------------\nTotal number of states checked is 42.\n")
    return "\n".join(parts)


def test_solution_text_maps_to_our_moves_and_replays() -> None:
    seed = next(s for s in range(1, 50) if solve(new_game("puttputt", s)).verdict == "won")
    moves = solve(new_game("puttputt", seed)).moves
    assert "deal" in moves
    verdict, parsed, states = black_hole.parse_output(_as_its_output(moves))
    assert (verdict, parsed, states) == ("won", moves, 42)
    assert black_hole.replays_to_win(seed, parsed)
    assert not black_hole.replays_to_win(seed, parsed[:-1])
    assert not black_hole.replays_to_win(seed, ["t1-f1", *parsed])  # illegal first move
    assert black_hole.parse_output("Unsolved!\n")[0] == "lost"
    with pytest.raises(ValueError):
        black_hole.parse_output("Error! bad board\n")


def test_report_lists_disagreements_and_the_ratio() -> None:
    row = {"ours_nodes": 5, "theirs_states": 9, "theirs_replays": True}
    rows = [
        {**row, "seed": 1, "ours": "won", "theirs": "won", "ours_cpu": 0.1, "theirs_cpu": 0.2},
        {**row, "seed": 2, "ours": "lost", "theirs": "won", "ours_cpu": 0.3, "theirs_cpu": 0.2},
    ]
    out = black_hole.report(rows, 0.001)
    assert out[0].startswith("deals 2: verdicts agree on 1;")
    assert "DISAGREE seed 2: ours lost, black-hole-solver won" in out
    assert out[-1].startswith("ratio of mean CPU per deal, ours / black-hole-solver: 1.00")


@pytest.mark.skipif(
    not os.environ.get("BLACK_HOLE_SOLVE"), reason="$BLACK_HOLE_SOLVE names no built binary"
)
def test_agrees_with_black_hole_solver_on_a_few_deals() -> None:
    binary = os.environ["BLACK_HOLE_SOLVE"]
    for seed in range(1, 41):
        row = black_hole.compare_seed((binary, seed))
        assert row["ours"] == row["theirs"], row
        assert row["theirs_replays"] in (True, None), row
