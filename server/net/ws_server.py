"""WebSockets on a bare `asyncio.Protocol`: websockets' sans-I/O `ServerProtocol` per connection.

websockets' asyncio server runs a task per connection and wakes it with a future per frame
(`recv`), and writes each frame with its own `transport.write`; that cost ~40 µs of a ~200 µs
move (issue 21). Here a connection is one `asyncio.Protocol`:

* **In.** `data_received` feeds the bytes to the sans-I/O protocol and hands each whole
  message to the application (`App.received`) at once: no task, no future per frame. The
  application may queue it (server/net/transport.py drains a connection's inbox with a task that
  exists only while there is work).
* **Out.** Every frame is appended to the connection's outbox; the first of a loop turn
  lists the connection for the server's one flush of that turn (one `loop.call_soon` for
  every connection written to), which writes each connection's frames with one
  `transport.writelines`. A frame sent to many connections (`broadcast`) is framed once:
  server frames are not masked, and no extension is negotiated, so the bytes are the same
  for every connection.
* **The handshake** is websockets' own (`ServerProtocol.accept`, `reject`, `send_response`):
  `process_request` answers plain HTTP on the same port, a coroutine's answer (the API) in a
  task of its own. `open_timeout` bounds it.
* **Keepalive** is a timer, not a task: a ping every `ping_interval`, and the connection
  fails with 1011 when its pong is `ping_timeout` late; a close not completed within
  `close_timeout` is aborted.
* **Limits** (server/net/ws_limits.py): frames over `max_size` get `frame_too_large` then 1009
  (`FrameLimitProtocol`); the socket cap before the handshake (429); and slow readers, dropped
  when asyncio's buffer passes `max_buffered` or stays paused (over `write_limit`) for
  `slow_reader_s`.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import logging
import os
import random
import socket
import struct
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol, cast

from solrace.protocol import messages as m
from solrace.server.common.metrics import METRICS
from solrace.server.net.ws_limits import FrameLimitProtocol, SendLimits, Sockets, refusal
from websockets.exceptions import ConnectionClosed
from websockets.frames import BINARY, CONT, PONG, TEXT, CloseCode, Frame
from websockets.http11 import Request, Response
from websockets.protocol import CLOSED, CLOSING, CONNECTING, OPEN

try:  # websockets' C unmasking, as its own parser uses
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover - a build without its C extension
    from websockets.utils import apply_mask

log = logging.getLogger("solrace.server")

#: fragments of one message at most (websockets' own default): empty fragments cost memory too
MAX_FRAGMENTS = int(os.environ.get("WEBSOCKETS_MAX_FRAGMENTS", "4096"))
#: messages queued by the application before reading pauses (websockets' `max_queue`)
MAX_QUEUE = 16

ProcessRequest = Callable[[Any, Request], "Response | Awaitable[Response | None] | None"]


class App(Protocol):
    """What a server's connections report to (server/net/transport.py `Transport`)."""

    def connected(self, ws: WsConnection) -> Any:
        """The handshake is done: the application's record of it (None: it closed it)."""
        ...

    def received(self, conn: Any, message: bytes | str) -> None:
        """A whole message; called in `data_received`, so it must not block."""
        ...

    def disconnected(self, conn: Any) -> None:
        """The connection is gone (after `connected`)."""
        ...

    async def idle(self) -> None:
        """Done with every connection that is gone (`WsServer.wait_closed` waits for it)."""
        ...


def frame_bytes(data: bytes, opcode: int = BINARY) -> bytes:
    """A whole server frame (not masked, no extension): header and payload."""
    n = len(data)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, n)
    return head + data


def broadcast(connections: Iterable[WsConnection], message: bytes) -> None:
    """One binary message to each open connection, framed once; never waits (a slow reader's
    frames pile up in its buffer until its limits drop it)."""
    frame: bytes | None = None
    for ws in connections:
        if ws.protocol.state is OPEN:
            if frame is None:
                frame = frame_bytes(message)
            ws.push(frame)


