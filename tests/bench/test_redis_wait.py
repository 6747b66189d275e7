"""bench/redis_wait.py: a master and its replica, moves stored with and without `WAIT 1`."""

from __future__ import annotations

import re

import pytest
from helpers.timing import scaled
from solrace.bench import redis_wait


def test_every_wait_finds_the_replica_and_every_figure_is_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # each WAIT may wait for the replica up to a second, stretched by the time factor: at load
    # 12 (a fresh clone's CI run) one WAIT once ran out at 1 s and counted short
    wait_ms = str(round(scaled(1000)))
    redis_wait.main(["--moves", "300", "--repeats", "1", "--per-turn", "1,4", "--wait-ms", wait_ms])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "a turn," in line]
    # a row per batch size and way, the WAIT rows after their plain ones
    assert [re.match(r"\s*(\d+) a turn, (no WAIT|WAIT 1)", r).groups() for r in rows] == [
        ("1", "no WAIT"),
        ("1", "WAIT 1"),
        ("4", "no WAIT"),
        ("4", "WAIT 1"),
    ]
    # WAIT answered that the replica had every write: the replica is live and in sync
    assert all(r.endswith("WAIT short of a replica 0") for r in rows if "WAIT 1" in r)
    for r in rows:
        p50, p99 = map(float, re.search(r"p50 ([\d.]+) ms, p99 ([\d.]+) ms", r).groups())
        assert 0 < p50 <= p99
