"""What the server knows about one WebSocket connection, and the limits every connection keeps.

Shared by the three parts that handle a connection: the sockets (`transport`: frames in,
rate limits, dispatch), the fan-out (`fanout`: which events it has been sent) and the room
supervision (`supervisor`: its presence in a room). It holds no behaviour beyond the token
bucket, so none of those parts has to import another to know what a connection is.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from solrace.protocol import messages as m
from solrace.server.projection import Viewer
from websockets.asyncio.server import ServerConnection


@dataclass
class Limits:
    burst: int = 60
    rate: float = 20.0
    spectator_burst: int = 20
    spectator_rate: float = 5.0
    max_frame: int = m.MAX_FRAME
    idle_timeout: float = 60.0
    grace: float = 30.0
    bad_frames: int = 3
    #: a process silent for 5 heartbeats is dead: others count out its connections
    heartbeat: float = 2.0


class Bucket:
    """Token bucket: `burst` messages at once, refilled at `rate` per second."""

    def __init__(self, burst: int, rate: float) -> None:
        self.burst, self.rate = burst, rate
        self.tokens = float(burst)
        self.stamp = time.monotonic()
        self.refused_in_row = 0

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            self.refused_in_row = 0
            return True
        self.refused_in_row += 1
        return False


@dataclass(eq=False)
class Conn:
    ws: ServerConnection
    bucket: Bucket
    hello: bool = False
    #: the public player id of the hello's player key (None: anonymous)
    player: str | None = None
    room: str | None = None
    role: str | None = None
    seat: int | None = None
    #: the number of the last room event this connection has been sent (frames go out in order)
    last_event: int = 0
    catching_up: bool = False
    dirty: bool = False  # a live event was held back while catching up: fetch once more
    bad_frames: int = 0
    last_seen: float = 0.0  # time.monotonic() of the last frame received
    idle_timer: asyncio.TimerHandle | None = None

    def viewer(self) -> Viewer:
        return Viewer(self.role or "spectator", self.seat)
