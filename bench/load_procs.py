"""The processes a load run measures: servers (echo and race), and their /proc figures.

Servers run as child processes so that the load generator's work never lands
on the server's loop, and so their memory (VmRSS) and CPU time (utime+stime)
can be read from /proc: CPU seconds per component are what tell, on a 2-core
machine, which process is the limit.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Self

from solrace.bench.server_process import (
    ListeningChild,
    ServerProcess,
)

CLK_TCK = os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    """Resident set size of a process, KiB (VmRSS in /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (its threads included)."""
    return sum(cpu_split(pid))


def cpu_split(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds a process has used so far. System time is the kernel's
    work for it: on loopback a socket write also runs the receiving side's TCP stack."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rindex(")") + 2 :].split()
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK


class CpuMeter:
    """CPU seconds used by named processes between start() and stop()."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.start_at = 0.0
        self.before: dict[str, tuple[float, float]] = {}
        self.used: dict[str, float] = {}
        self.system: dict[str, float] = {}  # of `used`, the kernel's part
        self.wall = 0.0

    def start(self) -> CpuMeter:
        self.start_at = time.monotonic()
        self.before = {k: cpu_split(p) for k, p in self.pids.items()}
        return self

    def stop(self) -> CpuMeter:
        self.wall = time.monotonic() - self.start_at
        after = {k: cpu_split(p) for k, p in self.pids.items()}
        self.used = {k: sum(after[k]) - sum(self.before[k]) for k in self.pids}
        self.system = {k: after[k][1] - self.before[k][1] for k in self.pids}
        return self

    def shares(self) -> dict[str, float]:
        """CPU use of each process as a fraction of one core (1.0 = one core busy)."""
        return {k: v / self.wall for k, v in self.used.items()} if self.wall else {}


class EchoServer(ListeningChild):
    """The echo baseline (bench/load_echo.py): a WebSocket server with no game, up once it
    listens."""

    own_session = True  # measured: a session (and autogroup) of its own

    what = "echo"

    def __init__(self, work_dir: Path, fanout: bool = False) -> None:
        super().__init__(work_dir)
        self.fanout = fanout

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "solrace.bench.load_echo",
            "--port",
            str(self.port),
            *(["--fanout"] if self.fanout else []),
        ]


def children(pid: int) -> list[int]:
    """The child processes of `pid` (its workers, for `solrace serve --workers N`)."""
    try:
        listed = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return sorted(int(c) for c in listed)
    except OSError:  # a kernel without the children file: scan every process's parent
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    raw = (entry / "stat").read_text()
                except OSError:
                    continue
                if int(raw[raw.rindex(")") + 2 :].split()[1]) == pid:
                    found.append(int(entry.name))
        return sorted(found)


def worker_codes(count: int) -> list[str]:
    """A room code routed to each of `count` workers (to ask each worker for its /healthz)."""
    from solrace.server.net.front import owns

    return [
        next(f"W{k}" for k in range(10_000) if owns(index, count)(f"W{k}"))
        for index in range(count)
    ]


#: the race servers' secret: a room's text seed is dealt from the deployment's secret, so
#: with a secret of each run's own (made in a fresh Redis) the bench's fixed text seed dealt
#: a different deal each run, and on one in ten or so its bots were dead within 60 moves:
#: a throughput run then measured no move (tests/bench/test_load_policy.py checks this one)
BENCH_SECRET = "solrace-bench"


class RaceServer(ServerProcess):
    """`solrace serve` on a Redis, with the benchmark's limits (rate, spectators) raised: the
    tests' ServerProcess (bench/server_process.py), with the benchmark's flags.

    `extra` holds serve flags as the server defines them; the coordinator prints
    them, so every figure says which settings it was measured with. With `workers` > 1 it
    is `solrace serve --workers N`: a front process and N workers, all of whose CPU counts
    (`pids`), and clients that name their room in the URL (`?room=CODE`) land on its worker.
    No address is exempt from the server's limits unless `extra` says so.
    """

    what = "race"
    own_session = True  # measured: a session (and autogroup) of its own

    def __init__(
        self, work_dir: Path, redis_url: str, key_prefix: str, extra: list[str], workers: int = 1
    ) -> None:
        flags = ["--log-level", "WARNING", "--no-predraw-daily"]  # no solver work beside the load
        if workers > 1:
            flags += ["--workers", str(workers)]
        super().__init__(
            redis_url,
            key_prefix,
            extra_args=[*flags, *extra],
            exempt=(),
            env={"SOLRACE_SECRET": BENCH_SECRET},
        )
        #: its output, in the run's work directory (a failed start shows the tail)
        self.log_path = work_dir / f"{self.what}-{self.port}.log"
        self.extra = extra
        self.workers = workers

    def start(self, timeout: float = 30.0) -> Self:
        super().start(timeout)
        if self.workers > 1:
            self.wait_for_workers(timeout)
        return self

    def wait_for_workers(self, timeout: float) -> None:
        """Until every worker answers /healthz (the front routes a room's request to its worker)."""
        codes = worker_codes(self.workers)
        deadline = time.monotonic() + timeout
        for index, code in enumerate(codes):
            while self.health(code).get("worker") != index:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"worker {index} of {self.what} did not come up")
                time.sleep(0.1)

    def pids(self) -> dict[str, int]:
        """Every process of this server by name (`server`, or `server-front` and `server-wN`)."""
        if self.workers <= 1:
            return {"server": self.pid}
        workers = children(self.pid)
        return {"server-front": self.pid, **{f"server-w{i}": p for i, p in enumerate(workers)}}

    def health(self, room: str | None = None) -> dict[str, Any]:
        """The server's /healthz JSON ({} when it does not answer); with `room`, that of the
        room's worker."""
        url = f"{self.url}/healthz" + (f"?room={room}" if room else "")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                health: dict[str, Any] = json.loads(r.read())
                return health
        except (OSError, ValueError):
            return {}

    def connections(self) -> int:
        """Open connections over every worker (/healthz of one worker counts its own)."""
        if self.workers <= 1:
            return int(self.health().get("connections", 0))
        return sum(int(self.health(c).get("connections", 0)) for c in worker_codes(self.workers))

    def settle(self, timeout: float = 15.0) -> None:
        """Wait until the server has closed every connection and a moment more.

        Closing hundreds of connections sets off a burst of Redis work in the server
        (presence, grace timers); the next scenario step should not land in it.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.connections() > 0:
            time.sleep(0.1)
        time.sleep(0.5)
