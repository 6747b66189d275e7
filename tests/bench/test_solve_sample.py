"""bench/solve_sample.py: seed lists, and one capped deal reported as the solver judged it."""

from __future__ import annotations

import json

import pytest
from solrace.bench import solve_sample


def test_seeds_take_ranges_and_single_seeds() -> None:
    assert solve_sample._seeds("3") == [3]
    assert solve_sample._seeds("1-4") == [1, 2, 3, 4]
    assert solve_sample._seeds("1,4,7-9") == [1, 4, 7, 8, 9]


def test_one_line_per_deal_with_the_solver_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    # draw three with build moves: seed 2 is dead as dealt, seed 3 won within a few hundred
    # positions (docs/SOLVABILITY.md, sixth pass)
    argv = ["klondike", "--seeds", "2,3", "-o", "draw=3", "-o", "moves=build", "--cap", "60"]
    assert solve_sample.main(argv) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["seed"], r["verdict"]) for r in rows] == [(2, "lost"), (3, "won")]
    assert "won 1 lost 1 unknown 0 of 2" in err
