"""`solrace bench peer`: solrace's race server against Colyseus doing the same job (issue 21).

The peer is the room server teams pick instead of solrace: a Colyseus room
(bench/peers/colyseus/server.mjs) that deals the same seeded Klondike, checks each move's
number and legality, RPUSHes it to Redis and awaits that before the ack (which carries the
player's view, as solrace's does), sends progress to the room as 50 ms state patches and runs
on RedisPresence. Its load comes from Node processes using the official client
(bench/peers/colyseus/loadgen.js: the bots' policy of solrace.bench.load_policy), solrace's
from the usual load generator (solrace.bench.loadgen); both report the same figures, read
the same way: moves acked in the window, move-to-ack latency, server CPU per move from
/proc/PID/stat and Redis CPU per move from INFO cpu, both over exactly the window.

Scenarios, each run as solrace, Colyseus, solrace, Colyseus... (alternated, so the shared
machine's other load falls on both alike), each run on a fresh server, one Redis:

* throughput - rooms of 8, every bot moving as soon as its ack returns: CPU per move.
* paced      - 2,000 players (250 rooms of 8), one move a second each: ack p99, CPU per move.

Figures are printed with their ratio (solrace / Colyseus), never asserted. Node and npm
must be installed; `npm ci` installs the peer's node_modules on first use.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import math
import os
import select
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from solrace.bench.load import (
    DEFAULT_SERVER_ARGS,
    Bench,
    _median,
    load_line,
    machine_line,
    room_options,
)
from solrace.bench.load_hist import Histogram, merged
from solrace.bench.load_pool import split
from solrace.bench.load_report import Report, ms
from solrace.bench.server_process import ListeningChild, favour_autogroup, own_sessions

#: the peer's Node project (package.json, package-lock.json, server.mjs, loadgen.js)
PEER_DIR = Path(__file__).resolve().parent / "peers" / "colyseus"

SCENARIOS = ("throughput", "paced")


class PeerSetupError(RuntimeError):
    """Node, npm or the peer's packages are missing and cannot be installed."""


def ensure_node_modules(peer_dir: Path = PEER_DIR, timeout: float = 300.0) -> Path:
    """Install the peer's packages with `npm ci` unless the lockfile's are already there.

    node_modules is not committed: the first run installs exactly what package-lock.json
    pins (later runs find npm's own record of that install, node_modules/.package-lock.json,
    newer than the lockfile, and skip it). A file lock keeps two runs from installing into
    one directory at once. Raises PeerSetupError when node or npm is missing or npm fails
    (no network): a benchmark of the peer without the peer is no benchmark.
    """
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise PeerSetupError(f"`{tool}` is not installed: the Colyseus peer runs on Node")
    lock_path = peer_dir / ".npm-install.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        installed = peer_dir / "node_modules" / ".package-lock.json"
        wanted = peer_dir / "package-lock.json"
        if installed.exists() and installed.stat().st_mtime >= wanted.stat().st_mtime:
            return peer_dir / "node_modules"
        try:
            done = subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=peer_dir,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as exc:
            raise PeerSetupError(f"`npm ci` in {peer_dir} took over {timeout:.0f} s") from exc
        if done.returncode != 0:
            raise PeerSetupError(
                f"`npm ci` in {peer_dir} failed ({done.returncode}):\n{done.stderr[-2000:]}"
            )
    return peer_dir / "node_modules"


class ColyseusServer(ListeningChild):
    """The peer's server (server.mjs) on a free port, keys under the run's prefix, up once it
    listens; measured, so in a session of its own as solrace's servers are."""

    what = "colyseus"
    own_session = True

    def __init__(self, work_dir: Path, redis_url: str, key_prefix: str) -> None:
        super().__init__(work_dir)
        self.redis_url = redis_url
        self.key_prefix = key_prefix

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [
            "node",
            str(PEER_DIR / "server.mjs"),
            "--port",
            str(self.port),
            "--redis-url",
            self.redis_url,
            "--prefix",
            self.key_prefix,
            "--parent-pid",  # it stops when this process is gone (its own session hears no ^C)
            str(os.getpid()),
        ]

    def cwd(self) -> str | None:
        return str(PEER_DIR)


