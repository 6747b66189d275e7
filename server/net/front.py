"""`solrace serve --workers N`: one port, N worker processes, every connection of a room on one.

A room's connections must share a process: seats of one room split over two processes cost
1.3-1.45x the CPU per move of a room on one (issue 9), and the room's cache, timers and
fan-out are then one process's. So the front, a small process that owns the public port,
accepts each TCP connection, peeks at its HTTP request line (MSG_PEEK: nothing is consumed,
bounded in size and time), reads the room code from the request target (`/ws?room=CODE`,
`?watch=CODE`, `/r/CODE`) and hands the socket to a worker over a Unix socket (SCM_RIGHTS).
The worker runs it through its own WebSocket server (`ws_server.WsServer.protocol_factory`,
with `loop.connect_accepted_socket`) as if it had accepted it; the front keeps nothing of the
connection.

Which worker: rendezvous hashing of the code over the workers that are up. A worker that
dies is started again; meanwhile its rooms hash to the others (and only its rooms move), and
its clients, resuming with the room in their URL, land there and resume from Redis. A request
with no room (the page, `/healthz`, a `create`) goes round robin; the worker that creates a
room draws codes until one hashes to itself (`owns`), so the room's later connections, which
carry the code, come back to it. A connection that reached the wrong worker (no room in its
URL, a worker that was down) still works: the worker serves it through Redis, like two
processes sharing a room, only slower (server/store/lease.py).

Workers are `solrace serve` with the same arguments plus two internal flags (`--worker-fd`,
`--worker-index`); a worker exits when the front's end of its Unix socket closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from solrace.server.net.conn import IPNetwork, networks, within

log = logging.getLogger("solrace.front")

#: bytes of the request peeked at most: the request line is all the routing needs
PEEK_MAX = 4096
#: seconds a connection may take to send its request line before it goes round robin
PEEK_TIMEOUT = 5.0
#: seconds a connection waits for a worker when none is up (at start, or all restarting)
WAIT_FOR_WORKER = 15.0
#: seconds a worker whose front is gone may take to stop before it exits regardless
GIVE_UP_S = 10.0
_CODE = re.compile(r"^[A-Z0-9]{1,32}$")
_PATH_ROOM = re.compile(r"^/r/([A-Za-z0-9]{1,32})/?$")


def room_of(head: bytes) -> str | None:
    """The room code an HTTP request's target names, normalized, or None."""
    line = head.split(b"\r\n", 1)[0].split(b" ")
    if len(line) < 2:
        return None
    target = urlsplit(line[1].decode("latin-1"))
    query = parse_qs(target.query)
    found: str | None = (query.get("room") or query.get("watch") or [""])[0] or None
    if found is None:
        path = _PATH_ROOM.match(target.path)
        found = path.group(1) if path else None
    if found is None:
        return None
    code = found.strip().upper()
    return code if _CODE.match(code) else None


def rendezvous(code: str, workers: Sequence[int]) -> int:
    """The worker of a room among those up: the highest hash of (worker, code). When a worker
    goes, only its rooms move; when it comes back, they come back."""
    return max(
        workers,
        key=lambda w: hashlib.blake2b(f"{w}:{code}".encode(), digest_size=8).digest(),
    )


def owns(index: int, count: int) -> Callable[[str], bool]:
    """Whether a code routes to worker `index` of `count` when all are up."""
    everyone = range(count)
    return lambda code: rendezvous(code, everyone) == index


