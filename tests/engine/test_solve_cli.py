"""`solrace solve`: one JSON line per deal in seed order, a summary on stderr, worker processes."""

from __future__ import annotations

import json

import pytest
from solrace.cli import main
from solrace.engine import new_game
from solrace.solve_cli import percentile, wilson


def test_one_seed_prints_the_solution(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "puttputt", "--seed", "1"]) == 0
    out, err = capsys.readouterr()
    row = json.loads(out)
    assert {"game", "seed", "options", "verdict", "moves", "nodes", "seconds"} <= set(row)
    assert row["game"] == "puttputt" and row["seed"] == 1 and row["verdict"] == "won"
    g = new_game("puttputt", 1)
    for m in row["moves"]:
        g.play(m)
    assert g.is_won() and err == ""


def test_seed_range_with_jobs_keeps_order_and_summarises(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["solve", "puttputt", "--seeds", "3-6", "--jobs", "2", "--no-moves"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["seed"] for r in rows] == [3, 4, 5, 6]
    assert [r["verdict"] for r in rows] == ["won", "won", "lost", "won"]
    assert all(r["moves"] is None for r in rows)
    assert "puttputt seeds 3-6" in err and "won 3 (75.0%" in err and "lost 1 (25.0%" in err
    assert "p99" in err


def test_options_and_budget_reach_the_solver(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["solve", "klondike", "--seed", "1", "-o", "draw=3", "--budget", "5", "--no-moves"]
    assert main(argv) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["options"] == {"draw": 3, "moves": "top", "passes": 0}
    assert row["verdict"] == "unknown" and row["nodes"] <= 5


def test_bad_option_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "klondike", "--seed", "1", "-o", "draw=2"]) == 2
    assert "draw" in capsys.readouterr().err


def test_wilson_and_percentile() -> None:
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson(5, 10)
    assert (lo, hi) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    assert percentile([float(i) for i in range(1, 101)], 0.99) == 99.0
