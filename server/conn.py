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
    #: a connection in no room yet (browsing the lobby, joining): fewer credits than a racer
    lobby_burst: int = 20
    lobby_rate: float = 1.0
    #: seconds this process keeps a lobby page (server/lobby.py)
    lobby_cache: float = 1.0
    #: seconds a room in its lobby with nobody connected is kept (a day while anyone is)
    lobby_ttl: int = 900
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

    def level(self) -> float:
        """The tokens there now (refilled to this moment), taking none."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        return self.tokens

    def wait(self) -> float:
        """Seconds until the next token is there."""
        missing = 1 - self.level()
        return max(0.0, missing / self.rate) if self.rate > 0 else 60.0

    def take(self) -> bool:
        if self.level() >= 1:
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
    #: the client address its per-address limits count against (None: exempt); server/guard.py
    address: str | None = None

    def viewer(self) -> Viewer:
        return Viewer(self.role or "spectator", self.seat)