class WsConnection(asyncio.Protocol):
    """One WebSocket (or plain HTTP) connection: see the module's docstring."""

    transport: asyncio.Transport

    def __init__(self, server: WsServer) -> None:
        self.server = server
        self.loop = server.loop
        self.protocol = FrameLimitProtocol(max_size=server.max_size, logger=server.logger)
        self.sends = server.sends
        self.request: Request | None = None
        self.response: Response | None = None
        #: the application's record of this connection (a `Conn`), once open
        self.conn: Any = None
        self.out: list[bytes] = []
        self.flushing = False
        self.eof = False
        #: asyncio's buffer is over `write_limit`: `send` waits, the slow-reader clock runs
        self.paused = False
        self.drain_waiters: deque[asyncio.Future[None]] = deque()
        self.dropped = False
        self.refused = False
        self.lost = False
        self.lost_waiter: asyncio.Future[None] | None = None
        self.fragments: list[bytes] = []
        self.fragment_text = False
        self.timer: asyncio.TimerHandle | None = None  # the handshake's deadline, or keepalive's
        self.close_timer: asyncio.TimerHandle | None = None
        self.slow_timer: asyncio.TimerHandle | None = None
        self.ping_data: bytes | None = None
        self.ping_sent = 0.0
        self.latency = 0.0
        self._pending = False
        self._pending_key: str | None = None
        self.remote_address: Any = None

    # --- asyncio.Protocol ---------------------------------------------------------------

    def connection_made(self, base: asyncio.BaseTransport) -> None:
        # asyncio's, or uvloop's (`--loop uvloop`: not a subclass, the same methods)
        transport = self.transport = cast(asyncio.Transport, base)
        self.server.connections.add(self)
        transport.set_write_buffer_limits(self.sends.write_limit)
        peer = transport.get_extra_info("peername")
        self.remote_address = peer
        sockets = self.server.sockets_cap
        if sockets is not None and isinstance(peer, tuple) and peer:
            try:
                self._pending_key = sockets.opened(str(peer[0]))
                self._pending = True
            except m.ProtocolError as exc:
                self.refused = True
                METRICS.sockets_refused.inc()
                transport.write(refusal(exc.message))
                transport.close()
                return
        if self.server.open_timeout is not None:
            self.timer = self.loop.call_later(self.server.open_timeout, self.transport.abort)

    def data_received(self, data: bytes) -> None:
        protocol = self.protocol
        if protocol.state is OPEN and not self.fragments:
            data = self._simple_frames(data)
            if not data:
                return
        protocol.receive_data(data)
        events = protocol.events_received()
        self._take()
        if protocol.close_expected():  # a close frame received, or a refused request
            self._closing()
        for event in events:
            if type(event) is not Frame:
                if type(event) is Request:
                    self._request(event)
                continue
            opcode = event.opcode
            if opcode is BINARY or opcode is TEXT:
                if event.fin:
                    self._message(bytes(event.data), opcode is TEXT)
                else:
                    self.fragments = [bytes(event.data)]
                    self.fragment_text = opcode is TEXT
            elif opcode is CONT:
                if len(self.fragments) >= MAX_FRAGMENTS:
                    self.fail(CloseCode.MESSAGE_TOO_BIG, "too many fragments")
                    return
                self.fragments.append(bytes(event.data))
                if event.fin:
                    whole = b"".join(self.fragments)
                    self.fragments = []
                    self._message(whole, self.fragment_text)
            elif opcode is PONG:
                self._pong(bytes(event.data))

    def _simple_frames(self, data: bytes) -> bytes:
        """Take the whole, simple frames at the start of `data` straight to `_message`; the
        rest (from the first frame that is not one) is websockets' to parse.

        A client's move is one small masked frame, and websockets' parser (a generator per
        frame and per read, a `Frame` made and checked) cost about a tenth of a paced
        move. A simple frame is one websockets would parse the same way with nothing to do
        but unmask it: FIN set, no reserved bit, binary or text, masked, a payload within
        the protocol's `max_message_size`, all of it in `data`, while the connection is open
        and websockets holds no byte of an earlier frame and no fragmented message (no
        extension is ever negotiated here). Anything else (a control frame, a fragment, a
        partial frame, a frame too large, an unmasked one) goes to websockets, from that
        frame on, so the order of messages is kept and every error is websockets' own."""
        protocol = self.protocol
        if protocol.reader.buffer or protocol.current_size is not None or protocol.extensions:
            return data
        limit = protocol.max_message_size
        fragment = getattr(protocol, "max_fragment_size", None)  # websockets >= 15.1
        if fragment is not None:
            limit = fragment if limit is None else min(limit, fragment)
        end = len(data)
        at = 0
        while at + 6 <= end and protocol.state is OPEN:
            head1 = data[at]
            if head1 != 0x82 and head1 != 0x81:  # FIN, no RSV, binary or text
                break
            length = data[at + 1] ^ 0x80  # the mask bit must be set
            if length < 126:
                start = at + 6
            elif length == 126 and at + 8 <= end:
                length = (data[at + 2] << 8) | data[at + 3]
                start = at + 8
            else:
                break  # unmasked, a 64-bit length, or the length not all here
            stop = start + length
            if stop > end or (limit is not None and length > limit):
                break
            payload = apply_mask(data[start:stop], data[start - 4 : start])
            at = stop
            self._message(payload, head1 == 0x81)
        return data[at:] if at else data

    def eof_received(self) -> bool | None:
        self.protocol.receive_eof()
        self.protocol.events_received()
        self._take()
        if self.flushing:  # the transport closes on return: what is queued goes first
            self._flush()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.protocol.receive_eof()  # idempotent: the state is CLOSED now
        self._settled()
        self._cancel_timer()
        if self.close_timer is not None:
            self.close_timer.cancel()
            self.close_timer = None
        if self.slow_timer is not None:
            self.slow_timer.cancel()
            self.slow_timer = None
        self.server.connections.discard(self)
        for waiter in self.drain_waiters:
            if not waiter.done():
                waiter.set_result(None)
        if self.lost_waiter is not None and not self.lost_waiter.done():
            self.lost_waiter.set_result(None)
        self.out = []
        if self.conn is not None:
            self.server.app.disconnected(self.conn)
        self.server.check_idle()

    def pause_writing(self) -> None:
        self.paused = True
        if self.slow_timer is None:
            self.slow_timer = self.loop.call_later(self.sends.slow_reader_s, self._still_slow)

    def resume_writing(self) -> None:
        self.paused = False
        if self.slow_timer is not None:
            self.slow_timer.cancel()
            self.slow_timer = None
        for waiter in self.drain_waiters:
            if not waiter.done():
                waiter.set_result(None)

    # --- out ------------------------------------------------------------------------------

    def push(self, frame: bytes) -> None:
        """A framed message (or protocol bytes), written with the rest of this loop turn's."""
        self.out.append(frame)
        if not self.flushing:
            self.flushing = True
            self.server.dirty(self)

    def _take(self) -> None:
        """What the sans-I/O protocol has to send (pongs, close frames, the handshake
        response), in order with the frames already queued; b"" is its end of stream."""
        for data in self.protocol.data_to_send():
            if data:
                self.push(data)
            else:
                self.eof = True
                if not self.flushing:
                    self.flushing = True
                    self.server.dirty(self)

    def _flush(self) -> None:
        if not self.flushing:
            return  # flushed already this turn (`eof_received`)
        self.flushing = False
        out, self.out = self.out, []
        transport = self.transport
        if self.lost or transport.is_closing():
            return
        if out:
            transport.writelines(out)
        if self.eof:
            self.eof = False
            if transport.can_write_eof():
                with contextlib.suppress(Exception):
                    transport.write_eof()
            else:
                transport.close()
            return
        if not self.dropped and self.protocol.state is OPEN:
            queued = transport.get_write_buffer_size()
            if queued > self.sends.max_buffered:
                self.drop(f"{queued} bytes queued")

    async def send(self, message: bytes) -> None:
        """A binary message; waits while the socket's buffer is over `write_limit`.
        ConnectionClosed once the connection is not open."""
        if self.protocol.state is not OPEN:
            raise self.closed_exc()
        self.push(frame_bytes(message))
        if self.paused:
            waiter = self.loop.create_future()
            self.drain_waiters.append(waiter)
            try:
                await waiter
            finally:
                self.drain_waiters.remove(waiter)
            if self.lost:
                raise self.closed_exc()

    def write(self, message: bytes) -> None:
        """A binary message, never waiting; nothing when the connection is not open."""
        if self.protocol.state is OPEN:
            self.push(frame_bytes(message))

    # --- closing ----------------------------------------------------------------------------

    def start_close(self, code: int = CloseCode.NORMAL_CLOSURE, reason: str = "") -> None:
        """Send a close frame (the closing handshake), and abort if it is not completed within
        `close_timeout`."""
        if self.protocol.state is OPEN:
            self.protocol.send_close(code, reason)
            self._take()
            self._closing()
        elif self.protocol.state is CONNECTING and not self.lost:
            self.transport.abort()

    async def close(self, code: int = CloseCode.NORMAL_CLOSURE, reason: str = "") -> None:
        """The closing handshake, waiting until the connection is gone."""
        self.start_close(code, reason)
        await self.wait_closed()

    async def wait_closed(self) -> None:
        if self.lost:
            return
        if self.lost_waiter is None:
            self.lost_waiter = self.loop.create_future()
        await asyncio.shield(self.lost_waiter)

    def fail(self, code: int, reason: str = "") -> None:
        self.protocol.fail(code, reason)
        self._take()
        self._closing()

    def _closing(self) -> None:
        """The protocol expects the TCP connection to end: give the peer `close_timeout`
        (once), and no more keepalive."""
        if self.protocol.close_expected() and not self.lost and self.close_timer is None:
            self._cancel_timer()
            self.close_timer = self.loop.call_later(self.server.close_timeout, self.transport.abort)

    def _cancel_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def drop(self, why: str) -> None:
        """Reset the connection: the application sees it lost (1006) and unbinds it as any
        lost connection; the kernel discards what was queued instead of retrying it."""
        if self.dropped:
            return
        self.dropped = True
        METRICS.slow_readers_dropped.inc()
        log.info("dropped a slow reader (%s): %s", why, self.remote_address)
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.transport.abort()

    def _still_slow(self) -> None:
        self.slow_timer = None
        if self.protocol.state in (OPEN, CLOSING):
            self.drop(
                f"over {self.sends.write_limit} bytes queued for {self.sends.slow_reader_s} s"
            )

    # --- the handshake ----------------------------------------------------------------------

    def _settled(self) -> None:
        """Through the handshake, or closed: no longer counted as waiting."""
        if self._pending:
            self._pending = False
            assert self.server.sockets_cap is not None
            self.server.sockets_cap.done(self._pending_key)

    def _request(self, request: Request) -> None:
        self.request = request
        answer: Any = None
        try:
            hook = self.server.process_request
            answer = hook(self, request) if hook is not None else None
        except Exception as exc:
            answer = self._failed(exc)
        if isinstance(answer, Awaitable):
            self.server.spawn(self._respond_later(answer))
            return
        self._respond(answer)

    async def _respond_later(self, answer: Awaitable[Response | None]) -> None:
        try:
            response = await answer
        except Exception as exc:
            response = self._failed(exc)
        self._respond(response)

    def _failed(self, exc: Exception) -> Response:
        self.protocol.handshake_exc = exc
        self.server.logger.error("process_request failed", exc_info=True)
        return self.protocol.reject(
            http.HTTPStatus.INTERNAL_SERVER_ERROR,
            "Failed to open a WebSocket connection.\nSee server log for more information.\n",
        )

    def _respond(self, response: Response | None) -> None:
        if self.lost or self.protocol.state is not CONNECTING:
            return
        assert self.request is not None
        if response is None:
            response = self.protocol.accept(self.request)
        if self.server.server_header is not None:
            response.headers["Server"] = self.server.server_header
        if response.status_code == 101 and self.server.closing:
            response = self.protocol.reject(
                http.HTTPStatus.SERVICE_UNAVAILABLE, "Server is shutting down.\n"
            )
        self.response = response
        self.protocol.send_response(response)
        self._take()
        self._settled()
        self._cancel_timer()
        if self.protocol.state is not OPEN:  # an HTTP answer: the peer closes after reading it
            self._closing()
            return
        sock = self.transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            # not before: HTTP responses (the web client) autotune
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.sends.send_buffer)
        self._arm_ping(self.server.ping_interval)
        self.conn = self.server.app.connected(self)

    # --- messages and keepalive ------------------------------------------------------------

    def _message(self, data: bytes, text: bool) -> None:
        if self.conn is None or self.protocol.state is not OPEN:
            return
        if text:
            try:
                message: bytes | str = data.decode()
            except UnicodeDecodeError as exc:
                self.fail(CloseCode.INVALID_DATA, f"{exc.reason} at position {exc.start}")
                return
        else:
            message = data
        self.server.app.received(self.conn, message)

    def _arm_ping(self, delay: float | None) -> None:
        self._cancel_timer()
        if delay is not None:
            self.timer = self.loop.call_later(max(0.0, delay), self._ping)

    def _ping(self) -> None:
        self.timer = None
        if self.protocol.state is not OPEN:
            return
        self.ping_data = struct.pack("!I", random.getrandbits(32))
        self.ping_sent = self.loop.time()
        self.protocol.send_ping(self.ping_data)
        self._take()
        if self.server.ping_timeout is not None:
            self.timer = self.loop.call_later(self.server.ping_timeout, self._ping_late)

    def _ping_late(self) -> None:
        self.timer = None
        if self.protocol.state is OPEN:
            self.fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")

    def _pong(self, data: bytes) -> None:
        if self.ping_data is None or data != self.ping_data or self.close_timer is not None:
            return  # unsolicited, or closing
        self.ping_data = None
        self.latency = self.loop.time() - self.ping_sent
        interval = self.server.ping_interval
        self._arm_ping(None if interval is None else interval - self.latency)

    def closed_exc(self) -> ConnectionClosed:
        p = self.protocol
        return ConnectionClosed(p.close_rcvd, p.close_sent, p.close_rcvd_then_sent)

    @property
    def close_code(self) -> int | None:
        return self.protocol.close_code

    @property
    def closed(self) -> bool:
        return self.protocol.state is CLOSED or self.lost


