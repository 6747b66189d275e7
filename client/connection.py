"""The async client: one WebSocket, the whole protocol, replies matched to requests.

Design: a single reader task owns the socket's receive side. Each request
gets an `id`; the reader resolves the waiting future whose id the reply's
`ref` names, raising `ErrorReply` for `error` replies, and queues every
push (events, boards, snapshots) for `events()`. Every message also updates
`self.room`, the local model a UI draws from, in arrival order, so the
`joined` snapshot is applied before the events a resume replays.

With `throttle=True` the client keeps to the rate limits the server
announced in `welcome` (waiting rather than being refused), which bots use.

With `auto_resume=True`, a dropped socket is reopened and the seat resumed
(or the room re-spectated) with the last event number seen; requests in
flight then fail with `ConnectionLost`, and a `move` retried with its `n`
is safe by the protocol (`out_of_sync` instead of a double move). Nothing
else is sent on a new socket before its hello and resume are answered: a
request made meanwhile waits for them (sent earlier, a move would reach a
connection that holds no seat yet: `not_player`).

What the server calls normal is not an error here: a request refused with
`busy` (Redis failing over) or `rate_limited` is sent again after the
server's `retry_after` or a backoff with jitter (a few times:
client/retry.py), and a first connection refused (a server restarting) is
tried again with backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, cast

from solrace.protocol.codes import code_for
from solrace.protocol.messages import VERSION
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from . import events as ev
from .codec import FrameError, encode, messages
from .retry import REQUEST_TRIES, RETRYABLE, backoff, retry_delay
from .room import RoomModel
from .urls import with_room

log = logging.getLogger(__name__)

CLIENT_NAME = "solrace-py/0.1"
#: what a failed attempt to open a socket and say hello raises (a server down or restarting,
#: a proxy answering 502 meanwhile, a socket closed mid-handshake)
CONNECT_ERRORS = (OSError, TimeoutError, InvalidHandshake, ConnectionClosed)


#: how long a request the server answers with the solver's help (a winnable start, a daily's
#: first draw) is waited for: past the server's own bound (30 s of drawing, then `busy`)
SOLVER_TIMEOUT = 45.0
#: codes drawn for one `create` before giving up (a drawn code is taken about never)
CODE_TRIES = 5


class ErrorReply(Exception):
    """The server answered a request with `error`; `code` is the protocol's error code."""

    def __init__(self, code: str, message: str = "", reply: ev.Error | None = None) -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code
        self.message = message
        self.reply = reply


class ConnectionLost(ConnectionError):
    """The socket closed while a request waited for its reply."""


@dataclass(kw_only=True)
class Reconnected(ev.Message):
    """Local notice (never sent by the server): the client reconnected and resumed."""

    attempts: int = 1


@dataclass(kw_only=True)
class Resynced(ev.Message):
    """Local notice: the client fetched a full snapshot by itself (a board was missing)."""


@dataclass(kw_only=True)
class Closed(ev.Message):
    """Local notice: the connection ended for good; `code` is the WebSocket close code."""

    code: int | None = None
    reason: str = ""


