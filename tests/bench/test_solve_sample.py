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
    # the process's peak RSS so far, in KiB: never less than a bare interpreter, never falling
    rss = [r["maxrss_kib"] for r in rows]
    assert rss[0] > 5000 and rss == sorted(rss)
    assert "peak RSS" in err


def test_a_deal_decided_below_the_cap_is_the_same_at_any_cap(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the search restarts by positions, not time, and draws its orders from seeded generators:
    # a deal decided within a small cap is decided the same way, in the same positions, at a
    # larger one (so a sweep can follow only the unknown deals to a larger cap; SOLVABILITY.md,
    # fourteenth pass). Default rules, seed 2: won in about 83,000 positions (0.1 CPU s).
    rows = []
    for cap in ("5", "60"):
        assert solve_sample.main(["klondike", "--seeds", "2", "--cap", cap]) == 0
        out, _ = capsys.readouterr()
        rows.append(json.loads(out))
    assert rows[0]["verdict"] == rows[1]["verdict"] == "won"
    assert rows[0]["nodes"] == rows[1]["nodes"] > 10_000