class WsServer:
    """A listening server of `WsConnection`s (or one fed accepted sockets: the workers of
    `--workers N`, through `connect_accepted_socket` and `protocol_factory`)."""

    def __init__(
        self,
        app: App,
        *,
        process_request: ProcessRequest | None = None,
        max_size: int = m.MAX_FRAME,
        sends: SendLimits | None = None,
        sockets: Sockets | None = None,
        ping_interval: float | None = 20,
        ping_timeout: float | None = 20,
        close_timeout: float = 10,
        open_timeout: float | None = 10,
        server_header: str | None = None,
    ) -> None:
        self.app = app
        self.loop = asyncio.get_running_loop()
        self.process_request = process_request
        self.max_size = max_size
        self.sends = sends or SendLimits()
        self.sockets_cap = sockets
        self.ping_interval = ping_interval
        self.ping_timeout = ping_timeout
        self.close_timeout = close_timeout
        self.open_timeout = open_timeout
        self.server_header = server_header
        self.logger = logging.getLogger("websockets.server")
        self.connections: set[WsConnection] = set()
        self.server: asyncio.Server | None = None
        self.closing = False
        self.tasks: set[asyncio.Task[Any]] = set()
        self._idle: asyncio.Future[None] | None = None
        #: connections with frames to write at the end of this loop turn
        self._dirty: list[WsConnection] = []

    def dirty(self, ws: WsConnection) -> None:
        """`ws` has frames queued: every such connection is flushed by one callback at the end
        of the loop's turn (not one callback per connection)."""
        if not self._dirty:
            self.loop.call_soon(self._flush_all)
        self._dirty.append(ws)

    def _flush_all(self) -> None:
        dirty, self._dirty = self._dirty, []
        for ws in dirty:
            ws._flush()

    def protocol_factory(self) -> WsConnection:
        return WsConnection(self)

    async def listen(self, host: str | None = None, port: int | None = None, **kw: Any) -> None:
        if kw.pop("unix", False):
            self.server = await self.loop.create_unix_server(self.protocol_factory, **kw)
        else:
            self.server = await self.loop.create_server(self.protocol_factory, host, port, **kw)

    @property
    def sockets(self) -> tuple[socket.socket, ...]:
        return tuple(self.server.sockets) if self.server is not None else ()

    def spawn(self, coro: Any) -> None:
        task = self.loop.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def close(self) -> None:
        """Stop listening; connections still in their handshake are answered 503."""
        self.closing = True
        if self.server is not None:
            self.server.close()

    def check_idle(self) -> None:
        if not self.connections and self._idle is not None and not self._idle.done():
            self._idle.set_result(None)

    async def wait_closed(self) -> None:
        """Every connection is gone, and the application done with them (`App.idle`)."""
        if self.connections:
            self._idle = self.loop.create_future()
            await self._idle
        if self.tasks:
            await asyncio.wait(self.tasks)
        await self.app.idle()


class serve:  # lower case: used like the function it was (`async with serve(app) as s`)
    """A `WsServer` listening on host:port (or `sock=`, `unix=True`; none of them: nowhere,
    fed accepted sockets through `protocol_factory`) for the block; on exit it closes the open
    connections with 1001 and waits for them. A class, not an async generator: this module is
    compiled with mypyc (docs/ARCHITECTURE.md, "Compiled modules"), which has none."""

    def __init__(
        self, app: App, host: str | None = None, port: int | None = None, **options: Any
    ) -> None:
        self.listen = {k: options.pop(k) for k in ("sock", "unix", "backlog") if k in options}
        self.host, self.port = host, port
        self.server = WsServer(app, **options)

    async def __aenter__(self) -> WsServer:
        if self.host is not None or self.port is not None or self.listen:
            await self.server.listen(self.host, self.port, **self.listen)
        return self.server

    async def __aexit__(self, *exc: object) -> None:
        server = self.server
        server.close()
        for ws in list(server.connections):
            ws.start_close(CloseCode.GOING_AWAY)
        await server.wait_closed()
