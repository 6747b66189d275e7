"""The event loop's lateness probe (server/common/loop_lag.py)."""

from __future__ import annotations

import asyncio
import time

from solrace.server.common.loop_lag import LoopLag
from solrace.server.common.metrics import METRICS


async def test_a_blocked_loop_is_counted_late() -> None:
    lag = LoopLag(period=0.005)
    lag.start()
    try:
        await asyncio.sleep(0.03)
        time.sleep(0.06)  # noqa: ASYNC251 - the loop stands still for 60 ms, on purpose
        await asyncio.sleep(0.02)
    finally:
        lag.stop()
    assert lag.probes >= 3
    # the probe due during the block ran at least ~55 ms late: counted over 5, 20 and 50 ms
    assert lag.late[0] >= 1 and lag.late[1] >= 1 and lag.late[2] >= 1
    assert lag.longest >= 0.05 and lag.seconds >= 0.05
    samples = {(s.name, s.labels.get("over_ms")): s.value for f in lag.collect() for s in f.samples}
    assert samples[("solrace_loop_lag_total", "50")] >= 1
    assert samples[("solrace_loop_lag_probes_total", None)] == lag.probes


async def test_a_stopped_probe_runs_no_more() -> None:
    lag = LoopLag(period=0.005)
    lag.start()
    await asyncio.sleep(0.02)
    lag.stop()
    probes = lag.probes
    await asyncio.sleep(0.03)
    assert lag.probes == probes


def test_the_server_metrics_carry_the_probe() -> None:
    body, _ = METRICS.render()
    assert b'solrace_loop_lag_total{over_ms="20"}' in body
    assert b"solrace_loop_lag_longest_seconds" in body
