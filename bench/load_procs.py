"""The processes a load run measures: servers (echo and race), and their /proc figures.

Servers run as child processes so that the load generator's work never lands
on the server's loop, and so their memory (VmRSS) and CPU time (utime+stime)
can be read from /proc: CPU seconds per component are what tell, on a 2-core
machine, which process is the limit.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


#: the nice value of a measured process's autogroup (sched_autogroup: a session's share of CPU)
AUTOGROUP_NICE = -10


def favour_autogroup(pid: int, nice: int = AUTOGROUP_NICE) -> bool:
    """Give the autogroup of `pid` (a process started in a session of its own) the nice `nice`.

    With `kernel.sched_autogroup_enabled=1` the scheduler shares the CPU between sessions
    first: a server started in the benchmark's session would split one session's share with
    the load generators, and one started in a session of its own gets only a session's share
    against every other session on a shared machine. Its own session (start_new_session) and
    a favoured autogroup let it have what it asks for. Only root may lower a nice value:
    anywhere else (or on a kernel without autogroups) this quietly does nothing; returns
    whether it was set.
    """
    if os.geteuid() != 0:
        return False
    try:
        with open(f"/proc/{pid}/autogroup", "w") as f:
            f.write(str(nice))
        return True
    except OSError:
        return False


def autogroup_nice(pid: int) -> int | None:
    """The nice value of the autogroup of `pid` ("/autogroup-287 nice 0"), None if unknown."""
    try:
        with open(f"/proc/{pid}/autogroup") as f:
            return int(f.read().split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout}s")


class ChildServer:
    """A server child process on a free loopback port, stopped with SIGTERM.

    Its output goes to `{what}-{port}.log` in the run's work directory, so a failed
    start can show the log's tail and nothing lands in a fixed place shared with others.
    """

    what = "server"

    def __init__(self, work_dir: Path) -> None:
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.log_path = work_dir / f"{self.what}-{self.port}.log"

    def command(self) -> list[str]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = 30.0) -> ChildServer:
        # the child holds its own copy of the descriptor, so ours can close at once
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                self.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env(),
                cwd=self.cwd(),
                start_new_session=True,
            )
        favour_autogroup(self.proc.pid)
        wait_for_port(self.port, self.proc, timeout, self.what)
        return self

    def env(self) -> dict[str, str]:
        return dict(os.environ)

    def cwd(self) -> str | None:
        return None

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def __enter__(self) -> ChildServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class EchoServer(ChildServer):
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
    from solrace.server.front import owns

    return [
        next(f"W{k}" for k in range(10_000) if owns(index, count)(f"W{k}"))
        for index in range(count)
    ]


class RaceServer(ChildServer):
    """`solrace serve` on a Redis, with the benchmark's limits (rate, spectators) raised.

    `extra` holds serve flags as the server defines them; the coordinator prints
    them, so every figure says which settings it was measured with. With `workers` > 1 it
    is `solrace serve --workers N`: a front process and N workers, all of whose CPU counts
    (`pids`), and clients that name their room in the URL (`?room=CODE`) land on its worker.
    """

    what = "race"

    def __init__(
        self,
        work_dir: Path,
        redis_url: str,
        key_prefix: str,
        extra: list[str],
        workers: int = 1,
    ) -> None:
        super().__init__(work_dir)
        self.redis_url = redis_url
        self.key_prefix = key_prefix
        self.extra = extra
        self.workers = workers

    def start(self, timeout: float = 30.0) -> RaceServer:
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

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "solrace",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--redis-url",
            self.redis_url,
            "--redis-prefix",
            self.key_prefix,
            "--log-level",
            "WARNING",
            "--no-predraw-daily",  # no solver work beside the load being measured
            *(["--workers", str(self.workers)] if self.workers > 1 else []),
            *self.extra,
        ]

    def health(self, room: str | None = None) -> dict:
        """The server's /healthz JSON ({} when it does not answer); with `room`, that of the
        room's worker."""
        url = f"http://127.0.0.1:{self.port}/healthz" + (f"?room={room}" if room else "")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                return json.loads(r.read())
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
