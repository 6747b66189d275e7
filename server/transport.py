"""The thin asyncio layer: WebSocket connections in, room service calls, frames out.

It decodes and validates each frame (protocol.messages), rate-limits, routes to
the RoomService, and sends what comes back. Room events are fanned out with one
encoded frame per event (`websockets.broadcast`): this process's own events as
soon as the store has them (no round trip through pub/sub and no decoding them
back), other processes' events as they arrive on Redis pub/sub (our own copies
there are dropped by their origin tag). Those two streams interleave when a
room's seats are split across processes, so event n+1 may arrive before n: it is
held (each room keeps its last few frames) and sent right after n once n arrives.
A connection still behind after a short wait fetches the missing events from the
room's stream (or gets a `snapshot` when they are no longer kept).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from dataclasses import dataclass
from typing import Any

import websockets
from redis.asyncio.client import PubSub
from redis.exceptions import ConnectionError as RedisConnectionError
from solrace import __version__
from solrace.protocol import messages as m
from solrace.protocol.messages import ProtocolError
from solrace.server.projection import Viewer
from solrace.server.room import COUNTDOWN, RACING
from solrace.server.service import RoomService, normalize_code
from solrace.server.store import ORIGIN_LEN, Store
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode

log = logging.getLogger("solrace.server")

#: what `welcome` and the HTTP Server header name this server as
SERVER_NAME = f"solrace/{__version__}"


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
    heartbeat: float = (
        2.0  # a process silent for 5 heartbeats is dead: others count out its connections
    )


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
    room: str | None = None
    role: str | None = None
    seat: int | None = None
    last_event: int = 0
    catching_up: bool = False
    dirty: bool = False  # a live event was held back while catching up: fetch once more
    bad_frames: int = 0
    last_seen: float = 0.0  # time.monotonic() of the last frame received
    idle_timer: asyncio.TimerHandle | None = None

    def viewer(self) -> Viewer:
        return Viewer(self.role or "spectator", self.seat)


#: frames kept per room, so an event that arrived early can follow the one it waited for
RECENT = 32
#: seconds a connection may wait for a late event before it fetches from the stream
GAP_WAIT = 0.1


class Hub:
    """Which local connections watch which room, fed by this process's own commits and by
    one Redis pub/sub connection for everyone else's."""

    def __init__(self, transport: Transport) -> None:
        self.t = transport
        self.rooms: dict[str, set[Conn]] = {}
        self.pubsub: PubSub = transport.store.redis.pubsub(ignore_subscribe_messages=True)
        self.task: asyncio.Task[None] | None = None
        self._channels: dict[str, str] = {}
        self.recent: dict[str, dict[int, bytes]] = {}
        self.gap_timers: dict[str, asyncio.TimerHandle] = {}
        transport.store.local = self

    async def add(self, code: str, conn: Conn) -> None:
        members = self.rooms.setdefault(code, set())
        if code not in self._channels:
            channel = self.t.store.channel(code)
            self._channels[code] = channel
            await self.pubsub.subscribe(channel)
            if self.task is None:
                self.task = asyncio.create_task(self._listen())
        members.add(conn)

    async def remove(self, code: str, conn: Conn) -> None:
        members = self.rooms.get(code)
        if members is None:
            return
        members.discard(conn)
        if not members:
            del self.rooms[code]
            self.recent.pop(code, None)
            timer = self.gap_timers.pop(code, None)
            if timer is not None:
                timer.cancel()
            self.t.service.forget(code)
            channel = self._channels.pop(code, None)
            if channel:
                with contextlib.suppress(Exception):
                    await self.pubsub.unsubscribe(channel)

    async def _listen(self) -> None:
        own, body = self.t.store.origin, 1 + ORIGIN_LEN
        while True:
            try:
                if not self._channels:
                    await asyncio.sleep(0.05)
                    continue
                msg = await self.pubsub.get_message(timeout=1.0)
                if msg is None or msg.get("type") != "message":
                    continue
                channel = msg["channel"].decode()
                code = channel.rsplit("{", 1)[1].split("}", 1)[0]
                data: bytes = msg["data"]
                if data[1:body] == own:
                    continue  # our own event or board: local_event/local_board sent it already
                if data[:1] == b"e":
                    head, payload = data[body:].split(b":", 1)
                    self.on_event(code, int(head), payload)
                elif data[:1] == b"b":
                    delay, frame = data[body:].split(b":", 1)
                    self.on_board(code, int(delay), frame)
            except asyncio.CancelledError:
                raise
            except Exception:  # a bad message must not stop the fan-out
                log.exception("pub/sub listener")
                await asyncio.sleep(0.1)

    def on_event(self, code: str, n: int, payload: bytes) -> None:
        """Another process's event, off pub/sub."""
        body = m.decode_trusted(payload)
        self.deliver(code, {"type": "event", "n": n, **body})

    def local_event(self, code: str, n: int, event: dict[str, Any]) -> None:
        """An event this process just stored: out to its own connections now (the store
        calls this; a room nobody here watches has no subscription and gets nothing, as before)."""
        if code in self.rooms:
            self.deliver(code, {"type": "event", "n": n, **event})

    def local_board(self, code: str, board: bytes) -> None:
        """A board this process just published ("<delay>:<frame>")."""
        if code in self.rooms:
            delay, frame = board.split(b":", 1)
            self.on_board(code, int(delay), frame)

    def deliver(self, code: str, event: dict[str, Any]) -> None:
        """Send event n to each connection at n-1, then any later events held for it; one that
        is further behind waits GAP_WAIT for the missing events before it fetches them."""
        n = event["n"]
        self.t.on_room_event(code, event)
        if event.get("kind") == "start":
            self.t.spawn(self.t.send_boards_at_start(code))
        members = self.rooms.get(code)
        if not members:
            return
        frame = m.encode(event)
        recent = self.recent.setdefault(code, {})
        recent[n] = frame
        recent.pop(n - RECENT, None)
        if len(recent) > RECENT:  # numbers far apart (a resync): keep the newest
            for old in sorted(recent)[:-RECENT]:
                del recent[old]
        ready = []
        drain = []
        behind = False
        for conn in members:
            if conn.last_event >= n:
                continue
            if conn.catching_up:
                conn.dirty = True
                self.t.spawn(self.t.catch_up(conn))
            elif conn.last_event == n - 1:
                conn.last_event = n
                ready.append(conn.ws)
                if n + 1 in recent:
                    drain.append(conn)
            else:
                behind = True
        if ready:
            websockets.broadcast(ready, frame)
        for conn in drain:  # events that arrived before n, now in order after it
            while (held := recent.get(conn.last_event + 1)) is not None:
                conn.last_event += 1
                websockets.broadcast([conn.ws], held)
        if behind and code not in self.gap_timers:
            self.gap_timers[code] = asyncio.get_running_loop().call_later(
                GAP_WAIT, self._gap_check, code
            )

    def _gap_check(self, code: str) -> None:
        """Whoever is still behind the newest event after the wait fetches what it missed."""
        self.gap_timers.pop(code, None)
        recent = self.recent.get(code)
        if not recent:
            return
        top = max(recent)
        for conn in self.rooms.get(code, ()):
            if conn.last_event < top:
                conn.dirty = True
                self.t.spawn(self.t.catch_up(conn))

    def on_board(self, code: str, delay: int, frame: bytes) -> None:
        def send() -> None:
            targets = [c.ws for c in self.rooms.get(code, ()) if c.role == "spectator"]
            if targets:
                websockets.broadcast(targets, frame)

        if delay > 0:
            asyncio.get_running_loop().call_later(delay, send)
        else:
            send()

    async def close(self) -> None:
        if self.task:
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()


