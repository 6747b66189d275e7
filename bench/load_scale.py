"""The scale-out scenario of `solrace bench load` (issue 22): one paced load on 1, 2 and 4
`solrace serve` processes sharing a local Redis Cluster, the CPU every part spends per move.

What it stands for: hosts behind the shipped proxy, which hashes each room's code to one host
(server/deploy/nginx.conf), on a Redis Cluster of 3 masters and 3 replicas
(docker-compose.cluster.yml). Here every process is one host: whole rooms are spread over the
processes as the proxy's hash spreads them (each room's every seat on one process), and no
proxy runs; with `--scale-proxy`, nginx runs the shipped config (in plain http: the load
generators speak ws://) in front of the processes, the rooms' creators name their rooms'
codes as the real clients do, and nginx's CPU is counted.

The same load (rooms x players, each player moving once a second) runs on each count of
processes in turn, on one cluster; what is printed per count is CPU per acknowledged move of

* the servers (every `solrace serve`, summed),
* Redis (the cluster's masters and, apart, its replicas, from /proc),
* the solver (every process below a server: its pool and multiprocessing's resource tracker;
  verdicts are solved as races end, so this follows how many races end in the window: none
  with the default rooms, which have no time limit; `--scale-time-limit S` ends every race
  S seconds after its start, and its verdicts are solved while the window runs),
* the load generators (not the deployment's: the clients' side),

and the ack latency (p50, p99). On a shared 2-core machine the rates and latencies follow the
machine's other load; CPU per move is the figure to compare across counts.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solrace.bench.load_hist import Histogram, merged
from solrace.bench.load_pool import split
from solrace.bench.load_procs import RaceServer, children, cpu_seconds
from solrace.bench.load_report import ms
from solrace.server.store.redis_process import RedisClusterProcess, free_port

if TYPE_CHECKING:
    from solrace.bench.load import Bench

#: the counts of server processes compared (each a host behind the proxy)
COUNTS = (1, 2, 4)
#: seconds the servers are measured idle (up, nobody connected) before each run
IDLE_S = 3.0
#: seconds the scale-out waits at most, after a window whose races ended, for their verdicts
DRAIN_S = 300.0
#: the parts whose CPU is reported per move, in the order printed
PARTS = ("servers", "masters", "replicas", "solver", "proxy", "loadgen")


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (its children, theirs, ...): a server's solver pool."""
    out: list[int] = []
    todo = children(pid)
    while todo:
        child = todo.pop()
        out.append(child)
        todo += children(child)
    return out


def cpu_or_zero(pid: int) -> float:
    """CPU seconds a process has used; 0 for one that is gone (it is not counted)."""
    try:
        return cpu_seconds(pid)
    except (OSError, ValueError):
        return 0.0


def roles(cluster: RedisClusterProcess) -> tuple[list[int], list[int]]:
    """The pids of the cluster's masters and of its replicas (CLUSTER NODES of one node)."""
    import redis

    client: Any = redis.Redis(host=cluster.host, port=cluster.nodes[0].port)
    try:
        lines = client.execute_command("CLUSTER", "NODES").decode().splitlines()
    finally:
        client.close()
    master_ports = {
        int(line.split()[1].split("@")[0].rsplit(":", 1)[1])
        for line in lines
        if "master" in line.split()[2].split(",")
    }
    nodes = [(n.port, n.proc.pid) for n in cluster.nodes if n.proc is not None]
    return (
        [pid for port, pid in nodes if port in master_ports],
        [pid for port, pid in nodes if port not in master_ports],
    )


def solver_metrics(servers: list[RaceServer]) -> dict[str, float]:
    """Verdict jobs still queued and refused (stored `unknown`: the queue's bound), summed over
    the servers' /metrics."""
    out = {"queued": 0.0, "refused": 0.0}
    for server in servers:
        try:
            with urllib.request.urlopen(f"{server.url}/metrics", timeout=5) as r:
                text = r.read().decode()
        except OSError:
            continue
        for name, key in (
            ("solrace_solver_queued", "queued"),
            ("solrace_solver_refused_total", "refused"),
        ):
            for line in text.splitlines():
                if line.startswith(f'{name}{{kind="verdict"}} '):
                    out[key] += float(line.split()[-1])
    return out


