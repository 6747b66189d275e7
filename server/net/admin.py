"""The operators' view of their rooms (`/admin` and the `admin` message).

Off unless the deployment sets an admin token (`SOLRACE_ADMIN_TOKEN`), and then answered only
to clients from the admin networks (`--admin-from`, loopback by default): the page is a
stranger's map of every private room, and its buttons end races. Everything goes through the
same parts a player's request does (the room service's rules, the store), so an operator's
kick is a kick every process and every record sees.

Each process writes a summary of the rooms it serves to Redis on every beat (`Admin.beat`),
kept a few beats: the page lists the rooms of every live process, whichever one it asks.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hmac
import ipaddress
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import msgpack
from solrace.protocol.messages import ProtocolError
from solrace.server.common.codes import normalize_code
from solrace.server.common.redact import SECRETS
from solrace.server.net.conn import IPNetwork, forwarded_for, networks
from solrace.server.race.service import RoomService
from solrace.server.rules.room import FINISHED, LOBBY, Room
from solrace.server.store import keys
from solrace.server.store.store import Store

log = logging.getLogger(__name__)

#: the environment variable that holds the admin token (no token: no admin interface)
ENV = "SOLRACE_ADMIN_TOKEN"
#: the admin networks when `--admin-from` is not given
DEFAULT_NETWORKS = "127.0.0.0/8,::1/128"
#: how many recent warnings and errors a process keeps for the page
RECENT_ERRORS = 100
#: a process's summary outlives this many missed beats
SUMMARY_BEATS = 5
#: at most this many rooms per process in its summary (the busiest first)
SUMMARY_ROOMS = 500


@dataclass(frozen=True)
class AdminSettings:
    #: the admin token; None turns the admin interface off
    token: str | None = None
    #: the client addresses the page and the `admin` message are answered for
    allowed: tuple[IPNetwork, ...] = field(default_factory=lambda: networks(DEFAULT_NETWORKS))

    @classmethod
    def from_env(cls, allowed: str = DEFAULT_NETWORKS) -> AdminSettings:
        token = os.environ.get(ENV) or None
        if token is not None and len(token) < 16:
            raise SystemExit(f"{ENV} must be at least 16 characters")
        return cls(token, networks(allowed))

    @property
    def on(self) -> bool:
        return self.token is not None

    def allows(self, address: str) -> bool:
        """Whether a client at this address may see the page (the token is checked apart)."""
        if not self.on:
            return False
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in net for net in self.allowed)

    def allows_request(
        self, peer: str, forwarded: str | None, trusted: tuple[IPNetwork, ...]
    ) -> bool:
        """`allows` for an HTTP request: its client as the API finds it (server/net/conn.py)."""
        return self.allows(forwarded_for(peer, forwarded, trusted))

    def token_is(self, token: str) -> bool:
        return self.token is not None and hmac.compare_digest(token.encode(), self.token.encode())


class RecentErrors(logging.Handler):
    """The process's last warnings and errors, redacted as every log line is (the page shows
    them; a log line may name a room or hold a token)."""

    def __init__(self, size: int = RECENT_ERRORS) -> None:
        super().__init__(logging.WARNING)
        self.addFilter(SECRETS)
        self.records: collections.deque[dict[str, Any]] = collections.deque(maxlen=size)

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            self.records.append(
                {
                    "at": int(record.created * 1000),
                    "level": record.levelname.lower(),
                    "logger": record.name,
                    "message": record.getMessage()[:500],
                }
            )

    def install(self) -> None:
        logging.getLogger("solrace").addHandler(self)

    def uninstall(self) -> None:
        logging.getLogger("solrace").removeHandler(self)


def seat_row(room: Room, seat: int, connected: set[int]) -> dict[str, Any]:
    """One seat as the page shows it: who, how far, whether connected (no card of any board)."""
    s = room.seat(seat)
    race = room.races.get(seat)
    return {
        "seat": seat,
        "name": s.get("name", ""),
        "bot": bool(s.get("bot")),
        "status": room.status(seat)
        if room.state != LOBBY
        else ("ready" if s.get("ready") else "waiting"),
        "moves": race.moves if race is not None else 0,
        "connected": seat in connected,
    }


class Admin:
    """Answers `admin` messages (ops `rooms`, `room`, `kick`, `close`, `errors`) and writes this
    process's room summary each beat."""

    def __init__(
        self,
        settings: AdminSettings,
        service: RoomService,
        store: Store,
        proc_id: str,
        local_rooms: Callable[[], Iterable[tuple[str, list[tuple[str | None, int | None]]]]],
        errors: RecentErrors | None = None,
    ) -> None:
        self.settings = settings
        self.service = service
        self.store = store
        self.proc_id = proc_id
        #: (code, [(role, seat) of each local connection]) for every room served here
        self.local_rooms = local_rooms
        self.errors = errors or RecentErrors()
        #: moves counted per room at the last beat, for the move rate
        self._moves: dict[str, tuple[int, float]] = {}
        self._task: asyncio.Task[None] | None = None

    # --- the summary ---------------------------------------------------------------------

    def summary(self) -> list[dict[str, Any]]:
        """The rooms this process serves, each with state, seats, spectators and move rate."""
        rows: list[dict[str, Any]] = []
        now = time.monotonic()
        moves_then = self._moves
        self._moves = {}
        for code, members in self.local_rooms():
            cached = self.service.cache.get(code)
            if cached is None:
                continue
            room = cached.room
            moves = sum(r.moves for r in room.races.values())
            before = moves_then.get(code)
            rate = 0.0
            if before is not None and now > before[1]:
                rate = max(0, moves - before[0]) * 60 / (now - before[1])
            self._moves[code] = (moves, now)
            rows.append(
                {
                    "code": code,
                    "state": room.state,
                    "game": room.options["game"],
                    "seats": sum(1 for s in room.doc["seats"] if s is not None),
                    "connected": len({seat for role, seat in members if role == "player"}),
                    "spectators": sum(1 for role, _ in members if role == "spectator"),
                    "moves": moves,
                    "moves_per_min": round(rate, 1),
                }
            )
        rows.sort(key=lambda r: (-r["moves_per_min"], -r["connected"], r["code"]))
        return rows[:SUMMARY_ROOMS]

    async def beat(self, heartbeat_s: float) -> None:
        """This process's summary to Redis, kept SUMMARY_BEATS beats."""
        body = msgpack.packb({"at": int(time.time() * 1000), "rooms": self.summary()})
        key = keys.proc(self.store.prefix, self.proc_id, "rooms")
        await self.store.redis.set(key, body, px=int(heartbeat_s * SUMMARY_BEATS * 1000))

    def start(self, heartbeat_s: float) -> None:
        if self.settings.on and self._task is None:
            self.errors.install()
            self._task = asyncio.ensure_future(self._beats(heartbeat_s))

    async def _beats(self, heartbeat_s: float) -> None:
        while True:
            try:
                await self.beat(heartbeat_s)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("admin: this process's room summary was not written", exc_info=True)
            await asyncio.sleep(heartbeat_s)

    async def close(self) -> None:
        if self._task is not None:
            self.errors.uninstall()
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
            with contextlib.suppress(Exception):
                await self.store.redis.delete(keys.proc(self.store.prefix, self.proc_id, "rooms"))

    # --- requests ------------------------------------------------------------------------

    def check(self, address: str, token: str) -> None:
        """Refuses (changing nothing) an admin request the deployment does not allow."""
        if not self.settings.on:
            raise ProtocolError("not_allowed", "the admin interface is off (no admin token)")
        if not self.settings.allows(address):
            raise ProtocolError("not_allowed", "admin requests are not taken from your address")
        if not self.settings.token_is(token):
            raise ProtocolError("bad_token", "that is not the admin token")

    async def handle(self, address: str, msg: dict[str, Any]) -> dict[str, Any]:
        self.check(address, msg["token"])
        op = msg["op"]
        if op == "rooms":
            return {"procs": await self.rooms()}
        if op == "errors":
            return {"proc": self.proc_id, "errors": list(self.errors.records)[::-1]}
        code = normalize_code(msg.get("room") or "")
        if not code:
            raise ProtocolError("bad_message", f"op {op} needs `room`", field="room")
        if op == "room":
            return {"room": await self.room(code)}
        if op == "kick":
            if msg.get("seat") is None:
                raise ProtocolError("bad_message", "op kick needs `seat`", field="seat")
            seat = int(msg["seat"])
            await self.service.update(code, lambda r, now: r.kick(seat, now))
            log.warning("admin: a seat was kicked by an operator")
            return {"room": await self.room(code)}
        if op == "close":
            await self.service.update(code, _close)
            log.warning("admin: a room was closed by an operator")
            return {"room": await self.room(code)}
        raise ProtocolError("bad_message", f"unknown admin op {op!r}", field="op")

    async def rooms(self) -> list[dict[str, Any]]:
        """Every live process's last summary (this process's fresh)."""
        procs = sorted(
            p.decode() if isinstance(p, bytes) else p
            for p in await self.store.redis.smembers(keys.processes(self.store.prefix))
        )
        out = [
            {
                "proc": self.proc_id,
                "at": int(time.time() * 1000),
                "rooms": self.summary(),
                "here": True,
            }
        ]
        for proc in procs:
            if proc == self.proc_id:
                continue
            raw = await self.store.redis.get(keys.proc(self.store.prefix, proc, "rooms"))
            if raw is not None:
                body = msgpack.unpackb(raw)
                out.append({"proc": proc, "at": body["at"], "rooms": body["rooms"], "here": False})
        return out

    async def room(self, code: str) -> dict[str, Any]:
        """One room as an operator inspects it: state, options, seats and their progress."""
        room = (await self.service.load(code)).room
        connected = {
            seat
            for c, members in self.local_rooms()
            if c == code
            for role, seat in members
            if role == "player" and seat is not None
        }
        return {
            "code": room.code,
            "state": room.state,
            "round": room.doc["round"],
            "game": room.options["game"],
            "options": {
                k: v
                for k, v in room.options.items()
                if isinstance(v, (int, float, str, bool)) or v is None
            },
            "seats": [
                seat_row(room, i, connected)
                for i, s in enumerate(room.doc["seats"])
                if s is not None
            ],
            "finished": room.state == FINISHED,
        }


def _close(room: Room, now: int) -> list[dict[str, Any]]:
    """Every seat kicked: a lobby empties, a race ends with every racer out (its results then
    come as any race's do)."""
    events: list[dict[str, Any]] = []
    for seat, s in enumerate(room.doc["seats"]):
        if s is not None and not s.get("kicked"):
            events += room.kick(seat, now)
    return events