class Throttle:
    """A client-side token bucket matching the server's limits from `welcome`.

    The server drops a message beyond its bucket with `rate_limited`; a bot
    or a benchmark that knows the limits can wait instead of being refused.
    """

    def __init__(self, burst: int, rate: float) -> None:
        self.burst = max(1, int(burst))
        self.rate = max(0.1, float(rate))
        self.tokens = float(self.burst - 2)  # keep a little slack for the server's own clock
        self.stamp = time.monotonic()

    async def take(self) -> None:
        while True:
            now = time.monotonic()
            self.tokens = min(self.burst - 2, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.tokens >= 1:
                self.tokens -= 1
                return
            await asyncio.sleep((1 - self.tokens) / self.rate)


_END = object()
#: seconds to wait for the start snapshot before asking for the board
BOARD_GRACE = 1.0


class Client:
    """A solrace protocol client over one WebSocket connection (reconnecting if asked)."""

    def __init__(
        self,
        url: str,
        *,
        auto_resume: bool = False,
        reconnect_tries: int = 16,
        connect_tries: int = 8,
        client_name: str = CLIENT_NAME,
        open_timeout: float = 10.0,
        throttle: bool = False,
        record: bool = False,
        room: str | None = None,
        player_key: str | None = None,
        source: str | None = None,
        bot: bool = False,
    ) -> None:
        self.url = url
        #: sent in every hello: the player's secret key (client/player_key.py); None: anonymous
        self.player_key = player_key
        #: sent in every hello as `bot: true`: this client is a program (PROTOCOL.md, Identity)
        self.bot = bot
        #: the local address to connect from (a machine with several); None: the system's pick
        self.source = source
        #: the room the first connection is for (later ones: the room this client is in)
        self.route_room = room
        #: the room the open socket's URL names (`/ws?room=CODE`), None for none
        self._socket_room: str | None = None
        self.auto_resume = auto_resume
        self.reconnect_tries = reconnect_tries
        #: tries of the first connection (a server restarting refuses it for a moment)
        self.connect_tries = max(1, connect_tries)
        self.client_name = client_name
        self.open_timeout = open_timeout
        self.room = RoomModel()
        self.welcome: ev.Welcome | None = None
        self.role: str | None = None
        self.token: str | None = None
        self.host_token: str | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[ev.Message]] = {}
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._closing = False
        self._resuming = False
        #: set while the socket may carry requests: cleared when it drops, set again once a
        #: new one said hello and resumed (or for good when the client ends)
        self._ready = asyncio.Event()
        #: the task saying hello and resuming on a new socket: its requests do not wait
        self._setup_task: asyncio.Task[Any] | None = None
        self._welcome_wait: asyncio.Future[ev.Message] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._resyncing = False
        self._last_pushed = 0  # highest event number handed to events()
        self._ended = False
        self.close_code: int | None = None
        self.throttle = throttle
        self._bucket: Throttle | None = None
        self.close_reason: str = ""
        #: every decoded server message, in order, when `record=True` (tests, debugging)
        self.received: list[dict[str, Any]] | None = [] if record else None

    # ---- lifecycle ----------------------------------------------------------

    async def connect(self) -> ev.Welcome:
        """Open the socket and say hello; returns the server's welcome. A refused or failed
        attempt is tried again with backoff, `connect_tries` times in all."""
        self._closing = False
        self._ended = False
        self._resuming = True  # a socket lost mid-hello ends nothing: it is tried again
        self._setup_task = asyncio.current_task()
        try:
            welcome = await self._open_and_hello()
        finally:
            self._resuming = False
            self._setup_task = None
        self._ready.set()
        return welcome

    async def _open_and_hello(self, room: str | None = None) -> ev.Welcome:
        """A socket (naming `room` in its URL) and its hello, tried `connect_tries` times with
        backoff while the attempts fail for a passing reason."""
        for attempt in range(self.connect_tries):
            try:
                await self._open(room)
                return await self._hello()
            except CONNECT_ERRORS as exc:
                await self._discard()
                if attempt == self.connect_tries - 1 or self._closing:
                    raise
                log.info("connect attempt %d failed: %s", attempt + 1, exc)
                await asyncio.sleep(backoff(attempt))
        raise AssertionError("unreachable")

    async def _discard(self) -> None:
        """Close a socket that failed to get going (its reader then ends)."""
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()

    async def _open(self, room: str | None = None) -> None:
        extra: dict[str, Any] = {"local_addr": (self.source, 0)} if self.source else {}
        self._socket_room = room or self.room.room or self.route_room
        self._ws = await connect(
            with_room(self.url, self._socket_room),
            compression=None,
            max_size=2**24,
            open_timeout=self.open_timeout,
            **extra,
        )
        self._reader = asyncio.create_task(self._read_loop(self._ws), name="solrace-client-reader")

    async def _hello(self) -> ev.Welcome:
        """Say hello; `welcome` carries no `ref`, so it resolves its own future."""
        self._welcome_wait = asyncio.get_running_loop().create_future()
        hello: dict[str, Any] = {"type": "hello", "version": VERSION, "client": self.client_name}
        if self.player_key is not None:
            hello["player_key"] = self.player_key
        if self.bot:
            hello["bot"] = True
        reply = await self.request(hello, wait=self._welcome_wait)
        assert isinstance(reply, ev.Welcome), reply
        self.welcome = reply
        if self.throttle and self._bucket is None:
            limits = reply.limits or {}
            self._bucket = Throttle(limits.get("burst", 60), limits.get("rate", 20))
        return reply

    async def close(self) -> None:
        """Close for good (no reconnect); ends `events()`."""
        self._closing = True
        for task in list(self._tasks):
            task.cancel()
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        self._end(self.close_code, "closed by client")

    async def drop(self) -> None:
        """Drop the socket abruptly as a network failure would (tests, reconnect drills)."""
        if self._ws is not None and self._ws.transport is not None:
            self._ws.transport.abort()

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def ended(self) -> bool:
        """Whether the connection is over for good (closed, or reconnecting gave up)."""
        return self._ended

    @property
    def connected(self) -> bool:
        return self._ws is not None and self._ws.state.name == "OPEN"

    # ---- reading ------------------------------------------------------------

    async def _read_loop(self, ws: ClientConnection) -> None:
        try:
            async for frame in ws:
                try:
                    raws = messages(frame)  # a spectator's tick: several in one frame
                except FrameError as exc:
                    log.warning("bad frame from server: %s", exc)
                    continue
                for raw in raws:
                    self._received(raw)
        except ConnectionClosed:
            pass
        finally:
            self.close_code = ws.close_code
            self.close_reason = ws.close_reason or ""
            self._fail_pending(ConnectionLost(f"connection closed ({ws.close_code})"))
            if not self._closing and not self._resuming and self.auto_resume and self.room.room:
                self._ready.clear()  # requests wait for the new socket's resume
                self._spawn(self._reconnect())
            elif not self._resuming:
                self._end(ws.close_code, ws.close_reason or "")

    def _received(self, raw: dict[str, Any]) -> None:
        """One server message (of a frame, or of a spectator's `batch`)."""
        if self.received is not None:
            self.received.append(raw)
        try:
            msg = ev.parse_message(raw)
        except TypeError as exc:
            log.warning("bad message from server: %s", exc)
            return
        try:
            self._dispatch(msg)
        except Exception:  # one odd message must not stop the reader
            log.exception("could not handle %r", msg)

    def _end(self, code: int | None, reason: str) -> None:
        """Tell `events()` the connection is over (once)."""
        if not self._ended:
            self._ended = True
            self._ready.set()  # requests waiting for a resume fail now: nothing more comes
            self._queue.put_nowait(Closed(type="closed", code=code, reason=reason))
            self._queue.put_nowait(_END)

    def _dispatch(self, msg: ev.Message) -> None:
        if isinstance(msg, ev.Welcome) and self._welcome_wait is not None:
            if not self._welcome_wait.done():
                self._welcome_wait.set_result(msg)
            return
        changed = self.room.apply(msg)
        if isinstance(msg, ev.Event | ev.ProgressFrame):
            if not changed or msg.n <= self._last_pushed:
                return  # already seen (replayed around a join, resume or resync)
            self._last_pushed = msg.n
            if self.room.gaps and not self._resyncing:
                # events are delivered in order, so a gap means frames were lost:
                # the model may be wrong until a full snapshot replaces it
                self._spawn(self._resync())
        if isinstance(msg, ev.Start) and (self._needs_board() or self._needs_boards()):
            # the server sends each racer its board in a snapshot at the start, and
            # spectators get boards as moves are made; a board still missing after a
            # moment (an older server, a lost frame, nobody moved yet) comes by resync
            self._spawn(self._resync(after=BOARD_GRACE))
        if isinstance(msg, ev.Ack) and self._needs_board() and not self._resyncing:
            self._spawn(self._resync())  # its change did not fit the board here
        if isinstance(msg, ev.Joined):
            self._take_identity(msg)
        fut = self._pending.pop(msg.ref, None) if msg.ref is not None else None
        if fut is not None and not fut.done():
            if isinstance(msg, ev.Error):
                fut.set_exception(ErrorReply(msg.code, msg.message, msg))
            else:
                fut.set_result(msg)
            return
        self._queue.put_nowait(msg)

    def _needs_board(self) -> bool:
        return (
            self.role == "player"
            and self.token is not None
            and self.room.view is None
            and self.room.seat in self.room.players
        )

    def _needs_boards(self) -> bool:
        """A spectator of a room that shows boards, with none yet."""
        return (
            self.role == "spectator"
            and not self.room.boards
            and self.room.options.get("spectator_view", "boards") == "boards"
            and self.room.options.get("spectator_delay", 0) == 0
        )

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _resync(self, after: float = 0.0) -> None:
        """Ask for a full snapshot of the room (resume, or spectate, with no last event)."""
        if after:
            await asyncio.sleep(after)
            if not (self._needs_board() or self._needs_boards()):
                return
        self._resyncing = True
        try:
            if self.role == "spectator":
                await self.spectate(self.room.room or "")
            else:
                await self.resume()
            self._queue.put_nowait(Resynced(type="resynced"))
        except (ErrorReply, ConnectionLost, TimeoutError) as exc:
            log.info("resync failed: %s", exc)
        finally:
            self._resyncing = False

    async def wait_board(self, timeout: float = 10.0) -> dict[str, Any]:
        """The player's own view, once the race has dealt it (resyncing if needed)."""
        async with asyncio.timeout(timeout):
            while self.room.view is None:
                if self._needs_board() and self.room.state == "racing" and not self._tasks:
                    self._spawn(self._resync())
                await asyncio.sleep(0.02)
        return self.room.view

    def _take_identity(self, msg: ev.Joined) -> None:
        if msg.room != getattr(self, "_joined_room", msg.room):
            self._last_pushed = 0
        self._joined_room = msg.room
        self.role = msg.role
        if msg.token:
            self.token = msg.token
        if msg.host_token:
            self.host_token = msg.host_token

    def _fail_pending(self, exc: Exception) -> None:
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(exc)

    async def _reconnect(self) -> None:
        """Reopen and resume the seat (or spectate again) from the last event seen, with
        backoff (a server restarting refuses connections, a proxy answers 502 meanwhile);
        requests made meanwhile wait (`_ready`) and go out once the resume is answered."""
        self._resuming = True
        self._setup_task = asyncio.current_task()
        try:
            for attempt in range(1, self.reconnect_tries + 1):
                await asyncio.sleep(backoff(attempt - 1))
                if self._closing:
                    break
                try:
                    await self._open()
                    await self._hello()
                    if self.role == "player" and self.token:
                        await self.resume(last_event=self.room.event)
                    else:
                        await self.spectate(self.room.room or "", last_event=self.room.event)
                except CONNECT_ERRORS as exc:
                    log.info("reconnect attempt %d failed: %s", attempt, exc)
                    await self._discard()
                    continue
                except ErrorReply as exc:
                    if exc.code in RETRYABLE:  # still refused after the request's own retries
                        await self._discard()
                        continue
                    log.warning("resume refused: %s", exc)  # the seat or room is gone: give up
                    break
                self._ready.set()
                self._queue.put_nowait(Reconnected(type="reconnected", attempts=attempt))
                return
        finally:
            self._resuming = False
            self._setup_task = None
        self._end(self.close_code, "resume failed")

    # ---- pushes -------------------------------------------------------------

    async def events(self) -> AsyncIterator[ev.Message]:
        """Pushed messages (events, boards, snapshots, unmatched errors) until the end."""
        while True:
            item = await self._queue.get()
            if item is _END:
                return
            yield item

    async def next_event(self, timeout: float | None = None) -> ev.Message:
        """The next pushed message (raises TimeoutError, or ConnectionLost at the end)."""
        item = await asyncio.wait_for(self._queue.get(), timeout)
        if item is _END:
            self._queue.put_nowait(_END)
            raise ConnectionLost("connection closed")
        return cast(ev.Message, item)

    async def wait_until(self, condition: Any, timeout: float | None = 10.0) -> None:
        """Consume pushes until `condition()` (on the room model, say) holds; checks first."""
        async with asyncio.timeout(timeout):
            while not condition():
                await self.next_event()

    async def wait_for(self, predicate: Any, timeout: float | None = 10.0) -> ev.Message:
        """Consume pushes until one satisfies `predicate(message)`; returns it."""
        async with asyncio.timeout(timeout):
            while True:
                msg = await self.next_event()
                if predicate(msg):
                    return msg

    # ---- requests -----------------------------------------------------------

    async def request(
        self,
        message: dict[str, Any],
        timeout: float | None = 15.0,
        wait: asyncio.Future[ev.Message] | None = None,
        *,
        retry: bool = True,
    ) -> ev.Message:
        """Send `message` with a fresh id and wait for the reply that refs it.

        An `error` that refs the id fails `wait` too (an `unsupported_version`
        answers a hello that way). A `busy` or `rate_limited` refusal (nothing was done)
        is sent again after the server's `retry_after` or a backoff, up to REQUEST_TRIES
        tries (`retry=False`: never); still refused then, it raises `ErrorReply`.
        """
        tries = REQUEST_TRIES if retry and wait is None else 1
        for attempt in itertools.count():
            try:
                return await self._request_once(message, timeout, wait)
            except ErrorReply as exc:
                if exc.code not in RETRYABLE or attempt + 1 >= tries:
                    raise
                delay = retry_delay(exc.reply.raw if exc.reply else None, attempt)
                if delay is None:
                    raise
                log.info("%s refused (%s); again in %.2fs", message.get("type"), exc.code, delay)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def _request_once(
        self,
        message: dict[str, Any],
        timeout: float | None,
        wait: asyncio.Future[ev.Message] | None,
    ) -> ev.Message:
        if self._ws is None and not self._resuming:
            raise ConnectionLost("not connected")
        if asyncio.current_task() is not self._setup_task:
            # a new socket carries nothing before its hello and resume are answered
            await asyncio.wait_for(self._ready.wait(), timeout)
            if self._ended:
                raise ConnectionLost("connection closed")
        if self._bucket is not None:
            await self._bucket.take()
        ws = self._ws
        if ws is None:
            raise ConnectionLost("not connected")
        rid = next(self._ids)
        fut: asyncio.Future[ev.Message] = wait or asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        try:
            await ws.send(encode({**message, "id": rid}))
        except ConnectionClosed as exc:
            self._pending.pop(rid, None)
            raise ConnectionLost(str(exc)) from exc
        try:
            return await asyncio.wait_for(fut, timeout)
        finally:
            self._pending.pop(rid, None)

    async def send(self, message: dict[str, Any]) -> None:
        """Send without waiting for a reply (no id: errors arrive through `events()`)."""
        if self._ws is None:
            raise ConnectionLost("not connected")
        if asyncio.current_task() is not self._setup_task:
            await self._ready.wait()
            if self._ended or self._ws is None:
                raise ConnectionLost("connection closed")
        await self._ws.send(encode(message))

    async def create(
        self, name: str, options: dict[str, Any] | None = None, play: bool = True
    ) -> ev.Joined:
        """A new room. Its code is drawn here and the socket reopened naming it
        (`/ws?room=CODE`) before `create` goes out, so the room's first connection reaches the
        host and worker its later ones will (PROTOCOL.md, Room codes and links)."""
        msg: dict[str, Any] = {"type": "create", "name": name, "play": play}
        if options:
            msg["options"] = options
        return await self._create_routed(msg, bool((options or {}).get("public")))

    async def _create_routed(
        self, msg: dict[str, Any], public: bool, timeout: float = 15.0
    ) -> ev.Joined:
        for attempt in range(CODE_TRIES):
            code = code_for(public)
            await self.route_to(code)
            try:
                return await self._joined({**msg, "code": code}, timeout=timeout)
            except ErrorReply as exc:
                if exc.code != "code_taken" or attempt + 1 >= CODE_TRIES:
                    raise
        raise AssertionError("unreachable")

    async def route_to(self, room: str) -> None:
        """Reopen the socket naming `room` in its URL, unless it names it already: the proxy
        and the front send a connection to the process of the room its URL names. Requests
        made meanwhile wait for the new socket's hello."""
        self.route_room = room
        if self._ws is None or self._socket_room == room or self._closing:
            return
        self._ready.clear()
        self._resuming = True  # the old socket's end starts no reconnect
        self._setup_task = asyncio.current_task()
        try:
            await self._discard()
            if self._reader is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._reader
            await self._open_and_hello(room)
        finally:
            self._resuming = False
            self._setup_task = None
            self._ready.set()

    async def daily(
        self, game: str, name: str, practice: bool = False, date: str | None = None
    ) -> ev.Joined:
        """Start today's daily of `game` (PROTOCOL.md, Daily races): scored unless `practice`
        (yesterday's deal) or a past `date` (that day's deal); a second scored attempt is
        refused with `daily_played`."""
        msg: dict[str, Any] = {"type": "daily", "game": game, "name": name, "practice": practice}
        if date is not None:
            msg["date"] = date
        # routed by its code as `create` is; the day's deal may be drawn now
        return await self._create_routed(msg, False, timeout=SOLVER_TIMEOUT)

    async def quick(self, game: str, name: str, rated: bool = True) -> ev.Queued:
        """Quick match (PROTOCOL.md): queue for a race of `game`; `matched` follows
        (`wait_matched`), then take the seat from a connection naming the room (`take_match`)."""
        msg = {"type": "quick", "game": game, "name": name, "rated": rated}
        reply = await self.request(msg)
        assert isinstance(reply, ev.Queued), reply
        return reply

    async def quick_cancel(self) -> ev.Message:
        return await self.request({"type": "quick_cancel"})

    async def wait_matched(self, timeout: float | None = None) -> ev.Matched:
        """The `matched` push of this connection's quick-match ticket."""
        while True:
            msg = await self.next_event(timeout)
            if isinstance(msg, ev.Matched):
                return msg
            if isinstance(msg, ev.Error):
                raise ErrorReply(msg.code, msg.message, msg)

    async def arena_create(
        self, game: str, minutes: int, max_players: int = 4, title: str | None = None
    ) -> ev.Arena:
        """A new arena (PROTOCOL.md, Arena); join it with `arena_join`."""
        msg: dict[str, Any] = {
            "type": "arena_create",
            "game": game,
            "minutes": minutes,
            "max_players": max_players,
        }
        if title:
            msg["title"] = title
        reply = await self.request(msg)
        assert isinstance(reply, ev.Arena), reply
        return reply

    async def arena_join(self, arena: str, name: str) -> ev.Arena:
        """This connection is the player's presence in the arena: `arena_paired` follows
        whenever the server pairs it (queued again after each race)."""
        reply = await self.request({"type": "arena_join", "arena": arena, "name": name})
        assert isinstance(reply, ev.Arena), reply
        return reply

    async def arena_leave(self, arena: str) -> ev.Arena:
        reply = await self.request({"type": "arena_leave", "arena": arena})
        assert isinstance(reply, ev.Arena), reply
        return reply

    async def arena_watch(self, arena: str) -> ev.Arena:
        reply = await self.request({"type": "arena_watch", "arena": arena})
        assert isinstance(reply, ev.Arena), reply
        return reply

    async def join(self, room: str, name: str) -> ev.Joined:
        """A seat in `room`, on a socket naming it (reopened if it names none or another)."""
        await self.route_to(room.strip().upper())
        return await self._joined({"type": "join", "room": room, "name": name})

    async def spectate(self, room: str, last_event: int | None = None) -> ev.Joined:
        """Watch `room`, on a socket naming it (reopened if it names none or another)."""
        if asyncio.current_task() is not self._setup_task:  # a reconnect's socket names it
            await self.route_to(room.strip().upper())
        msg: dict[str, Any] = {"type": "spectate", "room": room}
        if last_event:
            msg["last_event"] = last_event
        return await self._joined(msg)

    async def resume(
        self, room: str | None = None, token: str | None = None, last_event: int | None = None
    ) -> ev.Joined:
        """Take the seat back; without `last_event` the reply's snapshot is a full resync."""
        room = room or self.room.room
        token = token or self.token
        if not room or not token:
            raise ValueError("resume needs a room and a player token")
        msg: dict[str, Any] = {"type": "resume", "room": room, "token": token}
        if last_event:
            msg["last_event"] = last_event
        joined = await self._joined(msg)
        self.token = token  # the reply does not repeat it
        return joined

    async def _joined(self, msg: dict[str, Any], timeout: float = 15.0) -> ev.Joined:
        reply = await self.request(msg, timeout=timeout)
        assert isinstance(reply, ev.Joined), reply
        return reply

    async def leave(self) -> ev.Message:
        reply = await self.request({"type": "leave"})
        self.token = None
        return reply

    async def ready(self, ready: bool = True) -> ev.Message:
        return await self.request({"type": "ready", "ready": ready})

    def _host(self) -> str:
        if not self.host_token:
            raise ErrorReply("not_host", "this client holds no host token")
        return self.host_token

    async def configure(self, options: dict[str, Any]) -> ev.Message:
        return await self.request(
            {"type": "configure", "host_token": self._host(), "options": options}
        )

    async def start(self) -> ev.Message:
        # a room dealing winnable hands answers once the solver found one: the server gives
        # up on its own (`busy`) after 30 s of drawing, so the client waits longer than that
        return await self.request(
            {"type": "start", "host_token": self._host()}, timeout=SOLVER_TIMEOUT
        )

    async def kick(self, seat: int) -> ev.Message:
        return await self.request({"type": "kick", "host_token": self._host(), "seat": seat})

    async def rematch(self) -> ev.Message:
        return await self.request({"type": "rematch", "host_token": self._host()})

    async def end_series(self) -> ev.Message:
        """End the room's series under way (between races): its standings are final."""
        return await self.request({"type": "end_series", "host_token": self._host()})

    async def move(self, move: str, n: int | None = None) -> ev.Ack:
        """Play a move; `n` (the 1-based number it will be) makes a retry safe."""
        msg: dict[str, Any] = {"type": "move", "move": str(move)}
        if n is not None:
            msg["n"] = n
        reply = await self.request(msg)
        assert isinstance(reply, ev.Ack), reply
        return reply

    async def undo(self, n: int | None = None) -> ev.Ack:
        msg: dict[str, Any] = {"type": "undo"}
        if n is not None:
            msg["n"] = n
        reply = await self.request(msg)
        assert isinstance(reply, ev.Ack), reply
        return reply

    async def resign(self) -> ev.Message:
        return await self.request({"type": "resign"})

    async def lobby(self, after: str | None = None) -> ev.Lobby:
        """A page of public rooms (the first, or the one after the cursor `after`: a page's
        `next`)."""
        msg: dict[str, Any] = {"type": "lobby"}
        if after:
            msg["after"] = after
        reply = await self.request(msg)
        assert isinstance(reply, ev.Lobby), reply
        return reply

    async def ping(self, t: Any = None) -> ev.Pong:
        msg: dict[str, Any] = {"type": "ping"}
        if t is not None:
            msg["t"] = t
        reply = await self.request(msg)
        assert isinstance(reply, ev.Pong), reply
        return reply
