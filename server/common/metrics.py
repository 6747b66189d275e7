"""What a server process exports at `/metrics`, in the Prometheus text format.

One registry per process (`METRICS`), not prometheus-client's global one: the numbers
describe this process, and a test that runs servers in its own process can read them.
Counters count from the process's start; gauges that are cheap to compute (connections,
rooms by state, rooms served) are read when scraped, through the functions `bind` gets,
so the move path pays for none of them. What each one is for: docs/OPERATIONS.md.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterable, Mapping

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    generate_latest,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from solrace.server.common.gctime import GcClock
from solrace.server.common.loop_lag import LoopLag

#: ack latency buckets, seconds: the goal is a p99 within 25 ms; a failover takes seconds
ACK_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class _RoomsByState(Collector):
    """`solrace_rooms{state=...}`: rooms this process holds, counted when scraped."""

    def __init__(self) -> None:
        self.source: Callable[[], Mapping[str, int]] = dict

    def collect(self) -> Iterable[Metric]:
        family = GaugeMetricFamily(
            "solrace_rooms", "rooms this process holds in memory, by state", labels=["state"]
        )
        for state, count in sorted(self.source().items()):
            family.add_metric([state], count)
        yield family


class _Count:
    """A counter the move path bumps: a plain int (prometheus-client's Counter takes a lock
    per `inc`), exported by `_MovePath` when scraped."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def inc(self, amount: int = 1) -> None:
        self.value += amount


class _MovePath(Collector):
    """The figures every move touches: moves acked, the ack latency histogram, fan-out
    frames. Kept as plain numbers (one event loop updates them) and turned into metric
    families only when scraped: prometheus-client's Counter and Histogram take a lock per
    update, three a move."""

    def __init__(self) -> None:
        self.moves = _Count()
        self.fanout = _Count()
        self.bounds = ACK_BUCKETS
        self.counts = [0] * (len(ACK_BUCKETS) + 1)  # per bucket, not cumulative; last: +Inf
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        # a bucket's upper bound is inclusive (le), as prometheus-client's
        self.counts[bisect.bisect_left(self.bounds, seconds)] += 1
        self.sum += seconds

    def collect(self) -> Iterable[Metric]:
        yield CounterMetricFamily(
            "solrace_moves_acked",
            "moves (and undos) stored in Redis and acknowledged",
            value=self.moves.value,
        )
        cumulative, buckets = 0, []
        for bound, count in zip([*map(float, self.bounds), float("inf")], self.counts, strict=True):
            cumulative += count
            buckets.append(("+Inf" if bound == float("inf") else repr(bound), cumulative))
        yield HistogramMetricFamily(
            "solrace_ack_seconds",
            "seconds from a move's frame being read to its ack being written",
            buckets=buckets,
            sum_value=self.sum,
        )
        yield CounterMetricFamily(
            "solrace_fanout_frames",
            "room event and spectator board frames written to connections",
            value=self.fanout.value,
        )


class Metrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.connections = Gauge("solrace_connections", "open WebSocket connections", registry=r)
        self._rooms = _RoomsByState()
        r.register(self._rooms)
        self._move_path = _MovePath()
        r.register(self._move_path)
        #: time in the cyclic garbage collector (installed by the server: `gc.install`)
        self.gc = GcClock()
        r.register(self.gc)
        #: the event loop's lateness (started by the server: `loop_lag.start`)
        self.loop_lag = LoopLag()
        r.register(self.loop_lag)
        #: moves acked (`acked`) and frames fanned out (`fanout_frames.inc(n)`)
        self.moves_acked = self._move_path.moves
        self.fanout_frames = self._move_path.fanout
        self.slow_readers_dropped = Counter(
            "solrace_slow_readers_dropped",
            "connections reset because they did not read what they were sent (ws_limits.py)",
            registry=r,
        )
        self.sockets_refused = Counter(
            "solrace_sockets_refused",
            "sockets answered 429 at once: their address held its cap of sockets not yet "
            "through the handshake (--handshakes-per-address)",
            registry=r,
        )
        self.redis_errors = Counter(
            "solrace_redis_errors",
            "Redis operations that failed (unreachable, failing over, or refused)",
            ["where"],
            registry=r,
        )
        self.redis_retries = Counter(
            "solrace_redis_retries",
            "Redis writes tried again: conflict (optimistic check lost), lobby (summary update "
            "failed earlier), pubsub (channels subscribed again after a lost connection)",
            ["why"],
            registry=r,
        )
        self.room_loads = Counter(
            "solrace_room_loads",
            "rooms read whole from Redis (document, every seat's log, replayed on the engine)",
            registry=r,
        )
        self.rooms_owned = Gauge(
            "solrace_rooms_owned",
            "rooms whose lease this process holds (it serves them)",
            registry=r,
        )
        self.rooms_taken_over = Counter(
            "solrace_rooms_taken_over",
            "rooms this process took over from a process that stopped beating (their presence "
            "counted out, or their lease taken after it expired)",
            registry=r,
        )

        self.solver_queued = Gauge(
            "solrace_solver_queued",
            "solver jobs waiting for a worker, by kind (hint, draw, verdict; server/solver/solver_jobs.py)",
            ["kind"],
            registry=r,
        )
        self.solver_refused = Counter(
            "solrace_solver_refused",
            "solver jobs refused because their kind's queue was full: a hint or draw answered "
            "busy, a verdict stored as unknown",
            ["kind"],
            registry=r,
        )
        self.verdicts_skipped = Counter(
            "solrace_verdicts_skipped",
            "finished races whose verdicts were not computed: abandoned (every racer resigned "
            "or left) or a practice daily attempt",
            ["why"],
            registry=r,
        )

    def acked(self, since: float) -> None:
        """A move was acknowledged; `since` is when its frame was read (time.monotonic())."""
        path = self._move_path
        path.moves.value += 1
        path.observe(time.monotonic() - since)

    def bind(
        self,
        *,
        connections: Callable[[], int],
        rooms_by_state: Callable[[], Mapping[str, int]],
        rooms_owned: Callable[[], int],
    ) -> None:
        """The server's live numbers, read at each scrape."""
        self.connections.set_function(lambda: float(connections()))
        self._rooms.source = rooms_by_state
        self.rooms_owned.set_function(lambda: float(rooms_owned()))

    def render(self) -> tuple[bytes, str]:
        """The exposition body and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


#: this process's metrics
METRICS = Metrics()
