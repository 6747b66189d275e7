"""Child processes for tests and benchmarks: `solrace serve` on real sockets and real Redis.

Tests that need a server (end-to-end, the Python client's, the web client's) and the load
benchmark (bench/load_procs.RaceServer) start a ServerProcess, so they exercise exactly what
users run, through one implementation. It lives in solrace.bench, not in the server package:
the benchmark needs it at run time, outside the tests; the server never does.
kill() is SIGKILL (a crash), stop() is SIGTERM (a clean shutdown, 1001 to clients).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, ClassVar, Protocol, Self

from solrace.server.store.redis_process import free_port

#: the nice value of a measured process's autogroup (sched_autogroup: a session's share of CPU)
AUTOGROUP_NICE = -10


#: set (to anything but "" or "0") where the benchmark runs beside other work that must keep its
#: share: the test suite's smoke runs of the benchmark (tests/conftest.py)
SHARE_CPU_ENV = "SOLRACE_BENCH_SHARE_CPU"


def own_sessions() -> bool:
    """Whether the benchmark's measured processes take sessions of their own, favoured.

    Measured, they must (`favour_autogroup`). Inside the test suite they must not: six
    test workers, their servers and browsers share one session, and a smoke run's four or
    five processes each in a favoured session of its own took nearly both cores for the 40-50
    s of the run (its load runs as fast as it can), starving every other test of the suite
    at once; one echo connection of such a run was once closed mid-run at load 20."""
    return os.environ.get(SHARE_CPU_ENV, "") in ("", "0")


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
    if os.geteuid() != 0 or not own_sessions():
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


class Proc(Protocol):
    """What ChildProcess uses of a started child: a `subprocess.Popen`, or a stand-in."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | None: ...
    @property
    def stdout(self) -> IO[bytes] | None: ...
    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def kill(self) -> None: ...
    def terminate(self) -> None: ...


class Launcher(Protocol):
    """Starts a child's command instead of `subprocess.Popen` (tests/helpers/zygote.py)."""

    def __call__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        stdout: int | None,
        new_session: bool,
    ) -> Proc: ...


def popen(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | None,
    stdout: int | None,
    new_session: bool,
) -> subprocess.Popen[bytes]:
    """The plain `Launcher`: a fresh process, its output and errors to `stdout` (None: a pipe)."""
    return subprocess.Popen(
        argv,
        stdout=subprocess.PIPE if stdout is None else stdout,
        stderr=subprocess.STDOUT,
        env=dict(env),
        cwd=cwd,
        start_new_session=new_session,
    )


class ChildProcess:
    """A child process, up once `ready()` says so; its output is kept in memory (OutputTail),
    or written to `log_path` when one is set (the benchmark keeps its servers' logs).

    Subclasses say what to run (`command`) and how to tell it is up (`ready`)."""

    what = "child"
    #: start the child in a session of its own with a favoured autogroup (`favour_autogroup`):
    #: what the benchmark measures; the tests' servers stay in the test's session
    own_session = False
    #: what starts the command (None: `subprocess.Popen`, a fresh interpreter)
    launcher: ClassVar[Launcher | None] = None

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        #: variables set for the child on top of this process's environment
        self.env = dict(env or {})
        self.proc: Proc | None = None
        self._output = OutputTail()
        #: a file for the child's output instead of the in-memory tail
        self.log_path: Path | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def ready(self) -> bool:
        """Whether the started child answers (polled by start())."""
        raise NotImplementedError

    def cwd(self) -> str | None:
        """The child's working directory (None: this process's)."""
        return None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = 60.0) -> Self:
        """Start the child and wait until it is ready. The bound only catches a child that
        never comes up: on a loaded machine a first answer may take seconds (a probe that
        gave up after half a second, again and again, failed servers that were up)."""
        env = dict(os.environ, PYTHONUNBUFFERED="1", **self.env)
        if self.log_path is not None:
            # the child holds its own copy of the descriptor, so ours can close at once
            with open(self.log_path, "ab") as log:
                self.proc = self.launch(env, log.fileno())
        else:
            self.proc = self.launch(env, None)
            assert self.proc.stdout is not None
            self._output.follow(self.proc.stdout)
        if self.own_session:
            favour_autogroup(self.proc.pid)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"{self.what} exited with {self.proc.returncode}:\n{self.log()[-3000:]}"
                )
            if self.ready():
                return self
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"{self.what} did not come up within {timeout}s:\n{self.log()[-3000:]}")

    def launch(self, env: Mapping[str, str], stdout: int | None) -> Proc:
        """Start the command (`stdout`: where its output goes, None for a pipe of its own).
        Tests hand ServerProcess a `launcher` that skips the interpreter's start-up."""
        return (self.launcher or popen)(
            self.command(),
            env=env,
            cwd=self.cwd(),
            stdout=stdout,
            new_session=self.own_session and own_sessions(),
        )

    def log(self) -> str:
        """The end of what the process printed (both runs, when it was restarted)."""
        if self.log_path is not None:
            try:
                return self.log_path.read_text(errors="replace")[-OutputTail.LIMIT :]
            except OSError:
                return ""
        return self._output.text()

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

    def restart(self, timeout: float = 60.0) -> Self:
        """Start again (after kill() or stop())."""
        self.stop()
        return self.start(timeout)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ListeningChild(ChildProcess):
    """A child on a free loopback port, up once it accepts a connection there, its output in
    `{what}-{port}.log` of the run's work directory (the benchmark's echo and peer servers)."""

    def __init__(self, work_dir: Path) -> None:
        super().__init__()
        self.port = free_port()
        self.log_path = work_dir / f"{self.what}-{self.port}.log"

    def ready(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return True
        except OSError:
            return False


class ServerProcess(ChildProcess):
    """`solrace serve` on a free port (or `port`), up once its /healthz answers."""

    what = "solrace serve"

    def __init__(
        self,
        redis_url: str,
        prefix: str,
        *,
        port: int | None = None,
        extra_args: Sequence[str] = (),
        host: str = "127.0.0.1",
        exempt: Sequence[str] = ("127.0.0.1",),
        env: Mapping[str, str] | None = None,
    ) -> None:
        """`exempt`: addresses the server's per-address limits and budget leave alone. Tests
        and benchmarks all connect from 127.0.0.1, so it is exempt by default; a test of the
        limits connects from another loopback address (127.0.0.2, ...)."""
        super().__init__(env)
        self.redis_url = redis_url
        self.prefix = prefix
        self.host = host
        self.port = port or free_port(host)
        self.extra_args = [*(a for net in exempt for a in ("--exempt", net)), *extra_args]

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

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=5) as resp:
                return bool(resp.status == 200)
        except OSError:
            return False


class OutputTail:
    """The last bytes a child printed, kept in memory by a reader thread.

    A pipe that nobody reads would block the child once it fills; a log file would be
    a file the tests leave behind. Keeping only a bounded tail gives failure messages
    what they need and writes nothing to disk.
    """

    LIMIT = 64 * 1024

    def __init__(self) -> None:
        self._buf = bytearray()
        self._lock = threading.Lock()

    def follow(self, stream: IO[bytes]) -> None:
        threading.Thread(target=self._drain, args=(stream,), daemon=True).start()

    def _drain(self, stream: IO[bytes]) -> None:
        fd = stream.fileno()
        for chunk in iter(lambda: os.read(fd, 4096), b""):
            with self._lock:
                self._buf += chunk
                del self._buf[: -self.LIMIT]
        stream.close()

    def text(self) -> str:
        with self._lock:
            return self._buf.decode(errors="replace")