def drain_solver(
    meter: PartMeter, quiet: float = 2.0, longest: float = DRAIN_S
) -> tuple[float, bool]:
    """CPU seconds of the servers' solver processes from the window's start until they have
    been idle for `quiet` seconds (at most `longest` seconds after now), and whether they
    were (False: still solving when the wait ended)."""

    def used() -> float:
        return sum(max(0.0, cpu_or_zero(p) - meter.before.get(p, 0.0)) for p in meter.solver_pids())

    last, since, end = used(), time.monotonic(), time.monotonic() + longest
    while time.monotonic() < end:
        time.sleep(0.5)
        now = used()
        if now > last + 0.01:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return last, True
    return last, False


class PartMeter:
    """CPU seconds of each part over a window. The solver's processes are found at both ends
    of the window (a pool starts at the first solve): one born inside the window counts from
    its birth, one that died inside it is not counted."""

    def __init__(
        self,
        servers: list[int],
        masters: list[int],
        replicas: list[int],
        loadgen: list[int],
        with_solver: bool = True,
        proxy: list[int] | None = None,
    ) -> None:
        self.fixed = {
            "servers": servers,
            "masters": masters,
            "replicas": replicas,
            "loadgen": loadgen,
            "proxy": proxy or [],
        }
        self.servers = servers
        self.with_solver = with_solver
        self.before: dict[int, float] = {}
        self.used: dict[str, float] = {}
        self.started = 0.0
        self.wall = 0.0

    def solver_pids(self) -> list[int]:
        return [p for s in self.servers for p in descendants(s)] if self.with_solver else []

    def start(self) -> None:
        self.started = time.monotonic()
        pids = [p for group in self.fixed.values() for p in group] + self.solver_pids()
        self.before = {p: cpu_or_zero(p) for p in pids}

    def stop(self) -> None:
        self.wall = time.monotonic() - self.started
        groups = {**self.fixed, "solver": self.solver_pids()}
        self.used = {
            name: sum(max(0.0, cpu_or_zero(p) - self.before.get(p, 0.0)) for p in pids)
            for name, pids in groups.items()
        }


