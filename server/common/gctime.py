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

`GcClock` says how much it costs: `solrace_gc_seconds{generation}` and
`solrace_gc_collections{generation}` on /metrics, read before and after a benchmark's
window (`solrace bench load` prints the share).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable
from typing import Any

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

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
        self.seconds[gen] += time.perf_counter() - self._start
        self.collections[gen] += 1

    def collect(self) -> Iterable[CounterMetricFamily]:
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
        for gen in range(3):
            secs.add_metric([str(gen)], self.seconds[gen])
            runs.add_metric([str(gen)], float(self.collections[gen]))
        yield secs
        yield runs
