"""The load benchmark's latency histogram: percentiles within its stated precision, merging exact."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from solrace.bench.load_hist import Histogram, bucket_high, bucket_of, merged


def test_empty_histogram_reports_zero() -> None:
    h = Histogram()
    assert h.percentile(50) == 0.0
    assert h.mean == 0.0


def test_percentiles_of_uniform_samples_within_two_percent() -> None:
    rng = random.Random(7)
    samples = [rng.uniform(0.0001, 0.1) for _ in range(20000)]
    h = Histogram()
    for s in samples:
        h.record(s)
    ordered = sorted(samples)
    for p in (50, 90, 99, 99.9):
        exact = ordered[int(len(ordered) * p / 100) - 1]
        assert exact <= h.percentile(p) <= exact * 1.02 + 1e-6
    assert h.percentile(100) == max(samples) == h.max
    assert h.count == len(samples)


@settings(max_examples=50, deadline=None)
@given(st.floats(min_value=1e-7, max_value=100.0, allow_nan=False))
def test_bucket_upper_edge_never_understates(value: float) -> None:
    assert bucket_high(bucket_of(value)) >= value


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.floats(min_value=1e-6, max_value=10.0), min_size=1, max_size=200),
    st.lists(st.floats(min_value=1e-6, max_value=10.0), min_size=1, max_size=200),
)
def test_merge_equals_recording_everything_in_one(a: list[float], b: list[float]) -> None:
    ha, hb, hall = Histogram(), Histogram(), Histogram()
    for v in a:
        ha.record(v)
        hall.record(v)
    for v in b:
        hb.record(v)
        hall.record(v)
    m = merged([Histogram.from_dict(ha.to_dict()), Histogram.from_dict(hb.to_dict())])
    assert m.counts == hall.counts
    assert m.count == hall.count and m.max == hall.max and m.min == hall.min
    for p in (50, 99):
        assert m.percentile(p) == hall.percentile(p)
