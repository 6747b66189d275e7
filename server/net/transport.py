"""Sockets: WebSocket connections in, room service calls, replies out.

Each message (handed over by the connection's `ws_server.WsConnection` as it is read, and
queued in the connection's inbox) is rate-limited per connection, decoded and validated
(protocol.messages), and dispatched to its `on_<type>` handler that calls the room service and
answers: `Transport.on`, a dict built once from the handler groups (server/net/handlers.py,
handlers_room.py, handlers_lobby.py, handlers_ops.py; a new message is a method on one of
them); hello and ping are answered here. One task per connection drains its inbox in order
while there is work. What happens
to a room's other connections is not here: room events reach them through the fan-out
(`fanout.Hub`), and presence, timers and grace periods are the room supervision's
(`supervisor.RoomSupervisor`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Coroutine
from typing import Any

from solrace import __version__
from solrace.protocol import messages as m
from solrace.protocol.messages import ProtocolError
from solrace.server.common.metrics import METRICS
from solrace.server.league import players
from solrace.server.league.daily import Dailies
from solrace.server.league.records import Records
from solrace.server.league.signing import signing_key
from solrace.server.league.standings import Standings
from solrace.server.net.admin import Admin
from solrace.server.net.conn import Bucket, Conn, Limits, address_key, client_address, within
from solrace.server.net.fanout import Hub, write
from solrace.server.net.guard import EXPENSIVE, Guard
from solrace.server.net.handlers import Handler, reply
from solrace.server.net.handlers_arena import ArenaHandlers
from solrace.server.net.handlers_lobby import LobbyHandlers
from solrace.server.net.handlers_ops import OpsHandlers
from solrace.server.net.handlers_room import RoomHandlers
from solrace.server.net.supervisor import RoomSupervisor
from solrace.server.net.ws_server import WsConnection
from solrace.server.race.arena import ArenaService
from solrace.server.race.quick import QuickMatch
from solrace.server.race.service import RoomService
from solrace.server.store.redis_conn import transient
from solrace.server.store.store import Store
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode

log = logging.getLogger("solrace.server")

#: requests that may wait long (for the solver: a hint, a daily's deal, a winnable start's
#: draw): each is answered in its own task while the connection reads on (pings, moves),
#: at most `Limits.pending` at once per connection
SLOW = frozenset({"hint", "daily", "start"})
#: requests that bind or unbind the connection (held under `Conn.binding`)
BINDS = frozenset({"create", "join", "spectate", "resume", "leave"})

#: what `welcome` and the HTTP Server header name this server as
SERVER_NAME = f"solrace/{__version__}"
#: messages a connection's inbox holds before its socket's reading pauses, and resumes
INBOX_HIGH = 16
INBOX_LOW = 4

#: a message handled in `data_received` (`Transport._move_now`) and what is left of it
Tail = tuple[dict[str, Any], Coroutine[Any, Any, Any]]

__all__ = ["SERVER_NAME", "Limits", "Transport"]


class Transport:
    """The sockets' side of the server: connections, their limits, and every message's handler.
    Built by the composition root (server/app.py) with every part it uses."""

    def __init__(
        self,
        service: RoomService,
        hub: Hub,
        rooms: RoomSupervisor,
        limits: Limits,
        *,
        records: Records,
        standings: Standings,
        dailies: Dailies,
        guard: Guard,
        admin: Admin,
        quick: QuickMatch | None = None,
        arena: ArenaService | None = None,
    ) -> None:
        self.service = service
        self.records = records
        #: players' figures, the all-time boards and ratings (server/league/standings.py)
        self.standings = standings
        #: daily races (server/league/daily.py)
        self.dailies = dailies
        #: the operators' requests (server/net/admin.py); off without an admin token
        self.admin = admin
        #: per-address caps and the server's budget of expensive requests (server/net/guard.py)
        self.guard = guard
        self.store: Store = service.store
        self.hub = hub
        self.rooms = rooms
        self.limits = limits
        self.conns: set[Conn] = set()
        #: quick match: the queue's tickets and the matcher (server/race/quick.py)
        self.quick = quick
        #: every message type's handler (but hello's and ping's, answered here), built once:
        #: each group's `on_<type>` methods (server/net/handlers*.py)
        self.on: dict[str, Handler] = {}
        self.room_handlers: RoomHandlers | None = None
        for group in (RoomHandlers, LobbyHandlers, OpsHandlers, ArenaHandlers):
            handlers = group(
                service,
                hub,
                rooms,
                limits,
                guard=guard,
                dailies=dailies,
                admin=admin,
                quick=quick,
                arena=arena,
            )
            if isinstance(handlers, RoomHandlers):
                self.room_handlers = handlers
            table = handlers.table()
            assert not table.keys() & self.on.keys(), "a message type with two handlers"
            self.on.update(table)
        #: arena events (server/race/arena.py), on the quick match's queue
        self.arena = arena
        self.tasks: set[asyncio.Task[Any]] = set()
        #: tasks that drain connections' inboxes or let lost connections go (`idle`)
        self.handlers: set[asyncio.Task[Any]] = set()
        #: moves handled without a task, waiting for Redis (`_move_now`; `idle`)
        self.moves: set[asyncio.Future[Any]] = set()

    async def start(self) -> None:
        await self.service.load_secret()  # before the first connection: its address is keyed
        self.admin.start(self.limits.heartbeat)
        if self.records.signer is None:  # before the first record: each is signed
            self.records.signer = await signing_key(self.store.redis, self.store.prefix)
        await self.rooms.start()
        if self.quick is not None:
            self.quick.start()

    async def arena_results(self, aid: str) -> dict[str, Any]:
        """/api/event/ID: the arena with every standing and race (ProtocolError: none)."""
        if self.arena is None:
            raise ProtocolError("not_allowed", "this server has no arenas")
        return await self.arena.view(aid, rows=None, races=True)

    async def close(self) -> None:
        if self.arena is not None:
            await self.arena.close()
        if self.quick is not None:
            await self.quick.close()
        await self.admin.close()
        await self.records.flush()
        await self.dailies.flush()
        await self.rooms.close()
        await self.hub.close()
        if self.service.stock is not None:
            self.service.stock.close()
        if self.service.solver is not None:
            self.service.solver.close()

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def send(self, conn: Conn, msg: dict[str, Any]) -> None:
        """A reply (or error), as the handlers send theirs (`handlers.reply`)."""
        await reply(self.hub, conn, msg)

    def serve_options(self) -> dict[str, Any]:
        """`ws_server.serve`'s arguments that apply this server's frame and send limits, and
        the per-address cap of sockets not yet through the handshake."""
        return {"max_size": self.limits.max_frame, "sends": self.limits.sends, "sockets": self}

    # --- sockets before the handshake (ws_limits.Sockets) -------------------------------

    def opened(self, host: str) -> str | None:
        """A socket accepted: counted against its address (not a trusted proxy's: many
        clients share it, and which one is not known before its request is read)."""
        if within(host, self.limits.trusted_proxies):
            return None
        return self.guard.socket_opened(host)

    def done(self, key: str | None) -> None:
        self.guard.socket_done(key)

    def health(self) -> dict[str, Any]:
        return {"connections": len(self.conns), "rooms": len(self.hub.rooms)}

    # --- connection lifecycle -----------------------------------------------------------

    def connected(self, ws: WsConnection) -> Conn | None:
        """A WebSocket through its handshake (ws_server.App): its `Conn`, or None when its
        address has too many connections (told so, and closed with 1008)."""
        lim = self.limits
        # in no room yet: the lobby's credits (never more than a racer's)
        conn = Conn(ws, Bucket(min(lim.lobby_burst, lim.burst), min(lim.lobby_rate, lim.rate)))
        addr = client_address(ws, lim.trusted_proxies)
        conn.ip = addr
        conn.addr = address_key(addr)
        try:
            conn.limit_key = self.guard.connect(addr)
        except ProtocolError as exc:
            write(conn, exc.to_message())
            ws.start_close(CloseCode.POLICY_VIOLATION, "too many connections")
            return None
        self.conns.add(conn)
        conn.last_seen = time.monotonic()
        self._arm_idle(conn, lim.idle_timeout)
        return conn

    def received(self, conn: Conn, frame: bytes | str) -> None:
        """A message, in the connection's `data_received`: a move with nothing before it is
        handled at once, with no task (`_move_now`); anything else is queued in the
        connection's inbox, which one task drains in order while there is work (`_drain`);
        reading pauses while it is full."""
        conn.last_seen = time.monotonic()
        if conn.closing:
            return
        if conn.drainer is None and conn.moving is None and self._move_now(conn, frame):
            return
        conn.inbox.append(frame)
        if conn.drainer is None and conn.moving is None:
            conn.drainer = self._handle_task(self._drain(conn))
        elif len(conn.inbox) >= INBOX_HIGH and not conn.reading_paused:
            conn.reading_paused = True
            conn.ws.transport.pause_reading()

    def _move_now(self, conn: Conn, frame: bytes | str) -> bool:
        """A racer's move (or undo) straight from `data_received` to the room's rules and
        the turn's Redis pipeline, without a task or a future of its own: the ack is written
        from the pipeline's answer (`RoomService.move_now`), and the connection's next
        messages wait in its inbox until then, as behind a drained message. False: nothing
        was done or taken, the message goes the ordinary way (`_drain`): not a move, not a
        plain case (`move_now` says which), or anything the ordinary way answers (no hello,
        no seat, no token in the rate bucket, a frame that does not decode or validate)."""
        rooms = self.room_handlers
        if (
            rooms is None
            or not conn.hello
            or conn.room is None
            or conn.role != "player"
            or conn.seat is None
            or conn.bucket.level() < 1
        ):
            return False
        try:
            msg = m.decode(frame, self.limits.max_frame)
            m.validate_client(msg)
        except ProtocolError:
            return False
        kind = msg["type"]
        if kind != "move" and kind != "undo":
            return False
        future = rooms.move_now(conn, msg, m.ref_of(msg), lambda tail: self._moved(conn, msg, tail))
        if future is None:
            return False
        conn.bucket.take()  # there was a token above, and nothing ran since
        conn.moving = future
        self.moves.add(future)
        return True

    def _moved(
        self, conn: Conn, msg: dict[str, Any], tail: Coroutine[Any, Any, Any] | None
    ) -> None:
        """A move of `_move_now` answered: what is left of it (`tail`, an error to answer
        included) in a task that then drains the inbox; else the inbox, if any, drained."""
        if conn.moving is not None:
            self.moves.discard(conn.moving)
            conn.moving = None
        if tail is not None:
            conn.drainer = self._handle_task(self._drain(conn, (msg, tail)))
        elif conn.inbox:
            conn.drainer = self._handle_task(self._drain(conn))
        elif conn.ws.lost:
            self._handle_task(self._release(conn))

    def disconnected(self, conn: Conn) -> None:
        """The connection is gone: let it go once its inbox's task (or its move) is done with it."""
        if conn.drainer is None and conn.moving is None:
            self._handle_task(self._release(conn))

    async def idle(self) -> None:
        """Every connection's inbox drained, every move answered and every lost connection
        let go (shutdown waits)."""
        while self.handlers or self.moves:
            await asyncio.wait(set(self.handlers) | set(self.moves))
            await asyncio.sleep(0)  # a move's answer hands its tail to a task in a callback

    def _handle_task(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self.handlers.add(task)
        task.add_done_callback(self.handlers.discard)
        return task

    async def _drain(self, conn: Conn, tail: Tail | None = None) -> None:
        """The inbox's messages in order; first, what is left of a move (`_moved`)."""
        inbox = conn.inbox
        try:
            if tail is not None and not await self._answer(conn, "", tail):
                conn.closing = True
                inbox.clear()
            while inbox:
                frame = inbox.popleft()
                if conn.reading_paused and len(inbox) <= INBOX_LOW:
                    conn.reading_paused = False
                    if not conn.ws.lost:
                        conn.ws.transport.resume_reading()
                if not await self._handle_frame(conn, frame):
                    conn.closing = True
                    inbox.clear()
        except ConnectionClosed:
            inbox.clear()
        except Exception:  # a bug below the handlers' own catch-all: as websockets did, 1011
            log.exception("connection handler failed")
            inbox.clear()
            conn.closing = True
            conn.ws.start_close(CloseCode.INTERNAL_ERROR)
        finally:
            conn.drainer = None
        if conn.ws.lost:
            await self._release(conn)

    async def _release(self, conn: Conn) -> None:
        if conn.released:
            return
        conn.released = True
        if conn.idle_timer is not None:
            conn.idle_timer.cancel()
        self.conns.discard(conn)
        self.guard.disconnect(conn.limit_key)
        failed: BaseException | None = None
        try:
            await self._end_pending(conn)
            if self.arena is not None:
                self.arena.dropped(conn)
            if self.quick is not None:
                await self.quick.dropped(conn)
        except BaseException as exc:  # unbound all the same, then raised: a `finally` that
            failed = exc  # awaits is what compiled code must not have (no await while handling)
        await self.rooms.unbind(conn)
        if failed is not None:
            raise failed

    async def _handle_frame(self, conn: Conn, frame: bytes | str) -> bool:
        """One message: rate limit, decode, validate, dispatch; False: the connection is
        being closed (its later messages are dropped)."""
        lim = self.limits
        ws = conn.ws
        if not conn.bucket.take():
            if conn.bucket.refused_in_row > 3 * conn.bucket.burst:
                ws.start_close(CloseCode.POLICY_VIOLATION, "rate limit")
                return False
            await self.send(
                conn,
                m.error(
                    "rate_limited",
                    "too many messages; slow down",
                    ref=_peek_ref(frame, lim.max_frame),
                ),
            )
            return True
        return await self._answer(conn, frame)

    async def _answer(self, conn: Conn, frame: bytes | str, tail: Tail | None = None) -> bool:
        """A message decoded, validated and dispatched, or what is left of a move (`tail`),
        its errors answered; False: the connection is being closed."""
        msg: dict[str, Any] | None = None
        refused: ProtocolError | None = None
        failure: Exception | None = None
        # the errors are answered after the `try`, not in its handlers: no await while an
        # exception is handled (docs/ARCHITECTURE.md, "Compiled modules")
        try:
            if tail is not None:
                msg = tail[0]
                await tail[1]
                return True
            msg = m.decode(frame, self.limits.max_frame)
            m.validate_client(msg)
            await self.dispatch(conn, msg)
        except ProtocolError as exc:
            refused = exc
        except ConnectionClosed:
            raise
        except Exception as err:  # not `exc`: one name, one type (mypyc)
            failure = err
        if refused is not None:
            return await self._refused(conn, msg, frame, refused)
        if failure is not None:
            await self._failed(conn, msg, failure)
        return True

    async def _refused(
        self, conn: Conn, msg: dict[str, Any] | None, frame: bytes | str, exc: ProtocolError
    ) -> bool:
        """A request refused with a ProtocolError answered; False: the connection is being
        closed (a frame too large, too many undecodable ones, an unsupported version)."""
        ws = conn.ws
        await self.send(conn, exc.to_message(m.ref_of(msg)))
        if exc.code == "frame_too_large":
            ws.start_close(CloseCode.MESSAGE_TOO_BIG, "frame too large")
            return False
        if exc.code == "bad_frame":
            conn.bad_frames += 1
            if conn.bad_frames >= self.limits.bad_frames:
                code = (
                    CloseCode.UNSUPPORTED_DATA if isinstance(frame, str) else CloseCode.INVALID_DATA
                )
                ws.start_close(code, "undecodable frames")
                return False
        if exc.code == "unsupported_version":
            ws.start_close(CloseCode.PROTOCOL_ERROR, "unsupported version")
            return False
        return True

    async def _failed(self, conn: Conn, msg: dict[str, Any] | None, exc: Exception) -> None:
        """The answer to a request whose handler failed with something not a ProtocolError."""
        if transient(exc):
            # no pooled connection came free in time (or Redis is briefly away): retryable
            METRICS.redis_errors.labels("request").inc()
            log.warning(
                "redis unavailable while handling %r", msg and msg.get("type"), exc_info=exc
            )
            await self.send(
                conn, m.error("busy", "the server is busy; try again", ref=m.ref_of(msg))
            )
            return
        log.error("handling %r", m.redacted(msg), exc_info=exc)
        await self.send(
            conn, m.error("internal", "the server failed on that message", ref=m.ref_of(msg))
        )

    async def _end_pending(self, conn: Conn) -> None:
        """The connection is gone: a pending hint is dropped (nobody reads its answer); the
        other slow requests (a daily attempt, a start) finish as they would have, before
        the connection is unbound (a `daily` must not bind a connection after its unbind)."""
        for task in conn.pending:
            if task.get_name() == "hint":
                task.cancel()
        if not conn.pending:
            return
        try:
            await asyncio.wait(conn.pending)
        except asyncio.CancelledError:  # the server is closing: nothing waits any more
            for task in conn.pending:
                task.cancel()
            raise

    def _arm_idle(self, conn: Conn, delay: float) -> None:
        """One timer per idle period, not a wait_for per frame (that cost ~5% of a move)."""
        conn.idle_timer = asyncio.get_running_loop().call_later(delay, self._idle_check, conn)

    def _idle_check(self, conn: Conn) -> None:
        quiet = time.monotonic() - conn.last_seen
        if quiet >= self.limits.idle_timeout:
            conn.idle_timer = None
            conn.ws.start_close(CloseCode.GOING_AWAY, "idle")
        else:
            self._arm_idle(conn, self.limits.idle_timeout - quiet)

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
            player = self._player_of(conn, msg.get("player_key"))
            conn.hello, conn.player, conn.bot = True, player, bool(msg.get("bot"))
            lim = self.limits
            limits = {
                "max_frame": lim.max_frame,
                "burst": lim.burst,
                "rate": int(lim.rate),
                "lobby_burst": min(lim.lobby_burst, lim.burst),
                "lobby_rate": min(lim.lobby_rate, lim.rate),
                "grace": lim.grace,  # s a disconnected racer keeps the seat ("resigns in N s")
            }
            await self.send(conn, m.with_ref(m.welcome(SERVER_NAME, limits, player), ref))
            return
        if not conn.hello:
            raise ProtocolError("hello_required", "say hello first")
        if kind == "ping":
            await self.send(conn, m.pong(ref, msg.get("t")))
            return
        if kind in SLOW:
            if len(conn.pending) >= self.limits.pending:
                raise ProtocolError(
                    "busy",
                    f"{len(conn.pending)} slow requests of this connection are pending; "
                    "wait for an answer",
                    limit="pending",
                )
            self.guard.check(conn.limit_key, kind)  # charged now, in the order they came
            task = asyncio.ensure_future(self._slow(conn, kind, msg, ref))
            task.set_name(kind)
            conn.pending.add(task)
            task.add_done_callback(conn.pending.discard)
            return
        if kind in BINDS:
            async with conn.binding:
                await self._handle(conn, kind, msg, ref)
            return
        await self._handle(conn, kind, msg, ref)

    async def _handle(self, conn: Conn, kind: str, msg: dict[str, Any], ref: int | None) -> None:
        handler = self.on[kind]
        if kind not in EXPENSIVE:
            await handler(conn, msg, ref)
            return
        if kind not in SLOW:
            self.guard.check(conn.limit_key, kind)
        try:
            async with self.guard.turn(kind, conn.limit_key):
                await handler(conn, msg, ref)
        except ProtocolError as exc:
            self.guard.missed(conn.limit_key, exc.code)  # a lookup that found nothing: a guess
            raise

    async def _slow(self, conn: Conn, kind: str, msg: dict[str, Any], ref: int | None) -> None:
        """A slow request in its own task while the connection reads on; its answer (or
        error) carries its `ref` as any other."""
        refused: ProtocolError | None = None
        failure: Exception | None = None
        try:
            if kind == "daily":
                # the day's deal is drawn by the solver (CPU, off the loop), once a day: asking
                # for it must not hold one of the server's Redis turns while it is drawn
                game = self.dailies.check_request(msg)
                date, practice = self.dailies.attempt_day(
                    bool(msg.get("practice")), msg.get("date")
                )
                await self.dailies.attempt_deal(date, game, practice)
                async with conn.binding:
                    await self._handle(conn, kind, msg, ref)
            else:
                await self._handle(conn, kind, msg, ref)
        except ConnectionClosed:
            return
        except ProtocolError as exc:
            refused = exc
        except Exception as err:  # one name, one type (mypyc)
            failure = err
        # answered here, not in the handlers: no await while an exception is handled
        with contextlib.suppress(ConnectionClosed):
            if refused is not None:
                await self.send(conn, refused.to_message(ref))
            elif failure is not None:
                await self._failed(conn, msg, failure)

    def _player_of(self, conn: Conn, key: str | None) -> str | None:
        """The public player id of a hello's player key (None: anonymous). A hello writes
        nothing: a stranger can make any number of keys, so the player's entry is stored
        only once the player has something to keep, a finished keyed race (its record:
        server/league/records.py `queue`), which the room budgets already bound."""
        if key is None:
            return None
        players.check_key(key)
        pid = players.player_id(players.key_hash(key))
        self.guard.player_key(conn.limit_key, pid)  # fresh keys: a per-address budget
        return pid


#: fields of a client message that are secrets: never written to a log
def _peek_ref(frame: bytes | str, max_size: int) -> int | None:
    """The id of a refused request, so the client can match the refusal to it."""
    try:
        return m.ref_of(m.decode(frame, max_size))
    except ProtocolError:
        return None
