"""Limits per client address and for the whole server process (issue 10, items 6 and 9).

A connection's own token bucket (`conn.Bucket`) bounds what one socket sends; it does not
stop one client from opening many sockets, nor many clients from sending, each within its
own bucket, requests that each cost Redis work (a lobby page, a lookup of an unknown room,
a new room). So requests are sorted in two:

* cheap: everything a racer does in its room (moves, ready, pings): only the connection's
  bucket applies;
* expensive: `lobby`, `join`, `spectate`, `resume`, `create`, `daily`, `quick`. Each takes a token from its
  client address's bucket and one from the server's (`server_rate`), and at most
  `server_inflight` of them wait on Redis at once, so the Redis pool always has connections
  left for the moves of the rooms already racing.

On top of that, per client address: at most `handshakes_per_address` sockets not yet
through the WebSocket handshake (counted from the moment the socket is accepted, so a client
opening sockets and sending nothing, or half a request, holds at most that many for the
handshake timeout; plain HTTP requests count too, until answered: `socket_opened`), at most
`conns_per_address` open connections, at most
`rooms_per_address` rooms created per `rooms_window` seconds, and lookups that find nothing
(`no_room`, `bad_token`: guessing codes or tokens) drain a small bucket of their own.

Against rating farming (docs/LEADERBOARDS.md, Provisional ratings), per client address: at
most `keys_per_address` distinct player keys say hello per `keys_window` seconds (a key said
lately, one of the last `keys_per_address`, costs nothing again), and at most
`rated_per_address` rated seats are raced per `rated_window` seconds, charged to the address
that starts the race (the host: one per seat; a rematch is a start too).

Addresses are counted per process (with `--workers N` a client may reach N times a cap);
IPv6 addresses are grouped by their /64 (`conn.address_key`). The client's address is
`conn.client_address` (behind a proxy: `--trusted-proxies`, the same address seats and kicks
go by); `exempt` names addresses no per-address cap or server budget applies to (monitoring,
load tests).
Entries of addresses with no connection left are dropped once their buckets are full again,
so the table holds only addresses that are connected or recently active.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from solrace.protocol.messages import ProtocolError
from solrace.server.net.conn import Bucket, IPNetwork, address_key, within

#: message types that cost Redis work whatever the room: per-address and server budgets
EXPENSIVE = frozenset(
    {
        "lobby",
        "join",
        "spectate",
        "resume",
        "create",
        "daily",
        "admin",
        "quick",
        "arena_create",  # an arena's keys, its deadline (and its own cap per address an hour)
        "arena_join",  # the reply reads the arena's whole member table
        "arena_watch",
    }
)
#: HTTP requests charged like the expensive messages: a replay built (a worker's CPU), a
#: record or a player's page looked up (Redis reads, records unpacked)
CHARGED_HTTP = frozenset({"replay", "record", "player"})
#: requests that make a room (a daily attempt is one): the per-address room budget
MAKES_ROOM = frozenset({"create", "daily"})
#: error codes of a lookup that found nothing: a guess
GUESS_MISSES = frozenset({"no_room", "bad_token", "no_arena"})


@dataclass(frozen=True)
class GuardLimits:
    """The caps; `solrace serve` flags set them (docs/OPERATIONS.md, Limits)."""

    conns_per_address: int = 50
    #: sockets not yet through the handshake (or answered, for HTTP), per address
    handshakes_per_address: int = 20
    rooms_per_address: int = 20
    rooms_window: float = 600.0
    #: expensive requests per address: burst, then per second
    requests_burst: int = 20
    requests_rate: float = 2.0
    #: lookups that found nothing, per address: burst, then per second
    guesses_burst: int = 10
    guesses_rate: float = 0.2
    #: expensive requests of the whole process: per second (burst: twice that) and at once
    server_rate: float = 200.0
    server_inflight: int = 16
    #: seconds an expensive request may wait for its turn before it is refused `busy`
    server_wait: float = 2.0
    #: distinct player keys per address: burst, refilled over the window (seconds)
    keys_per_address: int = 20
    keys_window: float = 3600.0
    #: seats of rated races an address may start: burst, refilled over the window (seconds)
    rated_per_address: int = 100
    rated_window: float = 3600.0
    #: addresses no per-address cap or server budget applies to (`--exempt`)
    exempt: tuple[IPNetwork, ...] = ()


def over(limit: str, message: str, retry_after: float) -> ProtocolError:
    """The refusal of a request over a per-address or server limit: `rate_limited`, naming
    the limit and how long to wait (ms)."""
    return ProtocolError(
        "rate_limited", message, limit=limit, retry_after=max(1, int(retry_after * 1000))
    )


@dataclass
class Address:
    """What one client address holds and has spent."""

    requests: Bucket
    rooms: Bucket
    guesses: Bucket
    keys: Bucket
    rated: Bucket
    conns: int = 0
    #: the player ids said hello with lately (at most `keys_per_address`, oldest out first)
    recent: OrderedDict[str, None] = field(default_factory=OrderedDict)
    #: sockets accepted and not yet through the handshake
    pending: int = 0

    def rested(self) -> bool:
        """Nothing left to remember: no connection, every bucket full again."""
        return (
            self.conns == 0
            and self.pending == 0
            and all(
                b.level() >= b.burst
                for b in (self.requests, self.rooms, self.guesses, self.keys, self.rated)
            )
        )


@dataclass
class Guard:
    limits: GuardLimits = field(default_factory=GuardLimits)
    addresses: dict[str, Address] = field(default_factory=dict)

    def __post_init__(self) -> None:
        lim = self.limits
        self.server = Bucket(max(1, int(lim.server_rate * 2)), lim.server_rate)
        self._inflight = asyncio.Semaphore(max(1, lim.server_inflight))
        self._sweep_at = 0.0

    def exempt(self, host: str) -> bool:
        return within(host, self.limits.exempt)

    def key_of(self, host: str) -> str | None:
        """The key an address is counted under (None: exempt), for a request that opens no
        connection of its own (an HTTP API call)."""
        return None if self.exempt(host) else address_key(host)

    def _entry(self, key: str) -> Address:
        got = self.addresses.get(key)
        if got is None:
            self._sweep()
            lim = self.limits
            got = self.addresses[key] = Address(
                Bucket(lim.requests_burst, lim.requests_rate),
                Bucket(lim.rooms_per_address, lim.rooms_per_address / lim.rooms_window),
                Bucket(lim.guesses_burst, lim.guesses_rate),
                Bucket(lim.keys_per_address, lim.keys_per_address / lim.keys_window),
                Bucket(lim.rated_per_address, lim.rated_per_address / lim.rated_window),
            )
        return got

    def _sweep(self) -> None:
        """Drop rested addresses, at most once a second (the table stays the size of the
        addresses connected or recently busy)."""
        now = time.monotonic()
        if now < self._sweep_at:
            return
        self._sweep_at = now + 1.0
        for key in [k for k, a in self.addresses.items() if a.rested()]:
            del self.addresses[key]

    # --- connections ----------------------------------------------------------------------

    def socket_opened(self, host: str) -> str | None:
        """A socket accepted from `host`, before anything is read from it: counted in, its
        address key returned (None: exempt); raises `rate_limited` (limit `handshakes`) when
        the address already holds its cap of sockets not yet through the handshake."""
        if self.exempt(host):
            return None
        key = address_key(host)
        entry = self._entry(key)
        if entry.pending >= self.limits.handshakes_per_address:
            raise ProtocolError(
                "rate_limited",
                "too many connections from your address waiting to open "
                f"(at most {self.limits.handshakes_per_address})",
                limit="handshakes",
                retry_after=1000,
            )
        entry.pending += 1
        return key

    def socket_done(self, key: str | None) -> None:
        """A socket counted by `socket_opened` is through its handshake, or closed."""
        if key is None:
            return
        entry = self.addresses.get(key)
        if entry is not None:
            entry.pending = max(0, entry.pending - 1)
            if entry.rested():
                del self.addresses[key]

    def connect(self, host: str) -> str | None:
        """Count a new connection in; its address key (None: exempt). Raises `rate_limited`
        (limit `connections`) when the address already holds its cap."""
        if self.exempt(host):
            return None
        key = address_key(host)
        entry = self._entry(key)
        if entry.conns >= self.limits.conns_per_address:
            raise ProtocolError(
                "rate_limited",
                f"too many connections from your address (at most {self.limits.conns_per_address})",
                limit="connections",
            )
        entry.conns += 1
        return key

    def disconnect(self, key: str | None) -> None:
        if key is None:
            return
        entry = self.addresses.get(key)
        if entry is not None:
            entry.conns = max(0, entry.conns - 1)
            if entry.rested():
                del self.addresses[key]

    # --- requests -------------------------------------------------------------------------

    def check(self, key: str | None, kind: str) -> None:
        """Charge an expensive request to its address and to the server (nothing for cheap
        ones); raises `rate_limited` naming the limit it hit, charging nothing then."""
        if (kind not in EXPENSIVE and kind not in CHARGED_HTTP) or key is None:
            return
        entry = self._entry(key)
        if (
            kind in ("join", "spectate", "resume", "admin", "arena_join", "arena_watch")
            and entry.guesses.level() < 1
        ):
            raise over(
                "guesses",
                "too many lookups of rooms or tokens that do not exist from your address",
                entry.guesses.wait(),
            )
        if kind in MAKES_ROOM and entry.rooms.level() < 1:
            raise over(
                "rooms",
                f"your address created {self.limits.rooms_per_address} rooms in "
                f"{self.limits.rooms_window:.0f} s",
                entry.rooms.wait(),
            )
        if entry.requests.level() < 1:
            raise over("address", "too many requests from your address", entry.requests.wait())
        if not self.server.take():
            raise over("server", "the server is taking too many requests", self.server.wait())
        entry.requests.take()
        if kind in MAKES_ROOM:
            entry.rooms.take()

    def player_key(self, key: str | None, player: str) -> None:
        """A hello with a player key (its public id): a key new to the address takes one of
        its key budget; raises `rate_limited` (limit `keys`) when it is spent."""
        if key is None:
            return
        entry = self._entry(key)
        if player in entry.recent:
            entry.recent.move_to_end(player)
            return
        if not entry.keys.take():
            raise over(
                "keys",
                f"your address said hello with {self.limits.keys_per_address} player keys in "
                f"{self.limits.keys_window:.0f} s: keep one key",
                entry.keys.wait(),
            )
        entry.recent[player] = None
        while len(entry.recent) > max(1, self.limits.keys_per_address):
            entry.recent.popitem(last=False)

    def rated_check(self, key: str | None, seats: int) -> None:
        """Whether the address may start a rated race of `seats` seats: raises `rate_limited`
        (limit `rated`) when its budget holds fewer; charges nothing (`rated_spend` does, once
        the race has started)."""
        if key is None:
            return
        entry = self._entry(key)
        if entry.rated.level() < seats:
            raise over(
                "rated",
                f"your address raced {self.limits.rated_per_address} rated seats in "
                f"{self.limits.rated_window:.0f} s",
                (seats - entry.rated.level()) / max(entry.rated.rate, 1e-9),
            )

    def rated_spend(self, key: str | None, seats: int) -> None:
        if key is not None:
            entry = self._entry(key)
            entry.rated.level()
            entry.rated.tokens -= seats

    def missed(self, key: str | None, code: str) -> None:
        """A lookup found nothing (`code` is the error it got): one guess spent."""
        if key is not None and code in GUESS_MISSES:
            self._entry(key).guesses.take()

    @contextlib.asynccontextmanager
    async def turn(self, kind: str, key: str | None) -> AsyncIterator[None]:
        """An expensive request's turn at Redis: at most `server_inflight` at once; one that
        waits longer than `server_wait` is refused `busy` (nothing done)."""
        if kind not in EXPENSIVE or key is None:
            yield
            return
        try:
            await asyncio.wait_for(self._inflight.acquire(), self.limits.server_wait)
        except TimeoutError:
            raise ProtocolError(
                "busy", "the server is busy with other requests; try again", limit="server"
            ) from None
        try:
            yield
        finally:
            self._inflight.release()
