"""What the server knows about one WebSocket connection, and the limits every connection keeps.

Shared by the three parts that handle a connection: the sockets (`transport`: frames in,
rate limits, dispatch), the fan-out (`fanout`: which events it has been sent) and the room
supervision (`supervisor`: its presence in a room). It holds no behaviour beyond the token
bucket, so none of those parts has to import another to know what a connection is.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import time
from dataclasses import dataclass, field

from solrace.protocol import messages as m
from solrace.server.projection import Viewer
from solrace.server.room import addr_hash
from solrace.server.ws_limits import SendLimits
from websockets.asyncio.server import ServerConnection

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(spec: str) -> tuple[IPNetwork, ...]:
    """Comma-separated addresses or networks ("127.0.0.1,10.0.0.0/8") as networks."""
    return tuple(ipaddress.ip_network(p.strip()) for p in spec.split(",") if p.strip())


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
    #: seats one client address may hold in one room (0: no limit)
    seats_per_address: int = 8
    #: peers whose X-Forwarded-For names the client (a proxy in front: the shipped nginx)
    trusted_proxies: tuple[IPNetwork, ...] = networks("127.0.0.1,::1")
    #: what a connection may hold on its way out before it is dropped as a slow reader
    sends: SendLimits = field(default_factory=SendLimits)


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
    #: the client's address (`client_address`): per-address limits and kicks go by it
    addr: str = ""
    #: rooms in which this connection took a seat (one each, until it leaves it)
    seated: set[str] = field(default_factory=set)
    #: a board was kept from this spectator (its address races here): it gets the boards
    #: when that race is over for it
    withheld: bool = False

    @functools.cached_property
    def addr_key(self) -> str:
        """The address as rooms keep it (`room.addr_hash`): a racer's other connections are
        known by it and get no boards of its race."""
        return addr_hash(self.addr)

    def viewer(self) -> Viewer:
        return Viewer(self.role or "spectator", self.seat, self.addr_key)


def client_address(ws: ServerConnection, trusted: tuple[IPNetwork, ...]) -> str:
    """Who the client is, as far as an address tells: the peer, or, when the peer is a trusted
    proxy, the last address its X-Forwarded-For names (the one that proxy saw; earlier ones
    are the client's own say and can be forged)."""
    peer = str(ws.remote_address[0]) if ws.remote_address else ""
    if ws.request is not None and _within(peer, trusted):
        forwarded = ws.request.headers.get("X-Forwarded-For")
        if forwarded:
            return forwarded.split(",")[-1].strip() or peer
    return peer


def _within(addr: str, nets: tuple[IPNetwork, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(addr)
    except ValueError:  # a Unix socket, or no address
        return False
    return any(ip in net for net in nets)
