"""`solrace serve` started from an interpreter that has imported the server already.

A test's server spends 0.3 CPU-s of its start-up importing the package (redis-py, asyncio,
the engine, the server's modules), and the suite starts about 180: a ninth of the suite's
CPU, on a 2-core machine where CPU is the wall time. Each pytest worker instead starts one
*zygote*: a process that imports the server once and then forks a child per server asked
for. The child is a real `solrace serve` process (its own pid, sockets, signals, exit
status); it skips only the import. The benchmark and the tests of the command line itself
start theirs with a fresh interpreter (subprocess), as users do.

The worker and its zygote talk over a Unix socket (`socket.send_fds`): a request carries the
command's arguments, environment and working directory and two descriptors, where the
child's output goes and a pipe on which the zygote writes the child's exit status (as
`subprocess.Popen.returncode` reads it: negative for a signal) once it has reaped it.
`ForkedChild` reads that pipe to answer poll() and wait(), so it stands in for a Popen.

SOLRACE_TEST_ZYGOTE=0 starts every server with a fresh interpreter instead (tests/conftest.py).
"""

from __future__ import annotations

import atexit
import io
import json
import os
import select
import selectors
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import IO

from solrace.bench.server_process import popen

#: the command the zygote can run: `python -m solrace ARGS` (anything else goes to Popen)
MODULE = ["-m", "solrace"]
#: the largest request (arguments and environment) the socket carries
MAX_REQUEST = 1 << 18


class ForkedChild:
    """A child the zygote forked: what ChildProcess uses of a `subprocess.Popen`."""

    def __init__(self, args: Sequence[str], pid: int, status: int, stdout: IO[bytes] | None):
        self.args = list(args)
        self.pid = pid
        self.stdout = stdout
        self.returncode: int | None = None
        self._status = status  # read end of the exit-status pipe

    def poll(self) -> int | None:
        return self._wait(0.0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._wait(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        return code

    def _wait(self, timeout: float | None) -> int | None:
        if self.returncode is None:
            ready, _, _ = select.select([self._status], [], [], timeout)
            if ready:
                text = os.read(self._status, 64)
                os.close(self._status)
                # no text: the zygote died before it reaped the child (it never does unless
                # killed); the child's status is lost with it
                self.returncode = int(text) if text else -signal.SIGKILL
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Zygote:
    """This process's zygote, started at the first launch and stopped when this process
    exits (it exits when its socket closes, killing any child still running)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        atexit.register(self.close)

    def close(self) -> None:
        """Stop the zygote (and any child it still runs) and reap it."""
        with self._lock:
            if self._sock is not None:
                self._sock.close()
                self._sock = None
            if self._proc is not None:
                self._proc.wait()
                self._proc = None

    def launch(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        stdout: int | None,
        new_session: bool,
    ) -> ForkedChild | subprocess.Popen[bytes]:
        """Start `argv` (`stdout`: a descriptor for its output, None for a pipe of its own)."""
        if list(argv[1:3]) != MODULE:
            return popen(argv, env=env, cwd=cwd, stdout=stdout, new_session=new_session)
        out_r, out_w = os.pipe() if stdout is None else (-1, stdout)
        status_r, status_w = os.pipe()
        request = json.dumps(
            {
                "args": list(argv[3:]),
                "env": dict(env),
                "cwd": cwd or os.getcwd(),  # Popen's None: this process's directory now
                "session": new_session,
            }
        ).encode()
        try:
            with self._lock:
                sock = self._socket()
                socket.send_fds(sock, [request], [out_w, status_w])
                answer = json.loads(sock.recv(MAX_REQUEST) or b'{"error": "the zygote exited"}')
        finally:
            os.close(status_w)
            if stdout is None:
                os.close(out_w)
        if "pid" not in answer:
            os.close(status_r)
            if out_r >= 0:
                os.close(out_r)
            raise RuntimeError(f"the zygote did not start {argv}: {answer.get('error')}")
        reader = os.fdopen(out_r, "rb", buffering=0) if out_r >= 0 else None
        return ForkedChild(argv, answer["pid"], status_r, reader)

    def _socket(self) -> socket.socket:
        if self._sock is None or (self._proc is not None and self._proc.poll() is not None):
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            self._proc = subprocess.Popen(
                [sys.executable, __file__, str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
            )
            theirs.close()
            self._sock = ours
        return self._sock


ZYGOTE = Zygote()


# ------------------------------------------------------------------ the zygote process


def serve_requests(sock: socket.socket) -> dict[str, object] | None:
    """Fork a child per request until the socket closes. Returns None in the zygote (time to
    exit) and the request in each child, which runs it."""
    children: dict[int, tuple[int, int]] = {}  # pidfd -> (pid, status descriptor)
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is not sock:
                pidfd = int(key.fd)
                pid, status = children.pop(pidfd)
                selector.unregister(pidfd)
                os.close(pidfd)
                code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
                os.write(status, str(code).encode())
                os.close(status)
                continue
            try:
                data, fds, _, _ = socket.recv_fds(sock, MAX_REQUEST, 2)
            except OSError:
                data, fds = b"", []
            if not data:  # the worker is gone: so are its servers
                for pid, _ in children.values():
                    os.kill(pid, signal.SIGKILL)
                return None
            out, status = fds
            request: dict[str, object] = json.loads(data)
            settled, settling = os.pipe()
            pid = os.fork()
            if pid == 0:
                selector.close()
                sock.close()
                for pidfd, (_, other) in children.items():
                    os.close(pidfd)
                    os.close(other)
                os.close(status)
                os.close(settled)
                settle(request, out)
                os.close(settling)  # the zygote answers now
                return request
            os.close(out)
            os.close(settling)
            # the pid goes out once the child is in its session and directory: a caller that
            # sets the session's autogroup (favour_autogroup) must find the child's own, and
            # had set the zygote's (the tests' whole session) when it came first
            os.read(settled, 1)
            os.close(settled)
            pidfd = os.pidfd_open(pid)
            children[pidfd] = (pid, status)
            selector.register(pidfd, selectors.EVENT_READ)
            sock.send(json.dumps({"pid": pid}).encode())


def settle(request: Mapping[str, object], out: int) -> None:
    """In a forked child: take the request's output, session, directory and environment."""
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    if request["session"]:
        os.setsid()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    env = request["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update(env)
    if isinstance(request["cwd"], str):
        os.chdir(request["cwd"])
    # unbuffered, as PYTHONUNBUFFERED=1 makes a fresh interpreter's
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
    sys.stderr = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), write_through=True, errors="backslashreplace"
    )


def become(request: Mapping[str, object]) -> int:
    """In a settled child: run `solrace ARGS` as `python -m solrace` would."""
    args = request["args"]
    assert isinstance(args, list)
    sys.argv = ["solrace", *args]
    from solrace.cli import main

    return main(args)


if __name__ == "__main__":
    del sys.path[0]  # this folder: its helpers are not the server's modules
    # what `solrace serve` imports, once (the command line imports a command's module lazily)
    import solrace.cli
    import solrace.server.main  # noqa: F401

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the worker's to handle
    job = serve_requests(socket.socket(fileno=int(sys.argv[1])))
    if job is not None:
        sys.exit(become(job))