def _read_line(stream: IO[str], deadline: float, what: str) -> dict[str, Any]:
    """The next JSON line of a child's stdout, waiting until `deadline` (monotonic)."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise RuntimeError(f"{what} said nothing in time")
        ready, _, _ = select.select([stream], [], [], left)
        if ready:
            line = stream.readline()
            if not line:
                raise RuntimeError(f"{what} exited")
            return dict(json.loads(line))


class NodeLoad:
    """Node load-generator processes (loadgen.js) driving the peer: rooms split between them.

    Each runs in a session of its own with its autogroup favoured, as solrace's load
    generators do (solrace.bench.loadgen.worker_main), so both servers face load generators
    scheduled alike.
    """

    def __init__(
        self, work_dir: Path, url: str, rooms: int, players: int, pace: float, procs: int
    ) -> None:
        self.procs: list[subprocess.Popen[str]] = []
        self.logs: list[Path] = []
        for i, count in enumerate(split(rooms, procs)):
            if not count:
                continue
            log = work_dir / f"colyseus-loadgen-{os.getpid()}-{i}.log"
            with open(log, "w") as err:
                self.procs.append(
                    subprocess.Popen(
                        [
                            "node",
                            str(PEER_DIR / "loadgen.js"),
                            "--url",
                            url,
                            "--rooms",
                            str(count),
                            "--players",
                            str(players),
                            "--pace",
                            str(pace),
                            "--parent-pid",
                            str(os.getpid()),
                        ],
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=err,
                        text=True,
                        cwd=PEER_DIR,
                        # as solrace's load generators (loadgen.py)
                        start_new_session=own_sessions(),
                    )
                )
            favour_autogroup(self.procs[-1].pid)
            self.logs.append(log)

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def _lines(self, deadline: float) -> list[dict[str, Any]]:
        out = []
        for p, log in zip(self.procs, self.logs, strict=True):
            assert p.stdout is not None
            try:
                out.append(_read_line(p.stdout, deadline, f"colyseus load generator {p.pid}"))
            except RuntimeError as exc:
                raise RuntimeError(f"{exc}; its log:\n{log.read_text()[-2000:]}") from exc
        return out

    def wait_ready(self, timeout: float) -> int:
        """Wait until every process has its rooms full; returns the connections opened."""
        return sum(int(x["ready"]) for x in self._lines(time.monotonic() + timeout))

    def go(self, t0: float, t1: float) -> None:
        for p in self.procs:
            assert p.stdin is not None
            p.stdin.write(json.dumps({"t0": t0, "t1": t1}) + "\n")
            p.stdin.flush()

    def results(self, timeout: float) -> list[dict[str, Any]]:
        return self._lines(time.monotonic() + timeout)

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            for stream in (p.stdin, p.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()


def _histogram(d: dict[str, Any]) -> Histogram:
    """A histogram from loadgen.js's JSON (keys are strings there; an empty one has min null)."""
    return Histogram(
        counts={int(k): int(v) for k, v in d["counts"].items()},
        count=int(d["count"]),
        total=float(d["total"]),
        max=float(d["max"]),
        min=math.inf if d["min"] is None else float(d["min"]),
    )


@dataclass
class PeerSizes:
    """How big each scenario is; --quick shrinks everything to a smoke-test run."""

    repeats: int = 2
    warmup: float = 2.0
    duration: float = 10.0
    tp_rooms: int = 25
    players: int = 8
    paced_rooms: int = 250
    paced_duration: float = 20.0

    @classmethod
    def quick(cls) -> PeerSizes:
        # rooms of 8 still (the figure is for rooms of 8); paced keeps 1 s so every bot moves
        return cls(
            repeats=1,
            warmup=0.3,
            duration=0.5,
            tp_rooms=2,
            paced_rooms=2,
            paced_duration=1.0,
        )


