"""The limits that live below the message handler (applied by server/net/ws_server.py).

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
  (`Sockets`: server/net/guard.py `socket_opened`) until its handshake is done or it closes; one
  over the address's cap is answered `429 Too Many Requests` at once, before anything is read,
  and closed, so opening sockets and sending nothing holds at most the cap per address.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from solrace.protocol import messages as m
from websockets.frames import CloseCode
from websockets.protocol import OPEN
from websockets.server import ServerProtocol


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
