"""How late the event loop runs what is due: a probe every PERIOD_S.

An ack's latency is the loop's as much as Redis's: a turn that does too much (a collection
of the garbage collector, a tick's fan-out to every room at once, timers firing together)
delays every ack behind it, and a loop well under a core can still stall. `LoopLag` asks
to run every PERIOD_S and counts how late it ran: `solrace_loop_lag{over_ms}` (runs at
least `over_ms` late, STALL_BUCKETS_MS), `solrace_loop_lag_seconds` (the lateness summed) and
`solrace_loop_lag_longest_seconds`, which `solrace bench load` reads around its window.
At 100 probes a second it costs the loop ~0.05% of a core.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

#: seconds between two probes
PERIOD_S = 0.01
#: a stall (a late probe here, a garbage collection in gctime.py) is counted in its
#: `over_ms` series for each bound it reaches
STALL_BUCKETS_MS = (5, 20, 50, 100)


def count_stall(over: list[int], seconds: float) -> None:
    """Count a stall of `seconds` in `over`: one for each STALL_BUCKETS_MS bound it reaches."""
    ms = seconds * 1000
    for i, bound in enumerate(STALL_BUCKETS_MS):
        if ms < bound:
            break
        over[i] += 1


class LoopLag(Collector):
    """The loop's lateness, probed every `period` seconds once `start`ed."""

    def __init__(self, period: float = PERIOD_S) -> None:
        self.period = period
        self.probes = 0
        self.late = [0] * len(STALL_BUCKETS_MS)
        self.seconds = 0.0
        self.longest = 0.0
        self._due = 0.0
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        if self._handle is None:
            loop = asyncio.get_running_loop()
            self._due = loop.time() + self.period
            self._handle = loop.call_at(self._due, self._probe)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _probe(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        lag = now - self._due
        self.probes += 1
        if lag > 0:
            self.seconds += lag
            if lag > self.longest:
                self.longest = lag
            count_stall(self.late, lag)
        self._due = now + self.period
        self._handle = loop.call_at(self._due, self._probe)

    def collect(self) -> Iterable[CounterMetricFamily | GaugeMetricFamily]:
        late = CounterMetricFamily(
            "solrace_loop_lag",
            f"probes of the event loop (one every {self.period * 1000:g} ms) that ran at "
            "least over_ms late",
            labels=["over_ms"],
        )
        for bound, count in zip(STALL_BUCKETS_MS, self.late, strict=True):
            late.add_metric([str(bound)], float(count))
        yield late
        yield CounterMetricFamily(
            "solrace_loop_lag_probes", "probes of the event loop run", value=self.probes
        )
        yield CounterMetricFamily(
            "solrace_loop_lag_seconds", "the probes' lateness, summed", value=self.seconds
        )
        yield GaugeMetricFamily(
            "solrace_loop_lag_longest_seconds",
            "the latest any probe of the event loop ran",
            value=self.longest,
        )