def worker_argv(argv: Sequence[str], redis_url: str) -> list[str]:
    """A worker's `solrace serve` arguments: the front's own, without --workers, on the
    Redis the front resolved (an embedded one is started once, by the front)."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--workers":
            skip = True
        elif not arg.startswith("--workers="):
            out.append(arg)
    return [*out, "--redis-url", redis_url]


# --- the worker's side ---------------------------------------------------------------------


class HandOver:
    """A worker's end of the front's Unix socket: each message carries one connection."""

    def __init__(
        self, fd: int, factory: Callable[[], asyncio.Protocol], on_lost: Callable[[], None]
    ) -> None:
        self.chan = socket.socket(fileno=fd)
        self.chan.setblocking(False)
        self.factory = factory
        self.on_lost = on_lost
        self.tasks: set[asyncio.Task[Any]] = set()

    def start(self) -> None:
        """Take connections, and tell the front this worker is ready for them."""
        loop = asyncio.get_running_loop()
        loop.add_reader(self.chan.fileno(), self._readable)
        self.chan.send(b"R")

    def _readable(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                msg, fds, _flags, _addr = socket.recv_fds(self.chan, 16, 8)
            except BlockingIOError:
                return
            except OSError:
                msg, fds = b"", []
            if not msg and not fds:  # the front is gone: so is this worker's reason to be
                loop.remove_reader(self.chan.fileno())
                self.on_lost()
                # a shutdown stuck on a Redis that is gone too must not leave an orphan behind
                loop.call_later(GIVE_UP_S, os._exit, 1)
                return
            for fd in fds:
                sock = socket.socket(fileno=fd)
                sock.setblocking(False)
                task = loop.create_task(self._serve(sock))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)

    async def _serve(self, sock: socket.socket) -> None:
        try:
            await asyncio.get_running_loop().connect_accepted_socket(self.factory, sock)
        except Exception:
            log.warning("a handed-over connection failed", exc_info=True)
            sock.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(self.chan.fileno())
        self.chan.close()


# --- the front ------------------------------------------------------------------------------


@dataclass
class Worker:
    index: int
    proc: subprocess.Popen[bytes] | None = None
    chan: socket.socket | None = None
    ready: bool = False
    restarts: int = 0
    ever_ready: bool = False
    started: float = field(default_factory=time.monotonic)


class Front:
    """Owns the port, runs the workers, routes each connection by its room."""

    def __init__(
        self,
        count: int,
        host: str,
        port: int,
        command: Callable[[int, int], list[str]],
        *,
        peek_cap: int = 20,
        uncapped: tuple[IPNetwork, ...] = (),
    ) -> None:
        self.workers = [Worker(i) for i in range(count)]
        #: sockets of one address the front waits on for a request line (`peek`) at once; more
        #: go to a worker at once, unrouted, where the same address's pre-handshake cap (429)
        #: applies: idle sockets cannot pile up in the front, holding its descriptors
        self.peek_cap = peek_cap
        #: addresses without that cap (trusted proxies, `--exempt`: one address, many clients)
        self.uncapped = uncapped
        self.peeking: dict[str, int] = {}
        self.host = host
        self.port = port
        self.command = command  # (index, fd) -> the worker's argv
        self.round = itertools.count()
        self.tasks: set[asyncio.Task[Any]] = set()
        self.stopping = False
        self.all_up = asyncio.Event()
        self.stop: asyncio.Future[None] | None = None
        self.exit_code = 0

    def up(self) -> list[int]:
        return [w.index for w in self.workers if w.ready]

    def pick(self, code: str | None) -> Worker | None:
        live = self.up()
        if not live:
            return None
        if code is None:
            return self.workers[live[next(self.round) % len(live)]]
        return self.workers[rendezvous(code, live)]

    # --- workers --------------------------------------------------------------------------

    def spawn(self, w: Worker) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setblocking(False)
        try:
            w.proc = subprocess.Popen(
                self.command(w.index, theirs.fileno()),
                pass_fds=[theirs.fileno()],
                preexec_fn=_die_with_parent,
            )
        finally:
            theirs.close()
        w.chan, w.ready, w.started = ours, False, time.monotonic()
        asyncio.get_running_loop().add_reader(ours.fileno(), self._worker_says, w)
        log.info("worker %d started (pid %d)", w.index, w.proc.pid)

    def _worker_says(self, w: Worker) -> None:
        assert w.chan is not None
        try:
            data = w.chan.recv(16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data == b"R":
            w.ready = w.ever_ready = True
            log.info("worker %d ready", w.index)
            if len(self.up()) == len(self.workers):
                self.all_up.set()
        elif not data:
            self._gone(w)

    def _gone(self, w: Worker) -> None:
        """The worker's socket closed: it died (or is stopping). Its rooms hash elsewhere now."""
        w.ready = False
        if w.chan is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(w.chan.fileno())
            w.chan.close()
            w.chan = None

    async def supervise(self) -> None:
        """Start a worker again when it dies (after a short pause if it keeps dying)."""
        while not self.stopping:
            await asyncio.sleep(0.1)
            for w in self.workers:
                if self.stopping or w.proc is None or w.proc.poll() is None:
                    continue
                log.warning(
                    "worker %d (pid %d) exited with %s", w.index, w.proc.pid, w.proc.returncode
                )
                self._gone(w)
                w.proc = None
                w.restarts += 1
                if not w.ever_ready and w.restarts >= 3:  # it cannot start: say so and stop
                    log.error("worker %d does not start; stopping", w.index)
                    self.exit_code = 1
                    if self.stop is not None:
                        _wake(self.stop)
                    return
                if time.monotonic() - w.started < 2.0:
                    await asyncio.sleep(1.0)  # crashing at start: do not spin
                if not self.stopping:
                    self.spawn(w)

    # --- connections ----------------------------------------------------------------------

    async def accept(self, listener: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, _addr = await loop.sock_accept(listener)
            except OSError:  # out of descriptors, a connection reset while queued: go on
                log.warning("accept failed", exc_info=True)
                await asyncio.sleep(0.1)
                continue
            task = loop.create_task(self.route(sock))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def route(self, sock: socket.socket) -> None:
        try:
            code = room_of(await self._peek(sock))
            deadline = time.monotonic() + WAIT_FOR_WORKER
            while True:
                w = self.pick(code)
                if w is not None and w.chan is not None:
                    try:
                        socket.send_fds(w.chan, [b"c"], [sock.fileno()])
                        return
                    except OSError:  # its socket is full (stalled) or gone: try another
                        log.warning("worker %d did not take a connection", w.index)
                        self._gone(w)
                if time.monotonic() > deadline or self.stopping:
                    return
                await asyncio.sleep(0.05)
        finally:
            sock.close()  # the worker has its own copy of the descriptor

    async def _peek(self, sock: socket.socket) -> bytes:
        """`peek`, unless the socket's address has `peek_cap` sockets being peeked already."""
        try:
            host = str(sock.getpeername()[0])
        except OSError:
            return b""
        if within(host, self.uncapped):
            return await peek(sock)
        if self.peeking.get(host, 0) >= self.peek_cap:
            return b""
        self.peeking[host] = self.peeking.get(host, 0) + 1
        try:
            return await peek(sock)
        finally:
            self.peeking[host] -= 1
            if not self.peeking[host]:
                del self.peeking[host]

    # --- the process ----------------------------------------------------------------------

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        listener = socket.create_server((self.host, self.port), backlog=1024)
        listener.setblocking(False)
        stop: asyncio.Future[None] = loop.create_future()
        self.stop = stop
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, _wake, stop)
        for w in self.workers:
            self.spawn(w)
        tasks = [loop.create_task(self.supervise())]
        # connections wait in the backlog until every worker is up: a room code drawn by one
        # worker routes to it only while all are
        all_up: asyncio.Future[Any] = loop.create_task(self.all_up.wait())
        await asyncio.wait({all_up, stop}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        all_up.cancel()
        if not stop.done():
            tasks.append(loop.create_task(self.accept(listener)))
            print(
                f"solrace serving on http://{self.host}:{self.port} "
                f"with {len(self.workers)} workers",
                flush=True,
            )
        try:
            await stop
        finally:
            self.stopping = True
            for task in tasks:
                task.cancel()
            listener.close()
            await self.stop_workers()

    async def stop_workers(self, timeout: float = 8.0) -> None:
        """SIGTERM each worker (they close their connections with 1001), then wait."""
        procs = [w.proc for w in self.workers if w.proc is not None]
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
        deadline = time.monotonic() + timeout
        for proc in procs:
            try:
                await asyncio.to_thread(proc.wait, max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for w in self.workers:
            self._gone(w)


async def peek(sock: socket.socket) -> bytes:
    """The start of the request, left in the socket for the worker: up to the end of its
    request line, PEEK_MAX bytes, or what came within PEEK_TIMEOUT."""
    loop = asyncio.get_running_loop()
    sock.setblocking(False)
    deadline = loop.time() + PEEK_TIMEOUT
    data = b""
    while True:
        partial = False
        try:
            data = sock.recv(PEEK_MAX, socket.MSG_PEEK)
            if not data or b"\r\n" in data or len(data) >= PEEK_MAX:
                return data
            partial = True
        except (BlockingIOError, InterruptedError):
            pass
        remaining = deadline - loop.time()
        if remaining <= 0:
            return data
        if partial:  # readable again at once (the bytes stay queued): poll instead
            await asyncio.sleep(0.005)
            continue
        readable: asyncio.Future[None] = loop.create_future()
        loop.add_reader(sock.fileno(), _wake, readable)
        try:
            await asyncio.wait_for(readable, remaining)
        except TimeoutError:
            return data
        finally:
            loop.remove_reader(sock.fileno())


def _libc_prctl() -> Callable[..., int] | None:
    """prctl(2), looked up in the front (nothing may be imported between fork and exec)."""
    try:
        import ctypes

        prctl: Callable[..., int] = ctypes.CDLL("libc.so.6", use_errno=True).prctl
        return prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl() if sys.platform == "linux" else None


def _die_with_parent() -> None:
    """In the worker, before exec: the kernel kills it if the front dies (SIGKILL, a crash),
    so no worker outlives its front holding rooms (elsewhere than Linux the worker notices
    its socket closing, and exits GIVE_UP_S later at the latest)."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


def run_front(args: Any, redis_url: str, argv: Sequence[str]) -> int:
    """`solrace serve --workers N` (N >= 2): the front, until SIGTERM."""
    base = worker_argv(argv, redis_url)

    def command(index: int, fd: int) -> list[str]:
        return [
            sys.executable,
            "-m",
            "solrace",
            "serve",
            *base,
            "--workers",
            str(args.workers),
            "--worker-fd",
            str(fd),
            "--worker-index",
            str(index),
        ]

    uncapped = networks(args.trusted_proxies) + tuple(
        net for spec in args.exempt for net in networks(spec)
    )
    front = Front(
        args.workers,
        args.host,
        args.port,
        command,
        peek_cap=args.handshakes_per_address,
        uncapped=uncapped,
    )
    asyncio.run(front.run())
    return front.exit_code


def serve_argv() -> list[str]:
    """The arguments `solrace serve` was given (what follows `serve` on the command line)."""
    argv = sys.argv[1:]
    return argv[argv.index("serve") + 1 :] if "serve" in argv else argv
