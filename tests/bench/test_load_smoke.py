"""`solrace bench load --quick` runs end to end against the real server and prints every figure.

It asserts the output's shape only (labels, units, numbers present), never speed: the
benchmark reports, it does not judge, and the shared 2-core machine would make any speed
assertion flaky.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.timing import scaled
from solrace.bench.load import main

NUMBER = r"[0-9]+(?:\.[0-9]+)?"
LATENCY = rf"p50 {NUMBER} ms  p99 {NUMBER} ms  max {NUMBER} ms  n [0-9]+"

EXPECTED = [
    rf"echo baseline messages/s echoed: {NUMBER}",
    rf"echo baseline move-to-ack latency: {LATENCY}",
    rf"race server moves/s acknowledged: {NUMBER}",
    rf"race server move-to-ack latency: {LATENCY}",
    rf"race server server CPU per move: {NUMBER} us",
    rf"race server Redis CPU per move \(INFO cpu before/after\): {NUMBER} us",
    rf"ratio race server / echo baseline: {NUMBER}",
    # the server's own GC clock (solrace_gc_seconds on /metrics) over the window
    rf"race server of which in the garbage collector \(solrace_gc_seconds\): {NUMBER}% "
    rf"\({NUMBER} us a move\)",
    # what stalled its loop in the window: the collector's passes, the loop probe's lateness
    r"race server what stalled the loop: gc gen0 [0-9]+.*, gen1 [0-9]+.*, gen2 [0-9]+.*; "
    r"loop probes late of [0-9]+: >=5ms [0-9]+ >=20ms [0-9]+ >=50ms [0-9]+ >=100ms [0-9]+",
    rf"move-to-spectator latency: {LATENCY}",
    rf"race server RSS per idle connection \(after hello\): -?{NUMBER} KiB",
    rf"echo baseline RSS per idle connection: -?{NUMBER} KiB",
    rf"Redis MEMORY USAGE of a finished room's keys: {NUMBER} KiB",
    rf"Redis used_memory delta per finished room: -?{NUMBER} KiB",
    rf"two processes \(rooms split\) / one process: {NUMBER}",
    rf"two processes \(seats split\) / one process: {NUMBER}",
    r"cpu \(cores busy\): server",
    rf"race server Redis commands per move \(INFO commandstats, script calls included\): {NUMBER}",
    # the workers scenario: `serve --workers 2`, the front's CPU and each worker's counted
    rf"2 workers, run 1 moves/s acknowledged: {NUMBER}",
    r"cpu \(cores busy\): server-front [0-9.]+  server-w0 [0-9.]+  server-w1 [0-9.]+",
    rf"2 workers server CPU per move, front included \(median\): {NUMBER} us",
    # ... and with twice the rooms (equal load per process): aggregate moves/s against one's
    rf"2 workers, {NUMBER} rooms, run 1 moves/s acknowledged: {NUMBER}",
    rf"2 workers: aggregate moves/s vs one process at equal load per process: {NUMBER}x",
    rf"victim move-to-ack, idle: {LATENCY}",
    rf"victim move-to-ack, hostile: {LATENCY}",
    rf"ratio victim p99 hostile / idle: {NUMBER}",
    r"hostile replies: .*error rate_limited",
    # the scale-out scenario: 1, 2 and 4 processes on a local Redis Cluster, each part's CPU
    rf"1 process, pass 1 CPU per move: servers {NUMBER} us  masters {NUMBER} us  "
    rf"replicas {NUMBER} us  solver {NUMBER} us  proxy {NUMBER} us  loadgen {NUMBER} us",
    rf"4 processes, pass 1 move-to-ack latency: {LATENCY}",
    rf"4 processes, pass 1 idle before the load, cores busy: servers {NUMBER}  Redis {NUMBER}",
]


#: the throughput scenario's lines: the fast lane runs that scenario only (~5 s; all: ~80 s)
THROUGHPUT = EXPECTED[:9]


def test_quick_throughput_run_prints_its_figures(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # the quick run's 0.5 s window stretched by the time factor: at load 16 (and 12, for the
    # echo of test_load_window) one stall of the loaded machine spanned a whole 0.5 s window
    # and it measured no move
    window = ["--duration", str(scaled(0.5)), "--warmup", str(scaled(0.25))]
    args = ["--quick", "--scenario", "throughput", *window, "--work-dir", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert list(tmp_path.glob("race-*.log")) and list(tmp_path.glob("echo-*.log")), out
    for pattern in THROUGHPUT:
        assert re.search(pattern, out), f"missing /{pattern}/ in output:\n{out}"
    # rooms of 8 and of 1, Redis CPU per move, the ratio to the echo baseline
    assert len(re.findall(r"^  (MET|MISSED|n/a) +(.+)$", out, re.MULTILINE)) == 4, out
    assert float(re.search(rf"race server moves/s acknowledged: ({NUMBER})", out).group(1)) > 0
    assert "illegal_move" not in out


@pytest.mark.slow
@pytest.mark.timeout(scaled(300))
def test_quick_run_prints_every_figure(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["--quick", "--scenario", "all", "--work-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # The servers' logs went to the work directory asked for, and the report says where.
    assert f"work directory (server logs, profiles): {tmp_path}" in out
    assert list(tmp_path.glob("race-*.log")) and list(tmp_path.glob("echo-*.log")), out
    for pattern in EXPECTED:
        assert re.search(pattern, out), f"missing /{pattern}/ in output:\n{out}"
    goals = re.findall(r"^  (MET|MISSED|n/a) +(.+)$", out, re.MULTILINE)
    # throughput (CPU per move in rooms of 8 and of 1, Redis CPU per move, ratio to echo),
    # paced, spectators, idle memory, room memory, workers vs one process (CPU per move and
    # aggregate moves/s at equal load per process), the victim under hostile traffic
    assert len(goals) == 11, out
    # The bots' moves were real: the race server acknowledged some, with no illegal ones.
    assert float(re.search(rf"race server moves/s acknowledged: ({NUMBER})", out).group(1)) > 0
    assert "illegal_move" not in out
    # Putt Putt rooms were played to the end, so the finished-room figures mean something.
    assert "rooms that sent no results" not in out