class Transport:
    def __init__(self, service: RoomService, limits: Limits | None = None) -> None:
        self.service = service
        self.store: Store = service.store
        self.limits = limits or Limits()
        self.hub = Hub(self)
        self.conns: set[Conn] = set()
        self.tasks: set[asyncio.Task[Any]] = set()
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.proc_id = secrets.token_hex(8)
        self.janitor: asyncio.Task[None] | None = None

    # --- background duties: heartbeat, deadlines, tidying up after dead processes -------

    JANITOR_S = 0.25

    async def start(self) -> None:
        await self.store.heartbeat(self.proc_id, self.service.clock())
        self.janitor = asyncio.create_task(self._janitor())

    async def _janitor(self) -> None:
        """Deadlines in Redis (grace periods, race clocks) fire here, in whichever process is
        alive; a process that stopped beating has its connections counted out by another."""
        last_beat = 0.0
        while True:
            try:
                await asyncio.sleep(self.JANITOR_S)
                now = self.service.clock()
                if time.monotonic() - last_beat >= self.limits.heartbeat:
                    last_beat = time.monotonic()
                    await self.store.heartbeat(self.proc_id, now)
                    dead_after = int(self.limits.heartbeat * 5 * 1000)
                    for _proc, held in await self.store.claim_dead(now, dead_after):
                        await self._count_out(held)
                for member in await self.store.claim_due(now):
                    kind, _, rest = member.partition("|")
                    if kind == "grace":
                        code, _, seat = rest.partition("|")
                        self.spawn(self._grace_expired(code, int(seat)))
                    elif kind == "tick":
                        self.spawn(self._fire(rest))
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("janitor")

    async def _count_out(self, held: dict[str, int]) -> None:
        """Undo the presence of a dead process's connections (and start their grace periods)."""
        for key, count in held.items():
            if count <= 0:
                continue
            code, _, field = key.partition("|")
            if field == "spectators":
                await self.store.presence(code, field, -count)
                continue
            seat = int(field)
            now = self.service.clock()
            left, _ = await self.store.presence(
                code,
                field,
                -count,
                {"kind": "connected", "at": now, "seat": seat, "connected": True},
                {"kind": "connected", "at": now, "seat": seat, "connected": False},
            )
            if left == 0:
                await self.store.add_deadline(
                    f"grace|{code}|{seat}", now + int(self.limits.grace * 1000)
                )

    # --- helpers ------------------------------------------------------------------------

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def send(self, conn: Conn, msg: dict[str, Any]) -> None:
        await conn.ws.send(m.encode(msg))

    def health(self) -> dict[str, Any]:
        return {"connections": len(self.conns), "rooms": len(self.hub.rooms)}

    # --- clock --------------------------------------------------------------------------

    def on_room_event(self, code: str, event: dict[str, Any]) -> None:
        """Events that set a clock (countdown, start) arm a timer; any process may fire it."""
        kind = event.get("kind")
        if kind == "countdown":
            self.arm(code, event["starts_at"])
        elif kind == "start" and event.get("ends_at"):
            self.arm(code, event["ends_at"])

    def arm(self, code: str, at_ms: int) -> None:
        delay = max(0.0, (at_ms - self.service.clock()) / 1000.0) + 0.01
        # the Redis deadline is the backstop: if this process dies, another one fires it
        self.spawn(self.store.add_deadline(f"tick|{code}", at_ms + 500))
        old = self.timers.pop(code, None)
        if old:
            old.cancel()
        loop = asyncio.get_running_loop()
        self.timers[code] = loop.call_later(delay, lambda: self.spawn(self._fire(code)))

    async def _fire(self, code: str) -> None:
        self.timers.pop(code, None)
        try:
            room = await self.service.tick(code)
        except ProtocolError:
            return
        d = room.doc
        if room.state == RACING and d["ends_at"]:
            self.arm(code, d["ends_at"])
        elif room.state == COUNTDOWN:
            self.arm(code, d["starts_at"])

    async def send_boards_at_start(self, code: str) -> None:
        """The race is on: each local player gets a snapshot with its own board (one load per room)."""
        players = [c for c in self.hub.rooms.get(code, ()) if c.role == "player"]
        if not players:
            return
        try:
            snaps = await self.service.snapshots(code, [c.viewer() for c in players])
        except ProtocolError:
            return
        for conn, snap in zip(players, snaps, strict=False):
            conn.last_event = max(conn.last_event, snap["event"])
            with contextlib.suppress(ConnectionClosed):
                await self.send(conn, {"type": "snapshot", "snapshot": snap})

    # --- catch-up -----------------------------------------------------------------------

    async def catch_up(self, conn: Conn) -> None:
        """Send the events a connection missed, in order, or a snapshot when they are gone."""
        if conn.catching_up or conn.room is None:
            return
        conn.catching_up = True
        try:
            while True:
                conn.dirty = False
                events = await self.store.events_after(conn.room, conn.last_event)
                if events is None:
                    snap = await self.service.snapshot(conn.room, conn.viewer())
                    conn.last_event = max(conn.last_event, snap["event"])
                    await self.send(conn, {"type": "snapshot", "snapshot": snap})
                    continue
                fresh = [(n, e) for n, e in events if n > conn.last_event]
                if not fresh and not conn.dirty:
                    return
                for n, body in fresh:
                    if n <= conn.last_event:
                        continue
                    conn.last_event = n
                    await self.send(conn, {"type": "event", "n": n, **body})
        except ConnectionClosed:
            pass
        finally:
            conn.catching_up = False

    # --- connection lifecycle -----------------------------------------------------------

    async def handler(self, ws: ServerConnection) -> None:
        lim = self.limits
        conn = Conn(ws, Bucket(lim.burst, lim.rate))
        self.conns.add(conn)
        conn.last_seen = time.monotonic()
        self._arm_idle(conn, lim.idle_timeout)
        try:
            while True:
                frame = await ws.recv()
                conn.last_seen = time.monotonic()
                if not conn.bucket.take():
                    if conn.bucket.refused_in_row > 3 * conn.bucket.burst:
                        await ws.close(CloseCode.POLICY_VIOLATION, "rate limit")
                        return
                    await self.send(
                        conn,
                        m.error(
                            "rate_limited",
                            "too many messages; slow down",
                            ref=_peek_ref(frame, lim.max_frame),
                        ),
                    )
                    continue
                msg: dict[str, Any] | None = None
                try:
                    msg = m.decode(frame, lim.max_frame)
                    m.validate_client(msg)
                    await self.dispatch(conn, msg)
                except ProtocolError as exc:
                    await self.send(conn, exc.to_message(m.ref_of(msg)))
                    if exc.code == "frame_too_large":
                        await ws.close(CloseCode.MESSAGE_TOO_BIG, "frame too large")
                        return
                    if exc.code == "bad_frame":
                        conn.bad_frames += 1
                        if conn.bad_frames >= lim.bad_frames:
                            code = (
                                CloseCode.UNSUPPORTED_DATA
                                if isinstance(frame, str)
                                else CloseCode.INVALID_DATA
                            )
                            await ws.close(code, "undecodable frames")
                            return
                    if exc.code == "unsupported_version":
                        await ws.close(CloseCode.PROTOCOL_ERROR, "unsupported version")
                        return
                except ConnectionClosed:
                    raise
                except RedisConnectionError:
                    # no pooled connection came free in time (or Redis is briefly away): retryable
                    log.warning(
                        "redis unavailable while handling %r",
                        msg and msg.get("type"),
                        exc_info=True,
                    )
                    await self.send(
                        conn, m.error("busy", "the server is busy; try again", ref=m.ref_of(msg))
                    )
                except Exception:
                    log.exception("handling %r", msg)
                    await self.send(
                        conn,
                        m.error("internal", "the server failed on that message", ref=m.ref_of(msg)),
                    )
        except ConnectionClosed:
            pass
        finally:
            if conn.idle_timer is not None:
                conn.idle_timer.cancel()
            self.conns.discard(conn)
            await self.unbind(conn)

    def _arm_idle(self, conn: Conn, delay: float) -> None:
        """One timer per idle period, not a wait_for per frame (that cost ~5% of a move)."""
        conn.idle_timer = asyncio.get_running_loop().call_later(delay, self._idle_check, conn)

    def _idle_check(self, conn: Conn) -> None:
        quiet = time.monotonic() - conn.last_seen
        if quiet >= self.limits.idle_timeout:
            conn.idle_timer = None
            self.spawn(conn.ws.close(CloseCode.GOING_AWAY, "idle"))
        else:
            self._arm_idle(conn, self.limits.idle_timeout - quiet)

    async def unbind(self, conn: Conn) -> None:
        """The connection leaves its room: presence down (and a grace timer for a racing seat)."""
        code, role, seat = conn.room, conn.role, conn.seat
        if code is None:
            return
        conn.room = conn.role = conn.seat = None
        await self.hub.remove(code, conn)
        try:
            if role == "player" and seat is not None:
                now = self.service.clock()
                count, _ = await self.store.presence(
                    code,
                    str(seat),
                    -1,
                    {"kind": "connected", "at": now, "seat": seat, "connected": True},
                    {"kind": "connected", "at": now, "seat": seat, "connected": False},
                )
                await self.store.note_connection(self.proc_id, code, str(seat), -1)
                if count == 0:
                    await self.store.add_deadline(
                        f"grace|{code}|{seat}", now + int(self.limits.grace * 1000)
                    )
            elif role == "spectator":
                await self.store.presence(code, "spectators", -1)
                await self.store.note_connection(self.proc_id, code, "spectators", -1)
        except Exception:  # Redis gone during shutdown: nothing more to tidy
            log.debug("presence update failed", exc_info=True)

    async def _grace_expired(self, code: str, seat: int) -> None:
        """A racing seat gone longer than the grace period counts as resigned."""
        try:
            conns = await self.store.connections(code)
            if conns.get(str(seat), 0) > 0:
                return
            cached = await self.service.load(code)
            room = cached.room
            if room.state in (COUNTDOWN, RACING) and room.status(seat) == "racing":
                await self.service.resign(code, seat, "resigned")
        except ProtocolError:
            pass

    async def bind(self, conn: Conn, code: str, role: str, seat: int | None) -> None:
        if conn.room is not None:
            await self.unbind(conn)
        conn.room, conn.role, conn.seat = code, role, seat
        await self.hub.add(code, conn)
        if role == "player" and seat is not None:
            now = self.service.clock()
            await self.store.presence(
                code,
                str(seat),
                +1,
                {"kind": "connected", "at": now, "seat": seat, "connected": True},
                {"kind": "connected", "at": now, "seat": seat, "connected": False},
            )
            await self.store.note_connection(self.proc_id, code, str(seat), +1)
        else:
            # watchers get fewer credits than racers (lichess does the same)
            conn.bucket = Bucket(self.limits.spectator_burst, self.limits.spectator_rate)
            await self.store.presence(code, "spectators", +1)
            await self.store.note_connection(self.proc_id, code, "spectators", +1)

    # --- dispatch -----------------------------------------------------------------------

    async def dispatch(self, conn: Conn, msg: dict[str, Any]) -> None:
        kind = msg["type"]
        ref = m.ref_of(msg)
        if kind == "hello":
            if msg["version"] not in m.VERSIONS:
                raise ProtocolError(
                    "unsupported_version",
                    f"this server speaks version {m.VERSION}",
                    versions=list(m.VERSIONS),
                )
            conn.hello = True
            lim = self.limits
            limits = {"max_frame": lim.max_frame, "burst": lim.burst, "rate": int(lim.rate)}
            await self.send(conn, m.with_ref(m.welcome(SERVER_NAME, limits), ref))
            return
        if not conn.hello:
            raise ProtocolError("hello_required", "say hello first")
        if kind == "ping":
            await self.send(conn, m.pong(ref, msg.get("t")))
            return
        if kind == "lobby":
            rooms = await self.service.lobby()
            await self.send(conn, m.with_ref({"type": "lobby", "rooms": rooms}, ref))
            return
        handler = getattr(self, f"on_{kind}")
        await handler(conn, msg, ref)

    async def _joined(
        self,
        conn: Conn,
        ref: int | None,
        code: str,
        role: str,
        seat: int | None,
        last_event: int | None,
        **extra: Any,
    ) -> None:
        """Bind, then reply with a snapshot, or (resuming with a kept gap) with the missed events."""
        conn.catching_up = True  # live events wait until the reply has set where this client is
        try:
            await self._joined_reply(conn, ref, code, role, seat, last_event, **extra)
        finally:
            conn.catching_up = False
        await self.catch_up(conn)

    async def _joined_reply(
        self,
        conn: Conn,
        ref: int | None,
        code: str,
        role: str,
        seat: int | None,
        last_event: int | None,
        **extra: Any,
    ) -> None:
        await self.bind(conn, code, role, seat)
        self.conns_bound_clock(code)
        reply: dict[str, Any] = {
            "type": "joined",
            "room": code,
            "role": role,
            "seat": seat,
            **extra,
        }
        m.with_ref(reply, ref)
        if last_event is not None:
            missed = await self.store.events_after(code, last_event)
            if missed is not None:
                you = (
                    await self.service.own_view(code, seat)
                    if role == "player" and seat is not None
                    else None
                )
                reply["event"] = last_event
                if role == "player":
                    reply["you"] = {"seat": seat, "view": you}
                conn.last_event = last_event
                await self.send(conn, reply)
                if role == "spectator":
                    for board in await self.service.spectator_boards(code):
                        await self.send(conn, board)
                return
        snap = await self.service.snapshot(code, Viewer(role, seat))
        conn.last_event = snap["event"]
        reply["snapshot"] = snap
        await self.send(conn, reply)

    def conns_bound_clock(self, code: str) -> None:
        cached = self.service.cache.get(code)
        if cached is None:
            return
        d = cached.room.doc
        if cached.room.state == COUNTDOWN:
            self.arm(code, d["starts_at"])
        elif cached.room.state == RACING and d["ends_at"]:
            self.arm(code, d["ends_at"])

    def _player(self, conn: Conn) -> tuple[str, int]:
        if conn.room is None or conn.role != "player" or conn.seat is None:
            raise ProtocolError("not_player", "join or resume a seat first")
        return conn.room, conn.seat

    async def on_create(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        play = msg.get("play", True)
        out = await self.service.create(msg["name"], msg.get("options"), play)
        extra = {"host_token": out["host_token"]}
        if play:
            extra["token"] = out["token"]
        await self._joined(
            conn, ref, out["room"], "player" if play else "spectator", out["seat"], None, **extra
        )

    async def on_join(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        out = await self.service.join(msg["room"], msg["name"])
        await self._joined(conn, ref, out["room"], "player", out["seat"], None, token=out["token"])

    async def on_spectate(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        room = await self.service.check_spectate(msg["room"])
        await self._joined(conn, ref, room.code, "spectator", None, msg.get("last_event"))

    async def on_resume(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        code = normalize_code(msg["room"])
        seat = await self.service.authenticate(code, msg["token"])
        await self._joined(conn, ref, code, "player", seat, msg.get("last_event"))

    async def on_leave(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        if conn.room is None:
            raise ProtocolError("not_player", "you are in no room")
        if conn.role == "player" and conn.seat is not None:
            await self.service.leave(conn.room, conn.seat)
        await self.unbind(conn)
        await self.send(conn, m.ok(ref))

    async def on_ready(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        code, seat = self._player(conn)
        await self.service.ready(code, seat, msg["ready"])
        await self.send(conn, m.ok(ref))

    def _room_of(self, conn: Conn) -> str:
        if conn.room is None:
            raise ProtocolError("not_player", "join or create a room first")
        return conn.room

    async def on_configure(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        await self.service.configure(self._room_of(conn), msg["host_token"], msg["options"])
        await self.send(conn, m.ok(ref))

    async def on_start(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        room = await self.service.start(self._room_of(conn), msg["host_token"])
        await self.send(conn, m.ok(ref))
        self.arm(room.code, room.doc["starts_at"])

    async def on_kick(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        await self.service.kick(self._room_of(conn), msg["host_token"], msg["seat"])
        await self.send(conn, m.ok(ref))

    async def on_rematch(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        await self.service.rematch(self._room_of(conn), msg["host_token"])
        await self.send(conn, m.ok(ref))

    async def on_move(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        code, seat = self._player(conn)
        ack = await self.service.move(code, seat, msg["move"], msg.get("n"))
        await self.send(conn, m.with_ref(ack, ref))

    async def on_undo(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        code, seat = self._player(conn)
        ack = await self.service.move(code, seat, "", msg.get("n"), undo=True)
        await self.send(conn, m.with_ref(ack, ref))

    async def on_resign(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        code, seat = self._player(conn)
        await self.service.resign(code, seat)
        await self.send(conn, m.ok(ref))

    async def close(self) -> None:
        for handle in self.timers.values():
            handle.cancel()
        if self.janitor:
            self.janitor.cancel()
            with contextlib.suppress(BaseException):
                await self.janitor
        with contextlib.suppress(Exception):
            await self.store.retire(self.proc_id)
        await self.hub.close()


def _peek_ref(frame: bytes | str, max_size: int) -> int | None:
    """The id of a refused request, so the client can match the refusal to it."""
    try:
        return m.ref_of(m.decode(frame, max_size))
    except ProtocolError:
        return None
