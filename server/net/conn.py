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
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from solrace.protocol import messages as m
from solrace.server.net.ws_limits import SendLimits
from solrace.server.net.ws_server import WsConnection
from solrace.server.rules.projection import Viewer
from solrace.server.rules.room import addr_hash

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(spec: str) -> tuple[IPNetwork, ...]:
    """Comma-separated addresses or networks ("127.0.0.1,10.0.0.0/8") as networks."""
    return tuple(
        ipaddress.ip_network(p.strip(), strict=False) for p in spec.split(",") if p.strip()
    )


@dataclass(frozen=True)
class Limits:
    burst: int = 60
    rate: float = 20.0
    spectator_burst: int = 20
    spectator_rate: float = 5.0
    #: a connection in no room yet (browsing the lobby, joining): fewer credits than a racer
    lobby_burst: int = 20
    lobby_rate: float = 1.0
    #: seconds this process keeps a lobby page (server/race/lobby.py)
    lobby_cache: float = 1.0
    #: seconds a room in its lobby with nobody connected is kept (a day while anyone is)
    lobby_ttl: int = 900
    max_frame: int = m.MAX_FRAME
    idle_timeout: float = 60.0
    grace: float = 30.0
    #: the longest race, seconds (0: none): a race with no time limit, or a longer one, ends
    #: then (every seat still racing times out), a backstop for deadlines lost or seats stuck
    max_race: int = 7200
    #: solver processes of this server process (0: min(4, cores)); server/solving.py
    solver_workers: int = 0
    bad_frames: int = 3
    #: a process silent for 5 heartbeats is dead: others count out its connections
    heartbeat: float = 2.0
    #: seats one client address may hold in one room (0: no limit)
    seats_per_address: int = 8
    #: peers whose X-Forwarded-For names the client (a proxy in front: the shipped nginx)
    trusted_proxies: tuple[IPNetwork, ...] = networks("127.0.0.1,::1")
    #: slow requests (`hint`, `daily`, `start`: they may wait for the solver) one connection
    #: may have pending at once; the next is answered `busy` (limit "pending") at once
    pending: int = 4
    #: what a connection may hold on its way out before it is dropped as a slow reader
    sends: SendLimits = field(default_factory=SendLimits)


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
    ws: WsConnection
    bucket: Bucket
    hello: bool = False
    #: the public player id of the hello's player key (None: anonymous)
    player: str | None = None
    #: the hello said `bot: true` (a program: rated as, and shown as, a bot)
    bot: bool = False
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
    #: the client's address key (`client_address`, then `address_key`): seats and kicks go by it
    addr: str = ""
    #: the client's address itself (only the admin check reads it: never logged or stored)
    ip: str = ""
    #: rooms in which this connection took a seat (one each, until it leaves it)
    seated: set[str] = field(default_factory=set)
    #: the key its per-address limits count against (None: exempt); server/net/guard.py
    limit_key: str | None = None
    #: a board was kept from this spectator (its address races here): it gets the boards
    #: when that race is over for it
    withheld: bool = False
    #: slow requests being answered in their own tasks while the connection reads on
    pending: set[asyncio.Task[None]] = field(default_factory=set)
    #: held while a request may bind or unbind the connection (a `daily` answered in its own
    #: task must not interleave with a `join` read meanwhile)
    binding: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: messages received, not yet handled: one task (`drainer`) handles them in order while
    #: there are any (server/net/transport.py `received`)
    inbox: deque[bytes | str] = field(default_factory=deque)
    drainer: asyncio.Task[None] | None = None
    #: a move handled without a task (transport.py `_move_now`), waiting for Redis: the
    #: future of its append's reply; the inbox waits for it as for the drainer
    moving: asyncio.Future[Any] | None = None
    #: reading paused while the inbox is full
    reading_paused: bool = False
    #: being closed by the server: later messages are dropped
    closing: bool = False
    #: lost, and let go (unbound, uncounted)
    released: bool = False

    @functools.cached_property
    def addr_key(self) -> str:
        """The address as rooms keep it (`room.addr_hash`): a racer's other connections are
        known by it and get no boards of its race."""
        return addr_hash(self.addr)

    def viewer(self) -> Viewer:
        return Viewer(self.role or "spectator", self.seat, self.addr_key)


def client_address(ws: WsConnection, trusted: tuple[IPNetwork, ...]) -> str:
    """Who the client is, as far as an address tells: the peer, or, when the peer is a trusted
    proxy, the last address its X-Forwarded-For names (`forwarded_for`)."""
    peer = str(ws.remote_address[0]) if ws.remote_address else ""
    headers = ws.request.headers if ws.request is not None else None
    return forwarded_for(peer, headers.get("X-Forwarded-For") if headers else None, trusted)


def forwarded_for(peer: str, forwarded: str | None, trusted: tuple[IPNetwork, ...]) -> str:
    """The client's address: `peer`, or, when it is a trusted proxy, the last hop of its
    X-Forwarded-For (the address that proxy saw; earlier hops are the client's own say and can
    be forged). Only the last hop: trusting every peer (docker-compose: only nginx reaches the
    hosts) must not let a client pick its address."""
    if forwarded and within(peer, trusted):
        return forwarded.split(",")[-1].strip() or peer
    return peer


def address_key(addr: str) -> str:
    """The unit per-address limits, seats and kicks count: an IPv4 address, or an IPv6
    address's /64 (one host usually holds a whole /64 and may pick any address in it)."""
    try:
        ip = ipaddress.ip_address(addr)
    except ValueError:  # a Unix socket, or no address
        return addr
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{ip}/64", strict=False))
    return str(ip)


def within(addr: str, nets: tuple[IPNetwork, ...]) -> bool:
    """Whether `addr` is in one of `nets` (an IPv4-mapped IPv6 address as its IPv4 one)."""
    try:
        ip = ipaddress.ip_address(addr)
    except ValueError:  # a Unix socket, or no address
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in net for net in nets)