class PeerBench:
    """Both servers under one load, alternated, on one Redis (solrace.bench.load.Bench's)."""

    def __init__(self, bench: Bench, sizes: PeerSizes, report: Report) -> None:
        self.bench = bench
        self.sizes = sizes
        self.report = report

    # -- one run of each side ----------------------------------------------

    def solrace_run(self, rooms: int, pace: float, duration: float) -> dict[str, Any]:
        b, s = self.bench, self.sizes
        server = b.race_server(1)
        try:
            b.open_rooms([server.ws_url], rooms, s.players, room_options("klondike", s.players))
            assert b.pool is not None
            b.pool.all("start")
            res = b.run_load(server.pids(), pace, duration)
            b.close_all()
        finally:
            server.stop()
        return res

    def colyseus_run(self, rooms: int, pace: float, duration: float) -> dict[str, Any]:
        b, s = self.bench, self.sizes
        server = ColyseusServer(b.work_dir, b.redis_url, b.fresh_prefix() + "colyseus:")
        try:
            server.start()
        except Exception:
            self.report.line(server.log()[-2000:])
            raise
        load = NodeLoad(b.work_dir, server.url, rooms, s.players, pace, b.args.workers)
        try:
            conns = load.wait_ready(timeout=120 + rooms)
            t0 = time.monotonic() + s.warmup  # the bots move from `go` on: the warm-up is load
            t1 = t0 + duration
            load.go(t0, t1)
            window = b.measure_window({"colyseus": server.pid}, t0, t1, loadgens=load.pids)
            parts = load.results(timeout=60 + duration)
        finally:
            load.close()
            server.stop()
        errors: dict[str, int] = {}
        for p in parts:
            for code, n in p["errors"].items():
                errors[code] = errors.get(code, 0) + int(n)
        acks = sum(int(p["acks"]) for p in parts)
        return {
            "ack": merged([_histogram(p["ack"]) for p in parts]),
            "acks": acks,
            "rate": acks / duration,
            "frames_rate": sum(int(p["frames"]) for p in parts) / duration,
            "errors": errors,
            "late": sum(int(p["late"]) for p in parts),
            "connections": conns,
            **window,
        }

    def alternate(
        self, what: str, rooms: int, pace: float, duration: float
    ) -> dict[str, list[Any]]:
        """solrace, Colyseus, solrace, Colyseus... each run printed as it ends."""
        runs: dict[str, list[dict[str, Any]]] = {"solrace": [], "colyseus": []}
        for rep in range(self.sizes.repeats):
            for side, run in (("solrace", self.solrace_run), ("colyseus", self.colyseus_run)):
                res = run(rooms, pace, duration)
                self.bench.print_load(f"{what} {side}, run {rep + 1}", res)
                runs[side].append(res)
        return runs

    # -- scenarios ---------------------------------------------------------

    def compare(self, what: str, runs: dict[str, list[Any]]) -> dict[str, dict[str, float]]:
        """The median of each side's runs for each figure, both printed with their ratio."""
        r = self.report
        figures: dict[str, dict[str, float]] = {}
        for side, res in runs.items():
            ok = [x for x in res if x["rate"]]
            figures[side] = {
                "rate": _median([x["rate"] for x in res]),
                "p50": _median([x["ack"].percentile(50) for x in ok]),
                "p99": _median([x["ack"].percentile(99) for x in ok]),
                "server_us": _median([x["server_us"] for x in ok]),
                "redis_us": _median([x["redis_us"] for x in ok]),
                "errors": float(sum(sum(x["errors"].values()) for x in res)),
            }
        sol, col = figures["solrace"], figures["colyseus"]

        def line(label: str, key: str, fmt: str, unit: str) -> None:
            ratio = sol[key] / col[key] if col[key] else 0.0
            r.figure(
                f"{what} {label} (median of {self.sizes.repeats})",
                f"solrace {sol[key]:{fmt}}{unit}  colyseus {col[key]:{fmt}}{unit}  "
                f"ratio solrace/colyseus {ratio:.2f}",
            )

        line("moves/s acknowledged", "rate", ".0f", "")
        for key in ("p50", "p99"):
            sol[key + "_ms"], col[key + "_ms"] = sol[key] * 1000, col[key] * 1000
            line(f"move-to-ack {key}", key + "_ms", ".2f", " ms")
        line("server CPU per move", "server_us", ".0f", " us")
        line("Redis CPU per move", "redis_us", ".1f", " us")
        if sol["errors"] or col["errors"]:
            r.figure(f"{what} errors", f"solrace {sol['errors']:.0f}  colyseus {col['errors']:.0f}")
        return figures

    def scenario_throughput(self) -> None:
        s, r = self.sizes, self.report
        r.heading(
            f"throughput: {s.tp_rooms} rooms of {s.players} = {s.tp_rooms * s.players} "
            f"players moving as fast as acks return; {s.duration:g} s after {s.warmup:g} s "
            f"of warm-up load; {s.repeats} runs of each, alternated; {load_line()}"
        )
        runs = self.alternate("full speed", s.tp_rooms, 0.0, s.duration)
        fig = self.compare("full speed", runs)
        sol, col = fig["solrace"], fig["colyseus"]
        r.goal(
            f"full speed, rooms of {s.players}: server CPU per move <= Colyseus's",
            f"{sol['server_us']:.0f} vs {col['server_us']:.0f} us",
            "<= Colyseus's and <= 100 us",
            bool(col["server_us"]) and sol["server_us"] <= min(col["server_us"], 100.0),
        )

    def scenario_paced(self) -> None:
        s, r = self.sizes, self.report
        n = s.paced_rooms * s.players
        r.heading(
            f"paced: {n} players in {s.paced_rooms} rooms of {s.players}, one move a second "
            f"each; {s.paced_duration:g} s after {s.warmup:g} s of warm-up load; "
            f"{s.repeats} runs of each, alternated; {load_line()}"
        )
        runs = self.alternate("paced", s.paced_rooms, 1.0, s.paced_duration)
        fig = self.compare("paced", runs)
        sol, col = fig["solrace"], fig["colyseus"]
        r.goal(
            f"{n} paced players: move-to-ack p99 <= Colyseus's",
            f"{ms(sol['p99'])} vs {ms(col['p99'])}",
            "<= Colyseus's and <= 50 ms",
            bool(col["p99"]) and sol["p99"] <= min(col["p99"], 0.050),
        )
        r.goal(
            f"{n} paced players: server CPU per move <= Colyseus's",
            f"{sol['server_us']:.0f} vs {col['server_us']:.0f} us",
            "<= Colyseus's and <= 200 us",
            bool(col["server_us"]) and sol["server_us"] <= min(col["server_us"], 200.0),
        )


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="solrace bench peer", description=__doc__.split("\n")[0])
    p.add_argument("--scenario", default="all", choices=[*SCENARIOS, "all"])
    p.add_argument("--quick", action="store_true", help="tiny sizes, one run each (smoke test)")
    p.add_argument("--workers", type=int, default=2, help="load-generator processes per side")
    p.add_argument("--repeats", type=int, help="runs of each side per scenario (2)")
    p.add_argument("--duration", type=float, help="seconds measured at full speed (10)")
    p.add_argument("--warmup", type=float, help="seconds of load before measuring (2)")
    p.add_argument("--tp-rooms", dest="tp_rooms", type=int, help="rooms at full speed (25)")
    p.add_argument("--paced-rooms", dest="paced_rooms", type=int, help="paced rooms (250)")
    p.add_argument("--paced-duration", dest="paced_duration", type=float, help="seconds (20)")
    p.add_argument("--work-dir", dest="work_dir", help="where the servers' logs go")
    p.add_argument(
        "--server-loop",
        dest="server_loop",
        choices=("asyncio", "uvloop"),
        default="asyncio",
        help="solrace serve's --loop (default asyncio)",
    )
    args = p.parse_args(argv)
    # what solrace.bench.load.Bench reads
    args.server_workers, args.profile = 1, False
    args.server_args = None
    if args.server_loop != "asyncio":
        args.server_args = [*DEFAULT_SERVER_ARGS, "--loop", args.server_loop]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    sizes = PeerSizes.quick() if args.quick else PeerSizes()
    for name in vars(sizes):
        if getattr(args, name, None) is not None:
            setattr(sizes, name, getattr(args, name))
    report = Report()
    report.line("solrace bench peer: solrace's race server vs a Colyseus room doing its job")
    report.line(machine_line())
    ensure_node_modules()
    versions = json.loads((PEER_DIR / "package-lock.json").read_text())["packages"]
    report.line(
        "peer: "
        + "  ".join(
            f"{name} {versions[f'node_modules/{name}']['version']}"
            for name in ("@colyseus/core", "@colyseus/redis-presence", "@colyseus/sdk", "ioredis")
        )
        + f"  node {subprocess.run(['node', '--version'], capture_output=True, text=True).stdout.strip()}"
    )
    chosen = SCENARIOS if args.scenario == "all" else (args.scenario,)
    with Bench(args, report) as bench:
        bench.sizes.warmup = sizes.warmup
        report.line(f"work directory (server logs): {bench.work_dir}")
        report.line(f"redis: {bench.redis_url}  load-generator processes per side: {args.workers}")
        peer = PeerBench(bench, sizes, report)
        started = time.monotonic()
        for name in chosen:
            getattr(peer, "scenario_" + name)()
        report.summary()
        report.line(f"total time: {time.monotonic() - started:.0f} s; {load_line()}")
    return 0