class Nginx:
    """nginx with the shipped config (server/deploy/nginx.conf) in front of local servers, in
    plain http: its upstreams are the servers' ports, its https server listens without TLS (the
    bench's load generators speak ws://), nginx's own paths go to the work directory. Every
    routing and proxying directive is the shipped one's, so is `worker_processes auto`."""

    CONF = Path(__file__).resolve().parents[1] / "server" / "deploy" / "nginx.conf"

    def __init__(self, work_dir: Path, ports: list[int]) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="nginx-", dir=work_dir))
        self.port = free_port()
        self.ports = ports
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def config(self) -> str:
        text = self.CONF.read_text()
        hosts = re.findall(r"^ *server solrace-[a-z]+:8765[^;\n]*;\n", text, re.M)
        if not hosts:
            raise RuntimeError(f"{self.CONF} names no upstream solrace-X:8765")
        text = text.replace(
            "".join(hosts),
            "".join(re.sub(r"solrace-[a-z]+:8765", f"127.0.0.1:{p}", hosts[0]) for p in self.ports),
        )
        text = text.replace("listen 80;", f"listen 127.0.0.1:{free_port()};")
        text = text.replace("listen 443 ssl;", f"listen 127.0.0.1:{self.port};")
        text = re.sub(r"^ *ssl_[a-z_]+ [^;]*;\n", "", text, flags=re.M)
        temp = " ".join(
            f"{k}_temp_path {self.dir / k};"
            for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        text = text.replace("http {", f"http {{\n    access_log off;\n    {temp}", 1)
        return (
            f"pid {self.dir / 'nginx.pid'};\nerror_log {self.dir / 'error.log'};\ndaemon off;\n"
            + text
        )

    def start(self, timeout: float = 15.0) -> Nginx:
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        conf = self.dir / "nginx.conf"
        conf.write_text(self.config())
        self.proc = subprocess.Popen(
            [binary, "-c", str(conf), "-p", str(self.dir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{self.port}/nginx-health", timeout=2
                ):
                    break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        "nginx did not start: " + (self.dir / "error.log").read_text()[-2000:]
                    ) from None
                time.sleep(0.05)
        return self

    def pids(self) -> list[int]:
        """The master and its worker processes."""
        assert self.proc is not None
        return [self.proc.pid, *children(self.proc.pid)]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def paced_on(
    bench: Bench,
    cluster: RedisClusterProcess,
    count: int,
    rooms: int,
    players: int,
    duration: float,
) -> dict[str, Any]:
    """One run: `count` fresh servers on `cluster`, `rooms` rooms of `players` spread whole
    over them, each player moving once a second for warm-up + `duration`."""
    from solrace.bench.load import room_options

    assert bench.pool is not None
    pool = bench.pool
    # a key prefix of its own: the rooms a run leaves (their racers gone, grace periods running)
    # end in the next run's servers otherwise, and their verdicts would be its solver's work
    prefix = f"{bench.prefix}{count}-{time.monotonic_ns()}:"
    servers = []
    proxy: Nginx | None = None
    try:
        for _ in range(count):
            server = RaceServer(bench.work_dir, cluster.url, prefix, bench.server_args)
            servers.append(server.start(60))
        if bench.args.scale_proxy:
            proxy = Nginx(bench.work_dir, [s.port for s in servers]).start()
        # what the processes cost with nobody connected (beats, the deadline janitor's polls):
        # the part of each process's CPU that does not follow the moves
        masters, replicas = roles(cluster)
        idle = PartMeter([s.pid for s in servers], masters, replicas, [], with_solver=False)
        idle.start()
        time.sleep(IDLE_S)
        idle.stop()
        # a time limit ends the races in the window: their verdicts are the solver's work
        options = room_options("klondike", players, time_limit=bench.sizes.scale_time_limit)
        if proxy is not None:  # the proxy's room hash spreads the rooms; creators name theirs
            pool.each(
                "rooms",
                [
                    {
                        "urls": [proxy.ws_url],
                        "rooms": n,
                        "players": players,
                        "options": options,
                        "name_code": True,
                    }
                    for n in split(rooms, pool.size)
                ],
            )
        else:
            for server, n in zip(servers, split(rooms, count), strict=True):
                if n:
                    bench.open_rooms([server.ws_url], n, players, options)
        pool.all("start")
        t0, t1 = pool.run(bench.sizes.warmup, duration, pace=1.0)
        meter = PartMeter(
            [s.pid for s in servers],
            masters,
            replicas,
            pool.pids,
            proxy=proxy.pids() if proxy is not None else None,
        )
        time.sleep(max(0.0, t0 - time.monotonic()))
        load_before = Path("/proc/loadavg").read_text().split()[:3]
        meter.start()
        time.sleep(max(0.0, t1 - time.monotonic()))
        meter.stop()
        parts = [
            pool.recv(i, timeout=duration + bench.sizes.warmup + 900) for i in range(pool.size)
        ]
        # with races ended by their clock: the solver's CPU until every verdict is done (its
        # processes idle for 2 s), counted from the window's start
        solver_all = drain_solver(meter) if bench.sizes.scale_time_limit else None
        verdicts = solver_metrics(servers) if bench.sizes.scale_time_limit else {}
        bench.close_all()
        for server in servers:
            server.settle()
    finally:
        if proxy is not None:
            proxy.stop()
        for server in servers:
            with contextlib.suppress(Exception):
                server.stop()
    errors: dict[str, int] = {}
    for p in parts:
        for code, n in p["errors"].items():
            errors[code] = errors.get(code, 0) + n
    acks = sum(p["acks"] for p in parts)
    hist: Histogram = merged([Histogram.from_dict(p["ack"]) for p in parts])
    return {
        "count": count,
        "acks": acks,
        "rate": acks / duration,
        "ack": hist,
        "used": meter.used,
        "wall": meter.wall,
        "per_move_us": {k: v / acks * 1e6 if acks else 0.0 for k, v in meter.used.items()},
        "finished": sum(p["finished"] for p in parts),
        "errors": errors,
        "late": sum(p["late"] for p in parts),
        "load": " ".join(load_before),
        "solver_all": solver_all,
        "verdicts": verdicts,
        "idle": {k: v / idle.wall for k, v in idle.used.items()},
        # what the moves themselves cost: the window's CPU less the idle rate over its length
        "net_us": {
            k: max(0.0, meter.used[k] - idle.used[k] / idle.wall * meter.wall) / acks * 1e6
            if acks and idle.wall
            else 0.0
            for k in ("servers", "masters", "replicas")
        },
    }


def scenario_scale_out(bench: Bench) -> None:
    """The same paced load on 1, 2 and 4 processes on one 3+3 cluster; a table per count."""
    s, r = bench.sizes, bench.report
    rooms, players, duration = s.scale_rooms, s.paced_players, s.scale_duration
    counts = bench.args.scale_counts or COUNTS
    r.heading(
        f"scale-out: {rooms * players} players in {rooms} rooms of {players}, one move a second "
        f"each, on {', '.join(map(str, counts))} `solrace serve` processes ("
        + (
            "behind nginx with the shipped config, routing by room"
            if bench.args.scale_proxy
            else "whole rooms spread over them, as the proxy's room hash does; no proxy"
        )
        + ") sharing a local Redis Cluster of 3 masters "
        f"and 3 replicas; {duration:.0f} s after {s.warmup:.1f} s warm-up, {s.scale_repeats} "
        f"pass(es); rooms' time limit {s.scale_time_limit or 'none'}"
    )
    with tempfile.TemporaryDirectory(prefix="solrace-scale-") as folder:
        cluster = RedisClusterProcess(str(Path(folder) / "cluster"), masters=3, replicas=1)
        with cluster:
            runs: dict[int, list[dict[str, Any]]] = {c: [] for c in counts}
            for rep in range(s.scale_repeats):
                for count in counts:
                    res = paced_on(bench, cluster, count, rooms, players, duration)
                    runs[count].append(res)
                    label = f"{count} process{'es' if count > 1 else ''}, pass {rep + 1}"
                    r.figure(f"{label} load average at the window's start", res["load"])
                    r.figure(f"{label} moves/s acknowledged", f"{res['rate']:.0f}")
                    r.latency(f"{label} move-to-ack latency", res["ack"])
                    r.figure(
                        f"{label} CPU per move",
                        "  ".join(f"{k} {res['per_move_us'][k]:.0f} us" for k in PARTS),
                    )
                    r.figure(
                        f"{label} cores busy",
                        "  ".join(f"{k} {res['used'][k] / res['wall']:.2f}" for k in PARTS),
                    )
                    r.figure(
                        f"{label} idle before the load, cores busy",
                        f"servers {res['idle']['servers']:.3f}  "
                        f"Redis {res['idle']['masters'] + res['idle']['replicas']:.3f}",
                    )
                    r.figure(f"{label} seats finished in the run", str(res["finished"]))
                    limit = s.scale_time_limit
                    if limit and limit + 1 < s.warmup + duration:
                        # every race ended by its clock inside the window: its verdicts were
                        # asked then (and solved in the window, or queued past it)
                        r.figure(
                            f"{label} solver CPU per race ended (every race ended by its "
                            f"{limit} s clock in the window)",
                            f"{res['used']['solver'] / rooms * 1000:.0f} ms",
                        )
                    if res["solver_all"] is not None:
                        spent, done = res["solver_all"]
                        r.figure(
                            f"{label} solver CPU per race, from the window's start until "
                            + ("every verdict was done" if done else "the bench stopped waiting"),
                            f"{spent / rooms * 1000:.0f} ms ({spent:.1f} s for {rooms} races "
                            f"of {players}"
                            + ("" if done else f"; still solving after {DRAIN_S:.0f} s")
                            + ")",
                        )
                        r.figure(
                            f"{label} verdict jobs then still queued, refused (stored unknown)",
                            f"{res['verdicts'].get('queued', 0):.0f}, "
                            f"{res['verdicts'].get('refused', 0):.0f}",
                        )
                    if res["errors"]:
                        r.figure(
                            f"{label} errors",
                            ", ".join(f"{k} {v}" for k, v in sorted(res["errors"].items())),
                        )
    r.line()
    r.line(
        "  | processes | moves/s | servers us/move | Redis masters us/move | replicas us/move "
        "| solver us/move | proxy us/move | loadgen us/move | ack p50 | ack p99 | servers+Redis vs the first "
        "count's median | servers, idle taken out | Redis, idle taken out | load |"
    )
    r.line("  |" + " --- |" * 14)

    def deploy_us(res: dict[str, Any]) -> float:
        us: dict[str, float] = res["per_move_us"]
        return us["servers"] + us["masters"] + us["replicas"]

    # the first count's median: every row's servers + Redis CPU per move against it
    firsts = sorted(deploy_us(res) for res in runs[counts[0]])
    base = firsts[len(firsts) // 2] if firsts else 0.0
    for count in counts:
        for res in runs[count]:
            us = res["per_move_us"]
            ratio = f"{deploy_us(res) / base:.2f}x" if base else "n/a"
            net = res["net_us"]
            r.line(
                f"  | {count} | {res['rate']:.0f} | {us['servers']:.0f} | {us['masters']:.0f} | "
                f"{us['replicas']:.0f} | "
                f"{us['solver']:.0f} | {us['proxy']:.0f} | {us['loadgen']:.0f} | "
                f"{ms(res['ack'].percentile(50))} | "
                f"{ms(res['ack'].percentile(99))} | {ratio} | {net['servers']:.0f} | "
                f"{net['masters'] + net['replicas']:.0f} | {res['load']} |"
            )
    bench.results["scale-out"] = {str(count): done for count, done in runs.items()}
