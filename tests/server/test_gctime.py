"""The garbage collector's clock and thresholds (server/common/gctime.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from solrace.server.common import gctime
from solrace.server.common.gctime import GcClock
from solrace.server.common.metrics import METRICS


@pytest.fixture
def restore_gc() -> Iterator[None]:
    before = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_the_clock_counts_each_generation_collected() -> None:
    clock = GcClock()
    clock.install()
    try:
        gc.collect(0)
        gc.collect(2)
    finally:
        clock.uninstall()
    assert clock.collections[0] >= 1 and clock.collections[2] >= 1
    assert clock.seconds[2] > 0.0
    samples = {
        (s.name, s.labels["generation"]): s.value
        for family in clock.collect()
        for s in family.samples
    }
    assert samples[("solrace_gc_collections_total", "2")] == clock.collections[2]
    assert samples[("solrace_gc_seconds_total", "2")] == clock.seconds[2]


def test_the_server_metrics_carry_the_clock() -> None:
    body, _ = METRICS.render()
    assert b'solrace_gc_seconds_total{generation="0"}' in body
    assert b'solrace_gc_collections_total{generation="2"}' in body


@pytest.mark.usefixtures("restore_gc")
def test_tune_freezes_what_is_alive_and_raises_the_first_threshold() -> None:
    gc.unfreeze()
    gctime.tune(12_345)
    assert gc.get_threshold()[0] == 12_345
    assert gc.get_freeze_count() > 0


@pytest.mark.usefixtures("restore_gc")
def test_tune_zero_leaves_python_alone() -> None:
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    gctime.tune(0)
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_the_clock_counts_long_collections_by_bound() -> None:
    clock = GcClock()
    clock._start = 0.0
    real = gctime.time.perf_counter
    try:
        gctime.time.perf_counter = lambda: 0.030  # type: ignore[assignment]
        clock._callback("stop", {"generation": 1})
    finally:
        gctime.time.perf_counter = real  # type: ignore[assignment]
    # 30 ms: over 5 and 20, not 50 or 100
    assert clock.pauses[1] == [1, 1, 0, 0] and clock.pauses[0] == [0, 0, 0, 0]
    assert clock.longest[1] == pytest.approx(0.030)
    samples = {
        (s.name, s.labels.get("generation"), s.labels.get("over_ms")): s.value
        for family in clock.collect()
        for s in family.samples
    }
    assert samples[("solrace_gc_pauses_total", "1", "20")] == 1
    assert samples[("solrace_gc_pauses_total", "1", "50")] == 0
    assert samples[("solrace_gc_longest_seconds", "1", None)] == pytest.approx(0.030)
