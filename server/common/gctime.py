"""The garbage collector on the move path: its clock and its thresholds.

A move allocates its ack, its frames, its event and the engine's view tuples, nearly all
freed by reference counting the moment they are dropped; Python's cyclic collector still
runs every 700 net allocations (generation 0), every tenth of those a generation-1 pass,
and, as long-lived objects pile up (2,000 connections, their rooms and logs), full
collections over every tracked object. With 2,000 paced players that was 31-35% of the
server's CPU (143-155 µs a move; BENCHMARKS.md, issue 21, 2026-12-04). `tune` freezes what the
start-up made (the modules, the engine's tables: never collected again) and raises the
first threshold (`--gc-threshold`, default GC_THRESHOLD): a pass every 50,000 net
allocations finds the same few cycles a pass every 700 did, for a fraction of the passes.

A pass stops the loop for as long as it walks its generation: with 2,000 paced players a
generation-0 pass (every ~5-15 s) walks what the last seconds' moves keep alive (the seats'
cached views above all), 20-46 ms, and a generation-1 pass (every tenth) what ten of them
left, ~300 ms while every move kept a tracked undo record and log entry: ack p99 41.6 ms and
max 308 ms over 70 s, against ~10-16 ms in windows without one. A move keeps no such object
now (engine/klondike.py `_undo`, server/rules/room.py `SeatRace._texts`): half as many
generation-0 passes, none of generation 1 in 70 s. A threshold of 5,000 made the passes
shorter (none over 50 ms) but walked the live views ten times as often: 6 µs a move
against 1 (BENCHMARKS.md, issue 21, branch core21j).

`GcClock` says how much it costs: `solrace_gc_seconds{generation}` and
`solrace_gc_collections{generation}` on /metrics, read before and after a benchmark's
window (`solrace bench load` prints the share), and how long the loop stood still for it:
`solrace_gc_pauses{generation,over_ms}` counts the collections that took at least
`over_ms` (STALL_BUCKETS_MS), and `solrace_gc_longest_seconds{generation}` is the longest.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector
from solrace.server.common.loop_lag import STALL_BUCKETS_MS, count_stall

#: net allocations between two generation-0 collections (Python's default: 700)
GC_THRESHOLD = 50_000


def tune(threshold: int = GC_THRESHOLD) -> None:
    """Freeze every object alive now (call once the server has started) and collect
    generation 0 every `threshold` net allocations; 0 leaves Python's defaults."""
    if threshold <= 0:
        return
    gc.collect()
    gc.freeze()
    _, second, third = gc.get_threshold()
    gc.set_threshold(threshold, second, third)


class GcClock(Collector):
    """Seconds and collections per generation since `install`."""

    def __init__(self) -> None:
        self.seconds = [0.0, 0.0, 0.0]
        self.collections = [0, 0, 0]
        #: per generation, collections that took at least STALL_BUCKETS_MS[i]
        self.pauses = [[0] * len(STALL_BUCKETS_MS) for _ in range(3)]
        self.longest = [0.0, 0.0, 0.0]
        self._start = 0.0
        self._installed = False

    def install(self) -> None:
        if not self._installed:
            gc.callbacks.append(self._callback)
            self._installed = True

    def uninstall(self) -> None:
        if self._installed:
            gc.callbacks.remove(self._callback)
            self._installed = False

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
            return
        gen = info["generation"]
        took = time.perf_counter() - self._start
        self.seconds[gen] += took
        self.collections[gen] += 1
        if took > self.longest[gen]:
            self.longest[gen] = took
        count_stall(self.pauses[gen], took)

    def collect(self) -> Iterable[CounterMetricFamily | GaugeMetricFamily]:
        secs = CounterMetricFamily(
            "solrace_gc_seconds",
            "wall time in the cyclic garbage collector, by the generation collected",
            labels=["generation"],
        )
        runs = CounterMetricFamily(
            "solrace_gc_collections",
            "cyclic garbage collections, by the generation collected",
            labels=["generation"],
        )
        pauses = CounterMetricFamily(
            "solrace_gc_pauses",
            "cyclic garbage collections that took at least over_ms (the loop stood still)",
            labels=["generation", "over_ms"],
        )
        longest = GaugeMetricFamily(
            "solrace_gc_longest_seconds",
            "the longest collection of the generation so far",
            labels=["generation"],
        )
        for gen in range(3):
            secs.add_metric([str(gen)], self.seconds[gen])
            runs.add_metric([str(gen)], float(self.collections[gen]))
            longest.add_metric([str(gen)], self.longest[gen])
            for bound, count in zip(STALL_BUCKETS_MS, self.pauses[gen], strict=True):
                pauses.add_metric([str(gen), str(bound)], float(count))
        yield secs
        yield runs
        yield pauses
        yield longest
