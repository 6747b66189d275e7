"""bench/solve_sample.py: seed lists, and one capped deal reported as the solver judged it."""

from __future__ import annotations

import json
from pathlib import Path

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


def test_after_an_earlier_sweep_only_its_unknown_deals_are_solved_and_staged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an earlier sweep at a small cap: seed 2 (default rules, won in about 83,000 positions)
    # cut at the cap, seed 5 decided there; --after solves seed 2 only and counts both
    earlier = tmp_path / "cap1.jsonl"
    rows = [
        {"seed": 2, "verdict": "unknown", "nodes": -1, "cpu": 0.01, "maxrss_kib": 1},
        {"seed": 5, "verdict": "lost", "nodes": 1234, "cpu": 0.5, "maxrss_kib": 1},
    ]
    earlier.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert solve_sample.main(["klondike", "--after", str(earlier), "--cap", "60"]) == 0
    out, err = capsys.readouterr()
    now = [json.loads(line) for line in out.splitlines()]
    assert [(r["seed"], r["verdict"]) for r in now] == [(2, "won")]
    assert f"staged ({earlier}, then cap 60.0s): won 1 lost 1 unknown 0 of 2" in err
    assert "decided 100.0%" in err
    mean = (0.5 + now[0]["cpu"]) / 2
    assert f"CPU s mean {mean:.3f}" in err


def test_after_a_sweep_with_nothing_unknown_there_is_nothing_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    earlier = tmp_path / "done.jsonl"
    earlier.write_text(json.dumps({"seed": 5, "verdict": "lost", "nodes": 9, "cpu": 0.5}) + "\n")
    assert solve_sample.main(["klondike", "--after", str(earlier)]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert "no deal to solve" in err


def test_seeds_or_an_earlier_sweep_are_required() -> None:
    with pytest.raises(SystemExit) as exc:
        solve_sample.main(["klondike"])
    assert exc.value.code == 2
