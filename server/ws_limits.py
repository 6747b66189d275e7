"""The WebSocket connection class the server runs its sockets with: the two limits that live
below the message handler.

* **Incoming frames over `max_frame`.** websockets refuses a frame over its `max_size` by
  failing the connection (close 1009) before any handler sees it, so the client never got
  the documented `frame_too_large` error. `FrameLimitProtocol` writes that error just ahead
  of the close frame, whatever the frame's size, without reading its payload.
* **Slow readers.** A client that stops reading makes the server hold what it is sent: the
  kernel's send queue (autotuned up to megabytes per socket) and asyncio's write buffer
  (`broadcast` never waits, so fan-out frames pile up there). Once the WebSocket is open its
  socket's SO_SNDBUF is set to `send_buffer` (which also stops the autotuning), and the
  connection is dropped with a reset (SO_LINGER 0, so the kernel frees the queue at once)
  when asyncio's buffer passes `max_buffered`, or stays above its high-water mark
  (`write_limit`) for `slow_reader_s` seconds. A reader that keeps up never gets near either.
* **Sockets before the handshake.** Each accepted socket is counted against its address
  (`Sockets`: server/guard.py `socket_opened`) until its handshake is done or it closes; one
  over the address's cap is answered `429 Too Many Requests` at once, before anything is read,
  and closed, so opening sockets and sending nothing holds at most the cap per address.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
import struct
from dataclasses import dataclass
from typing import Any, Protocol, cast

from solrace.protocol import messages as m
from solrace.server.metrics import METRICS
from websockets.asyncio.server import ServerConnection
from websockets.frames import CloseCode
from websockets.protocol import CLOSING, OPEN
from websockets.server import ServerProtocol

log = logging.getLogger("solrace.server")


@dataclass(frozen=True)
class SendLimits:
    """What one connection may hold of the server's memory on its way out (OPERATIONS.md)."""

    #: SO_SNDBUF of an open WebSocket's socket (the kernel doubles it for its bookkeeping)
    send_buffer: int = 64 * 1024
    #: asyncio's high-water mark: over it, `send` waits and the slow-reader clock runs
    write_limit: int = 64 * 1024
    #: asyncio's buffer over this: dropped at once
    max_buffered: int = 1024 * 1024
    #: seconds a connection may stay over `write_limit` before it is dropped
    slow_reader_s: float = 5.0


class Sockets(Protocol):
    """The per-address count of sockets not yet through the handshake (Transport's)."""

    def opened(self, host: str) -> str | None:
        """Count a socket in; its key (None: not counted); ProtocolError when over."""
        ...

    def done(self, key: str | None) -> None: ...


def refusal(message: str) -> bytes:
    """The raw HTTP answer to a socket over its address's cap: written before any request is
    read (websockets has not parsed one yet), then the socket is closed."""
    body = f"{message}\n".encode()
    head = (
        "HTTP/1.1 429 Too Many Requests\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Retry-After: 1\r\n"
        "Cache-Control: no-store\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode() + body


class FrameLimitProtocol(ServerProtocol):
    """websockets' server protocol, which sends `frame_too_large` before it closes with 1009."""

    def fail(self, code: CloseCode | int, reason: str = "") -> None:
        if code == CloseCode.MESSAGE_TOO_BIG and self.state is OPEN:
            limit = self.max_message_size
            self.send_binary(
                m.encode(m.error("frame_too_large", f"a frame over the {limit} byte limit"))
            )
        super().fail(code, reason)


class LimitedConnection(ServerConnection):
    """A server connection with the frame error above and the slow-reader limits."""

    def __init__(
        self,
        protocol: ServerProtocol,
        *args: Any,
        sends: SendLimits,
        sockets: Sockets | None = None,
        **kw: Any,
    ) -> None:
        # websockets' serve() builds its ServerProtocol itself; this is the hook it gives
        if type(protocol) is ServerProtocol:
            protocol.__class__ = FrameLimitProtocol
        super().__init__(protocol, *args, **kw)
        self.sends = sends
        self._slow_timer: asyncio.TimerHandle | None = None
        self.dropped = False
        self.sockets = sockets
        #: counted as not yet through the handshake (under this key)
        self._pending = False
        self._pending_key: str | None = None
        #: answered 429 at once: over its address's cap of sockets before the handshake
        self.refused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        if self.sockets is None or not isinstance(peer, tuple) or not peer:
            return
        try:
            self._pending_key = self.sockets.opened(str(peer[0]))
            self._pending = True
        except m.ProtocolError as exc:
            self.refused = True
            METRICS.sockets_refused.inc()
            assert isinstance(transport, asyncio.WriteTransport)
            transport.write(refusal(exc.message))
            transport.close()  # the handshake sees the socket lost and ends

    def _settled(self) -> None:
        """Through the handshake, or closed: no longer counted as waiting."""
        if self._pending:
            self._pending = False
            assert self.sockets is not None
            self.sockets.done(self._pending_key)

    async def handshake(self, *args: Any, **kw: Any) -> None:
        try:
            await super().handshake(*args, **kw)
        finally:
            self._settled()
        if self.protocol.state is OPEN:  # not before: HTTP responses (the web client) autotune
            sock = self.transport.get_extra_info("socket")
            if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.sends.send_buffer)

    def send_data(self) -> None:
        super().send_data()
        if self.protocol.state is OPEN and not self.dropped:
            queued = self.transport.get_write_buffer_size()
            if queued > self.sends.max_buffered:
                self.drop(f"{queued} bytes queued")

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._slow_timer is None:
            self._slow_timer = self.loop.call_later(self.sends.slow_reader_s, self._still_slow)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._slow_timer is not None:
            self._slow_timer.cancel()
            self._slow_timer = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._settled()
        if self._slow_timer is not None:
            self._slow_timer.cancel()
            self._slow_timer = None
        super().connection_lost(exc)

    def _still_slow(self) -> None:
        self._slow_timer = None
        if self.protocol.state in (OPEN, CLOSING):
            self.drop(
                f"over {self.sends.write_limit} bytes queued for {self.sends.slow_reader_s} s"
            )

    def drop(self, why: str) -> None:
        """Reset the connection: its handler sees it closed (1006) and unbinds it as any
        lost connection; the kernel discards what was queued instead of retrying it."""
        if self.dropped:
            return
        self.dropped = True
        METRICS.slow_readers_dropped.inc()
        log.info("dropped a slow reader (%s): %s", why, self.remote_address)
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
        self.transport.abort()


def serve_options(
    max_frame: int, sends: SendLimits, sockets: Sockets | None = None
) -> dict[str, Any]:
    """The keyword arguments of websockets' `serve` that set these limits (`solrace serve`
    and the tests that run a server in their own loop use the same)."""
    factory = functools.partial(LimitedConnection, sends=sends, sockets=sockets)
    return {
        "max_size": max_frame,
        "write_limit": sends.write_limit,
        "create_connection": cast(type[ServerConnection], factory),
        "compression": None,
    }
