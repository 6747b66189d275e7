"""The load bench measures what it says: the warm-up runs the load, CPU is read over exactly
the measured window, and every address the bots connect from is exempt from the caps."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest
from helpers.timing import scaled
from solrace.bench.load import DEFAULT_SERVER_ARGS, Bench, parse_args
from solrace.bench.load_procs import EchoServer, cpu_seconds
from solrace.bench.load_report import Report
from solrace.bench.loadgen import SPECTATOR_SOURCE
from solrace.server.main import add_arguments, guard_limits
from solrace.server.net.guard import Guard


def test_bench_servers_exempt_every_address_the_bots_connect_from() -> None:
    """Spectators connect from 127.0.0.2: a cap on it broke the 1,000-spectator scenario."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    guard = Guard(guard_limits(parser.parse_args(DEFAULT_SERVER_ARGS)))
    assert guard.exempt("127.0.0.1")
    assert guard.exempt(SPECTATOR_SOURCE)


@pytest.mark.timeout(scaled(60))
def test_warmup_runs_the_load_and_cpu_is_read_over_the_window(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", redis_url)  # the session's Redis: INFO is only read
    args = parse_args(["--quick", "--workers", "1", "--work-dir", str(tmp_path)])
    with Bench(args, Report(io.StringIO())) as bench, EchoServer(tmp_path) as echo:
        # stretched by the time factor: at load 12 a 0.4 s window once measured no echo at all
        bench.sizes.warmup = scaled(0.6)
        assert bench.pool is not None
        bench.pool.each("echo", [{"url": f"ws://127.0.0.1:{echo.port}/", "count": 4}])
        before = cpu_seconds(echo.pid)
        res = bench.run_load({"echo": echo.pid}, 0.0, scaled(0.4))
        after = cpu_seconds(echo.pid)
        bench.close_all()
    assert res["acks"] > 0
    # the warm-up was load, not a sleep: echoes went round before the window opened, and the
    # echo server used CPU outside the window (how much depends on the machine's load: 0.04
    # CPU-s of a 0.6 s warm-up at load 19, so only that it did)
    assert res["warmup_echoes"] > 0, res
    outside = (after - before) - res["cpu_used"]["echo"]
    assert outside > 0, (after - before, res["cpu_used"])
    # CPU over the window alone: /proc read at its two edges, not around the whole run
    assert res["cpu_wall"] == pytest.approx(scaled(0.4), abs=scaled(0.15))
