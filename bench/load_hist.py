"""Latency histograms that load-generator processes fill and the coordinator merges.

Each worker process records thousands of latencies a second; keeping every
sample and shipping it back through a pipe would cost the worker more than the
work it measures. A log-linear histogram (HdrHistogram's idea, in a few lines)
keeps a bounded number of counters with about 1% relative error, merges by
adding counters, and still gives exact count, sum and max.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

#: buckets per power of two; 64 gives about 1.1% relative width
SUB_BUCKETS = 64
#: the smallest latency told apart, in seconds (1 µs); smaller ones share bucket 0
MIN_VALUE = 1e-6


def bucket_of(value: float) -> int:
    """Index of the bucket holding `value` seconds (values <= MIN_VALUE go to 0)."""
    if value <= MIN_VALUE:
        return 0
    return int(math.log2(value / MIN_VALUE) * SUB_BUCKETS) + 1


def bucket_high(index: int) -> float:
    """Upper edge in seconds of bucket `index`: percentiles report this, never under-stating."""
    if index <= 0:
        return MIN_VALUE
    return float(MIN_VALUE * 2.0 ** (index / SUB_BUCKETS))


@dataclass
class Histogram:
    """Counts of latencies (seconds) by log-linear bucket, plus exact count, sum, min and max."""

    counts: dict[int, int] = field(default_factory=dict)
    count: int = 0
    total: float = 0.0
    max: float = 0.0
    min: float = math.inf

    def record(self, value: float) -> None:
        b = bucket_of(value)
        self.counts[b] = self.counts.get(b, 0) + 1
        self.count += 1
        self.total += value
        if value > self.max:
            self.max = value
        if value < self.min:
            self.min = value

    def merge(self, other: Histogram) -> Histogram:
        """Add `other`'s samples into this one (in place) and return self."""
        for b, c in other.counts.items():
            self.counts[b] = self.counts.get(b, 0) + c
        self.count += other.count
        self.total += other.total
        self.max = max(self.max, other.max)
        self.min = min(self.min, other.min)
        return self

    def percentile(self, p: float) -> float:
        """The latency (s) at or below which `p` percent of samples lie; 0.0 when empty.

        Reports a bucket's upper edge, capped by the true max, so p100 == max.
        """
        if self.count == 0:
            return 0.0
        rank = max(1, math.ceil(self.count * p / 100.0))
        seen = 0
        for b in sorted(self.counts):
            seen += self.counts[b]
            if seen >= rank:
                return min(bucket_high(b), self.max)
        return self.max

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    def to_dict(self) -> dict[str, Any]:
        """A plain dict for pickling across processes cheaply (no class identity needed)."""
        return {
            "counts": self.counts,
            "count": self.count,
            "total": self.total,
            "max": self.max,
            "min": self.min,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Histogram:
        return cls(
            counts=dict(d["counts"]), count=d["count"], total=d["total"], max=d["max"], min=d["min"]
        )


def merged(hists: list[Histogram]) -> Histogram:
    """One histogram holding every sample of `hists`."""
    out = Histogram()
    for h in hists:
        out.merge(h)
    return out
