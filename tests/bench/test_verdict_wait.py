"""bench/verdict_wait.py: the same races' verdicts without and with deeper ones, one run."""

from __future__ import annotations

import re

import pytest
from solrace.bench import verdict_wait


def test_both_ways_play_the_same_races_and_print_their_figures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    verdict_wait.main(["--races", "2", "--deep-cap", "0"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "first solved after" in line]
    assert [r.split(":")[0].strip() for r in rows] == ["no deeper verdicts", "deeper verdicts"]
    unknown = []
    for r in rows:
        mean, p50, top = map(
            float, re.search(r"mean ([\d.]+) s, p50 ([\d.]+) s, max ([\d.]+) s", r).groups()
        )
        assert 0 < p50 <= top and mean <= top
        unknown.append(int(re.search(r"(\d+) of 2 races with an unknown verdict", r).group(1)))
        assert float(re.search(r"CPU ([\d.]+) s", r).group(1)) > 0
    # the same deals both ways (text seeds under one server secret): the same first verdicts
    assert unknown[0] == unknown[1]
    assert "0 got a second solved (none)" in rows[0]  # the baseline never searches further


def test_winnable_rooms_run_with_the_stock_off_then_on(capsys: pytest.CaptureFixture[str]) -> None:
    verdict_wait.main(["--races", "1", "--deep-cap", "0", "--winnable"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "first solved after" in line]
    assert [r.split(":")[0].strip() for r in rows] == ["no deal stock", "deal stock"]
    # with the stock off no room finds one; with it on the first room finds it empty
    assert all("0 of 1 winnable rooms stocked" in r for r in rows)
    assert all("0 got a second solved (none)" in r for r in rows)  # no deeper verdicts
