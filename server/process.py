"""A `solrace serve` child process for tests and benchmarks: real sockets, real Redis.

Tests that need a server (end-to-end, the Python client's, the web client's, the
load benchmark) start one of these so they exercise exactly what users run.
kill() is SIGKILL (a crash), stop() is SIGTERM (a clean shutdown, 1001 to clients).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from solrace.server.redis_process import free_port


class ServerProcess:
    def __init__(
        self,
        redis_url: str,
        prefix: str,
        *,
        port: int | None = None,
        extra_args: Sequence[str] = (),
        host: str = "127.0.0.1",
    ) -> None:
        self.redis_url = redis_url
        self.prefix = prefix
        self.host = host
        self.port = port or free_port(host)
        self.extra_args = list(extra_args)
        self.proc: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(
            prefix="solrace-server-", suffix=".log", delete=False
        )
        self.log_path = Path(self._log.name)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}/ws"

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "solrace",
            "serve",
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--redis-url",
            self.redis_url,
            "--redis-prefix",
            self.prefix,
            *self.extra_args,
        ]

    def start(self, timeout: float = 15.0) -> ServerProcess:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            self.command(), stdout=self._log, stderr=subprocess.STDOUT, env=env
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"solrace serve exited with {self.proc.returncode}:\n{self.log()[-3000:]}"
                )
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=0.5) as resp:
                    if resp.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(
            f"solrace serve did not answer /healthz within {timeout}s:\n{self.log()[-3000:]}"
        )

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def kill(self) -> None:
        """SIGKILL: the process dies with no chance to tidy up, like a crash."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM: stop accepting, close connections with 1001, exit."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def restart(self, timeout: float = 15.0) -> ServerProcess:
        """Start again on the same port (after kill() or stop())."""
        self.stop()
        return self.start(timeout)

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self._log.close()
        with_errors = exc and exc[0] is not None
        if not with_errors:
            self.log_path.unlink(missing_ok=True)
