"""The load generator: worker processes that hold many WebSocket connections each.

The coordinator (solrace.bench.load) starts workers with multiprocessing so the
load runs on other cores than the server, and drives them through a pipe with
small commands (open rooms, spectate, run, report). A worker is one asyncio
loop speaking the wire protocol with websockets' sans-I/O ClientProtocol on a bare asyncio Protocol,
frames going through the client's codec (solrace.client.codec, the one wire-format seam on the
client side): no task or queue per connection, no per-message objects beyond a
dict, so one process holds thousands of connections and spends little per frame.

Time stamps are `time.monotonic()` (CLOCK_MONOTONIC, one clock for every
process on the machine), which is what lets a spectator in one process measure
the delay from a move sent by a player in another.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import math
import os
import random
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from solrace.bench.load_hist import Histogram
from solrace.bench.load_policy import next_move
from solrace.bench.server_process import favour_autogroup, own_sessions
from solrace.client.codec import encode, messages
from solrace.protocol.codes import CODE_LENGTH, PRIVATE_CODE_LENGTH, new_code
from solrace.protocol.messages import VERSION, acked_view
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

now = time.monotonic

#: a move message as a bot sends it; the echo baseline sends frames of this size
MOVE_SAMPLE = {"type": "move", "move": "t1-f1", "n": 12, "id": 12}

#: connections opened at once; more overflows the listen backlog and costs retries
CONNECT_CONCURRENCY = 64
#: set-up requests (hello, create, join, ready, spectate) in flight per worker. The server's
#: Redis pool refuses more than 100 commands at once (redis-py's default pool raises
#: MaxConnectionsError instead of waiting), so set-up stays well under that; the measured
#: runs do not limit anything.
SETUP_CONCURRENCY = 24


#: frames received by every connection of this worker (a list so the reader can bump it cheaply)
FRAMES = [0]


#: the loopback address spectators connect from (bots race from 127.0.0.1)
SPECTATOR_SOURCE = "127.0.0.2"
#: the room name of the spectator baseline (a bare broadcast server; see load_echo.Fanout)
FANOUT_ROOM = "BASE"


def room_url(url: str, room: str, key: str = "room") -> str:
    """`url` naming the room (`?room=CODE`, `?watch=CODE`): `solrace serve --workers N` routes
    a connection by it to the room's worker, as the real clients do; one process ignores it."""
    return f"{url}{'&' if '?' in url else '?'}{key}={room}"


class BenchError(RuntimeError):
    """The server answered a setup request with an error (the benchmark cannot go on)."""


class Conn:
    """One WebSocket connection and what the load bot knows through it.

    Its LightSocket hands every frame to on_frame: replies resolve the future of
    the request with that `id`; pushes update the bot's state (start, results)
    or, for spectators, the first time each move was seen.
    """

    __slots__ = (
        "closed",
        "host_token",
        "ids",
        "n",
        "pending",
        "results",
        "role",
        "room",
        "seat",
        "seen",
        "started",
        "status",
        "token",
        "use_n",
        "view",
        "ws",
    )

    def __init__(self, ws: LightSocket, role: str) -> None:
        self.ws = ws
        self.role = role
        self.room: str | None = None
        self.seat: int | None = None
        self.token = self.host_token = None
        self.view: dict[str, Any] | None = None
        self.n = 0
        self.status = "waiting"
        self.started = asyncio.Event()
        self.results = asyncio.Event()
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.ids = itertools.count(1)
        self.seen: dict[tuple[Any, ...], float] | None = {} if role == "spectator" else None
        self.use_n = True
        self.closed = False

    def on_frame(self, frame: bytes | str) -> None:
        t = now()
        FRAMES[0] += 1
        for msg in messages(frame):  # a spectator's tick: one frame of several
            self.on_message(msg, t)

    def on_message(self, msg: dict[str, Any], t: float) -> None:
        ref = msg.get("ref")
        if ref is None and msg.get("type") == "welcome":
            ref = 1  # the protocol gives `welcome` no ref; hello is always request 1
        if ref is not None:
            fut = self.pending.pop(ref, None)
            if fut is not None and not fut.done():
                fut.set_result((t, msg))
            return
        typ = msg.get("type")
        if typ == "event":
            kind = msg.get("kind")
            if kind == "progress":
                if self.seen is not None:
                    self.seen.setdefault((msg.get("seat"), msg.get("moves")), t)
            elif kind == "start":
                self.started.set()
            elif kind == "results":
                self.results.set()
                self.started.set()
        elif typ == "board":
            if self.seen is not None:
                self.seen.setdefault((msg.get("seat"), msg.get("moves")), t)
        elif typ == "progress":  # coalesced progress: every move up to each seat's line is seen
            if self.seen is not None:
                for line in msg.get("seats") or ():
                    seat = line.get("seat")
                    for k in range(int(line.get("moves") or 0), 0, -1):
                        if (seat, k) in self.seen:
                            break  # the ones before it were seen before it
                        self.seen[(seat, k)] = t
        elif typ == "snapshot":
            self._absorb_snapshot(msg.get("snapshot") or {})

    def on_closed(self) -> None:
        self.closed = True
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(ConnectionError("connection closed"))

    def _absorb_snapshot(self, snap: dict[str, Any]) -> None:
        if snap.get("state") in ("racing", "finished"):
            self.started.set()
        if snap.get("state") == "finished":
            self.results.set()
        you = snap.get("you") or None
        if you and you.get("view"):
            self.view = you["view"]
            self.n = you["view"].get("moves", self.n)

    def send_request(self, message: dict[str, Any]) -> tuple[int, asyncio.Future[Any]]:
        """Give `message` an id; returns (id, future of (receive time, reply))."""
        rid = next(self.ids)
        message["id"] = rid
        fut = asyncio.get_running_loop().create_future()
        self.pending[rid] = fut
        return rid, fut

    async def request(self, message: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
        _, fut = self.send_request(message)
        await self.ws.send(encode(message))
        _, reply = await asyncio.wait_for(fut, timeout)
        if reply.get("type") == "error":
            raise BenchError(f"{message['type']}: {reply.get('code')}: {reply.get('message')}")
        answer: dict[str, Any] = reply
        return answer

    async def close(self) -> None:
        try:
            await self.ws.close()
        except Exception:
            pass


class EchoPeer:
    """An echo-baseline connection: one frame out, the next frame in resolves `reply`."""

    def __init__(self, sock: LightSocket) -> None:
        self.ws = sock
        self.reply: asyncio.Future[Any] | None = None

    def on_frame(self, frame: bytes | str) -> None:
        FRAMES[0] += 1
        if self.reply is not None and not self.reply.done():
            self.reply.set_result(now())

    def on_closed(self) -> None:
        if self.reply is not None and not self.reply.done():
            code = self.ws.proto.close_rcvd.code if self.ws.proto.close_rcvd else "none"
            self.reply.set_exception(ConnectionError(f"echo connection closed (code {code})"))

    async def roundtrip(self, frame: bytes) -> float:
        """Send `frame`; returns the time its echo arrived."""
        self.reply = asyncio.get_running_loop().create_future()
        await self.ws.send(frame)
        at: float = await self.reply
        return at

    async def close(self) -> None:
        await self.ws.close()


class LightSocket(asyncio.Protocol):
    """A WebSocket client as a bare asyncio Protocol over websockets' sans-I/O ClientProtocol.

    Spectators receive thousands of frames a second per process. The asyncio client
    wakes a reader task per frame through a queue; here each frame is handled inside
    data_received, so a load-generator process measures the server, not its own loop.
    Pings are answered by the sans-I/O protocol itself.
    """

    def __init__(self, uri: str) -> None:
        self.proto = ClientProtocol(parse_uri(uri), max_size=None)
        self.transport: asyncio.Transport | None = None
        self.opened: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.conn: Conn | EchoPeer | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # create_connection over TCP always hands a full (read-write) Transport
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.proto.send_request(self.proto.connect())
        self._flush()

    def data_received(self, data: bytes) -> None:
        self.proto.receive_data(data)
        for event in self.proto.events_received():
            if isinstance(event, Response):
                if self.proto.handshake_exc is not None:
                    self.opened.set_exception(self.proto.handshake_exc)
                else:
                    self.opened.set_result(None)
            elif (
                isinstance(event, Frame)
                and event.opcode in (Opcode.BINARY, Opcode.TEXT)
                and self.conn is not None
            ):
                self.conn.on_frame(bytes(event.data))
        self._flush()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(ConnectionError("closed during the handshake"))
        if self.conn is not None:
            self.conn.on_closed()

    def _flush(self) -> None:
        assert self.transport is not None
        for data in self.proto.data_to_send():
            if data:
                self.transport.write(data)
            elif self.transport.can_write_eof():
                self.transport.write_eof()

    async def send(self, data: bytes) -> None:
        self.proto.send_binary(data)
        self._flush()

    async def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            try:
                self.proto.send_close(1000)
                self._flush()
            except Exception:
                pass
            self.transport.close()


@dataclass
class Window:
    """The measured window [t0, t1) (monotonic seconds), infinite until the coordinator sets it.

    The coordinator sets it only once every worker has said its load is running
    (`Worker.cmd_begin`): a worker starved of CPU on a loaded machine could otherwise start
    after a window chosen in advance, and a run would measure no move at all.
    """

    t0: float = math.inf
    t1: float = math.inf
    known: asyncio.Event = field(default_factory=asyncio.Event)

    def set(self, t0: float, t1: float) -> None:
        self.t0, self.t1 = t0, t1
        self.known.set()


@dataclass
class _Run:
    """A load under way in a worker: its window, its figures, its task."""

    window: Window
    stats: dict[str, Any]
    until_done: bool
    task: asyncio.Future[Any]


class Worker:
    """Commands from the coordinator, each answered with ("ok", result) or ("err", traceback)."""

    def __init__(self, pipe: Connection, index: int) -> None:
        self.pipe = pipe
        self.index = index
        self.players: list[Conn] = []
        self.hosts: list[Conn] = []
        self.spectators: list[Conn] = []
        self.idle: list[Conn] = []
        self.echo: list[EchoPeer] = []
        self.game = "klondike"
        self.sem: asyncio.Semaphore | None = None
        self.setup_sem: asyncio.Semaphore | None = None
        self.setup_retries = 0
        self.run: _Run | None = None

    async def serve(self) -> None:
        self.sem = asyncio.Semaphore(CONNECT_CONCURRENCY)
        self.setup_sem = asyncio.Semaphore(SETUP_CONCURRENCY)
        while True:
            cmd, args = await asyncio.to_thread(self.pipe.recv)
            if cmd == "exit":
                await self.cmd_close()
                self.pipe.send(("ok", None))
                return
            try:
                result = await getattr(self, "cmd_" + cmd)(**args)
                self.pipe.send(("ok", result))
            except Exception:
                self.pipe.send(("err", traceback.format_exc()))

    # -- connections -------------------------------------------------------

    async def _open_light(self, url: str, source: str | None = None) -> LightSocket:
        """Open a WebSocket (retrying refused connects: a full listen backlog is not the test),
        from the address `source` when given."""
        assert self.sem is not None
        host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
        local = (source, 0) if source else None
        async with self.sem:
            for attempt in range(5):
                try:
                    _, sock = await asyncio.get_running_loop().create_connection(
                        lambda: LightSocket(url), host, int(port), local_addr=local
                    )
                    await asyncio.wait_for(sock.opened, 60)
                    return sock
                except OSError:
                    if attempt == 4:
                        raise
                    await asyncio.sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")

    async def _req(self, c: Conn, message: dict[str, Any]) -> dict[str, Any]:
        """A set-up request, a bounded number at a time.

        An `internal` or `busy` error is retried (and counted, and reported): under a burst
        the server's Redis pool refuses commands, and on a loaded machine (the suite at load
        20) a Redis turn answered late makes the server answer `busy` ("try again"); set-up is
        not what is measured.
        """
        assert self.setup_sem is not None
        for attempt in range(10):
            async with self.setup_sem:
                try:
                    return await c.request(dict(message))
                except BenchError as exc:
                    retry = any(code in str(exc) for code in (": internal:", ": busy:"))
                    if not retry or attempt == 9:
                        raise
                    self.setup_retries += 1
            await asyncio.sleep(0.1 * (attempt + 1))
        raise AssertionError("unreachable")

    async def cmd_setup_retries(self) -> int:
        """Set-up requests retried after `internal` errors since the last call."""
        n, self.setup_retries = self.setup_retries, 0
        return n

    async def _hello(self, url: str, role: str) -> Conn:
        # spectators watch from another address than the bots race from: the server shows
        # no board of a race to a racer's address (a loopback one, when the server is local)
        local = url.split("//", 1)[1].startswith("127.")
        sock = await self._open_light(
            url, SPECTATOR_SOURCE if role == "spectator" and local else None
        )
        c = Conn(sock, role)
        sock.conn = c
        await self._req(c, {"type": "hello", "version": VERSION, "client": "solrace-bench/0.1"})
        return c

    async def _echo_peer(self, url: str) -> EchoPeer:
        sock = await self._open_light(url)
        peer = EchoPeer(sock)
        sock.conn = peer
        return peer

    async def cmd_echo(self, url: str, count: int) -> int:
        self.echo += await asyncio.gather(*(self._echo_peer(url) for _ in range(count)))
        return len(self.echo)

    async def _echo_once(self, url: str) -> EchoPeer:
        peer = await self._echo_peer(url)
        await peer.roundtrip(encode(MOVE_SAMPLE))
        return peer

    async def cmd_idle(self, url: str, count: int, echo: bool = False) -> int:
        """Open `count` connections that say hello (echo: exchange one frame) and then stay idle."""
        if echo:
            self.echo += await asyncio.gather(*(self._echo_once(url) for _ in range(count)))
            return len(self.echo)
        self.idle += await asyncio.gather(*(self._hello(url, "idle") for _ in range(count)))
        return len(self.idle)

    async def _room(
        self,
        urls: list[str],
        players: int,
        options: dict[str, Any],
        tag: str,
        name_code: bool = False,
    ) -> str:
        create: dict[str, Any] = {"type": "create", "name": f"{tag}-0", "options": options}
        if name_code:  # as the clients do: draw the code, connect naming it (a proxy routes it)
            code = new_code(CODE_LENGTH if options.get("public") else PRIVATE_CODE_LENGTH)
            create["code"] = code
            host = await self._hello(room_url(urls[0], code), "player")
        else:
            host = await self._hello(urls[0], "player")
        reply = await self._req(host, create)
        room: str = reply["room"]
        host.room, host.seat = room, reply.get("seat", 0)
        host.token, host.host_token = reply.get("token"), reply.get("host_token")
        host._absorb_snapshot(reply.get("snapshot") or {})
        seats = [host]

        async def join(i: int) -> Conn:
            c = await self._hello(room_url(urls[i % len(urls)], room), "player")
            r = await self._req(c, {"type": "join", "room": host.room, "name": f"{tag}-{i}"})
            c.room, c.seat, c.token = r["room"], r.get("seat", i), r.get("token")
            c._absorb_snapshot(r.get("snapshot") or {})
            return c

        seats += await asyncio.gather(*(join(i) for i in range(1, players)))
        await asyncio.gather(*(self._req(c, {"type": "ready", "ready": True}) for c in seats))
        self.hosts.append(host)
        self.players += seats
        return room

    async def cmd_rooms(
        self,
        urls: list[str],
        rooms: int,
        players: int,
        options: dict[str, Any],
        tag: str = "bot",
        name_code: bool = False,
    ) -> list[str]:
        """Create `rooms` rooms of `players` ready players; seat i connects to urls[i % len].
        `name_code`: the creator draws the room's code and connects naming it (`?room=`), as
        the real clients do, so a proxy routing by room sends it where its guests go."""
        self.game = options.get("game", "klondike")
        return list(
            await asyncio.gather(
                *(
                    self._room(urls, players, options, f"{tag}{self.index}.{r}", name_code)
                    for r in range(rooms)
                )
            )
        )

    async def cmd_fanout_players(self, url: str, count: int) -> int:
        """Players of the spectator baseline: hello only, seats numbered here."""
        for _i in range(count):
            c = await self._hello(url, "player")
            c.room, c.seat = FANOUT_ROOM, len(self.players)
            c.started.set()
            self.players.append(c)
        return len(self.players)

    async def cmd_spectate(self, urls: list[str], rooms: list[str], per_room: int) -> int:
        async def one(i: int, room: str) -> Conn:
            c = await self._hello(room_url(urls[i % len(urls)], room, "watch"), "spectator")
            r = await self._req(c, {"type": "spectate", "room": room})
            c.room = r.get("room", room)
            return c

        self.spectators += await asyncio.gather(
            *(one(i, room) for room in rooms for i in range(per_room))
        )
        return len(self.spectators)

    async def cmd_start(self, timeout: float = 60.0, batch: int = 8) -> dict[str, Any]:
        """Hosts start their races, `batch` rooms at a time; returns once every seat saw its start.

        Batches because each start makes the server do a burst of Redis work of its own
        (countdown timer, start snapshots), and 250 at once overflow its Redis pool.
        """
        for i in range(0, len(self.hosts), batch):
            hosts = self.hosts[i : i + batch]
            rooms = {h.room for h in hosts}
            await asyncio.gather(
                *(self._req(h, {"type": "start", "host_token": h.host_token}) for h in hosts)
            )
            await asyncio.wait_for(
                asyncio.gather(*(c.started.wait() for c in self.players if c.room in rooms)),
                timeout,
            )
        return {"players": len(self.players)}

    # -- running -----------------------------------------------------------

    async def _move_loop(
        self, c: Conn, window: Window, pace: float, stats: dict[str, Any], until_done: bool
    ) -> None:
        """Move at `pace` per second (0: as fast as acks come back) until the window's end or
        the seat is done."""
        hist: Histogram = stats["ack"]
        period = 1.0 / pace if pace else 0.0
        next_t = now() + random.random() * period
        bad = 0
        ended = "closed"  # why the loop ended (stats["ended"]: a run with no move says)
        while not c.closed:
            if period:
                delay = next_t - now()
                if delay > 0:
                    await asyncio.sleep(delay)
            ts = now()
            if ts >= window.t1 and not until_done:
                ended = "window"
                break
            if ts >= window.t1 + 600:
                ended = "window"
                break
            if c.view is None and c.token is not None and c.room != FANOUT_ROOM:
                # no board (the race began before its snapshot came, or an ack's change did
                # not fit): acks carry changes, so the board comes from a snapshot (resume)
                try:
                    got = await c.request({"type": "resume", "room": c.room, "token": c.token})
                except (BenchError, ConnectionError, TimeoutError):
                    stats["errors"]["resync"] += 1
                    ended = "resync"
                    break
                c._absorb_snapshot(got.get("snapshot") or {})
                c.n = c.view["moves"] if c.view is not None else c.n
            move = next_move(self.game, c.view)
            message: dict[str, Any] = {"type": "move", "move": move}
            if c.use_n:
                message["n"] = c.n + 1
            if c.room == FANOUT_ROOM:
                message["seat"] = c.seat  # the fan-out baseline has no seats of its own
            _, fut = c.send_request(message)
            ts = now()
            await c.ws.send(encode(message))
            if stats["sends"] is not None:
                stats["sends"][(c.room, c.seat, c.n + 1)] = ts
            try:
                tr, reply = await fut
            except ConnectionError:
                stats["errors"]["closed"] += 1
                ended = "closed"
                break
            in_window = window.t0 <= ts < window.t1
            if reply.get("type") == "ack":
                bad = 0
                if in_window:
                    hist.record(tr - ts)
                    stats["acks"] += 1
                c.n = reply.get("n", c.n + 1)
                # the ack's change applied to the board the bot had (or its whole view)
                c.view = acked_view(c.view, reply)
                c.status = reply.get("status", "racing")
                if c.status != "racing":
                    stats["finished"] += 1
                    ended = f"status {c.status} after {c.n} moves"
                    break
            else:
                code = reply.get("code", "?")
                stats["errors"][code] += 1
                bad += 1
                if code == "out_of_sync":
                    c.use_n = False
                elif code == "bad_state" or bad > 20:
                    ended = f"error {code}"
                    break
                elif code == "illegal_move":
                    c.view = None  # a bot whose board is wrong: a snapshot brings it back
                if not period:
                    await asyncio.sleep(0.01)  # never spin on a refusing server
            if period:
                next_t += period
                if next_t < now():
                    stats["late"] += 1
                    next_t = now()
        stats["ended"][ended] += 1

    async def _echo_loop(self, peer: EchoPeer, window: Window, stats: dict[str, Any]) -> None:
        frame = encode(MOVE_SAMPLE)
        hist: Histogram = stats["ack"]
        while True:
            ts = now()
            if ts >= window.t1:
                break
            try:
                tr = await peer.roundtrip(frame)
            except ConnectionError as e:
                # counted and printed as the run's errors, not a crash of the whole run: once,
                # in the suite at load 20, an echo connection was closed while the coordinator,
                # starved, had not yet set the window and the load ran on
                stats["errors"][str(e)] += 1
                break
            if ts >= window.t0:
                hist.record(tr - ts)
                stats["acks"] += 1
            else:
                stats["warmup_echoes"] += 1

    async def _count_frames(self, window: Window, stats: dict[str, Any]) -> None:
        """Frames this worker's connections received in the window (echo replies counted by
        the loop)."""
        await window.known.wait()
        await asyncio.sleep(max(0.0, window.t0 - now()))
        start = FRAMES[0]
        await asyncio.sleep(max(0.0, window.t1 - now()))
        stats["frames"] = FRAMES[0] - start

    async def cmd_begin(
        self, pace: float = 0.0, track_sends: bool = False, until_done: bool = False
    ) -> None:
        """Start moving (or echoing) now, in the background; nothing counts until `window`.
        Spectators keep reading."""
        stats: dict[str, Any] = {
            "ack": Histogram(),
            "acks": 0,
            "warmup_echoes": 0,  # echo round trips before t0: the warm-up ran the load
            "errors": Counter(),
            "finished": 0,
            "late": 0,
            "sends": {} if track_sends else None,
            "ended": Counter(),  # how the bots' loops ended
        }
        # the generator's own collector stays off until `finish`: a pass over its thousand
        # clients' objects stopped every client of this process at once for 60-180 ms (the
        # spike near the ninth second of every spectators run, on either server), and that
        # read as the server's latency
        gc.collect()
        gc.freeze()
        gc.disable()
        window = Window()
        tasks = [self._move_loop(c, window, pace, stats, until_done) for c in self.players]
        tasks.append(self._count_frames(window, stats))
        tasks += [self._echo_loop(peer, window, stats) for peer in self.echo]
        self.run = _Run(window, stats, until_done, asyncio.gather(*tasks))

    async def cmd_window(self, t0: float, t1: float) -> None:
        """Count acks of moves sent in [t0, t1); the load stops at t1."""
        assert self.run is not None, "begin first"
        self.run.window.set(t0, t1)

    async def cmd_finish(self) -> dict[str, Any]:
        """Wait for the load to end; its figures."""
        assert self.run is not None, "begin first"
        run, self.run = self.run, None
        try:
            await run.task
        finally:
            gc.unfreeze()  # what `begin` froze may be garbage by the next run
            gc.enable()
        stats = run.stats
        stats["unfinished_rooms"] = 0
        if run.until_done:
            waits = [asyncio.ensure_future(h.results.wait()) for h in self.hosts]
            if waits:
                _, pending = await asyncio.wait(waits, timeout=60)
                stats["unfinished_rooms"] = len(pending)
                for w in pending:
                    w.cancel()
        stats["ack"] = stats["ack"].to_dict()
        stats["errors"] = dict(stats["errors"])
        stats["ended"] = dict(stats["ended"])
        stats["total_moves"] = sum(c.n for c in self.players)
        return stats

    async def cmd_spectator_latency(
        self, sends: dict[tuple[str, int, int], float], t0: float, t1: float
    ) -> dict[str, Any]:
        """Delay from each move's send to each spectator's first sight of it (board or progress)."""
        hist = Histogram()
        missing = 0
        worst: dict[int, float] = {}  # second of the run (by send time) -> worst delay
        for s in self.spectators:
            seen = s.seen or {}
            for (room, seat, n), ts in sends.items():
                if room != s.room or not (t0 <= ts < t1):
                    continue
                tr = seen.get((seat, n))
                if tr is None:
                    missing += 1
                else:
                    hist.record(tr - ts)
                    sec = int(ts - t0)
                    worst[sec] = max(worst.get(sec, 0.0), tr - ts)
        return {"hist": hist.to_dict(), "missing": missing, "worst": worst}

    async def cmd_close(self) -> int:
        conns = self.players + self.spectators + self.idle
        await asyncio.gather(
            *(c.close() for c in conns),
            *(peer.close() for peer in self.echo),
            return_exceptions=True,
        )
        n = len(conns) + len(self.echo)
        self.players, self.hosts, self.spectators, self.idle, self.echo = [], [], [], [], []
        return n


def worker_main(pipe: Connection, index: int) -> None:
    """Process entry point: serve the coordinator's commands until told to exit.

    The worker leaves the coordinator's session for one of its own, favoured like the
    servers' (solrace.bench.load_procs.favour_autogroup): on a shared machine with
    `sched_autogroup_enabled=1`, a load generator that gets one session's share of the CPU
    among many sends its moves late and reads its acks late, and the latencies measure the
    machine. It still exits with the coordinator (its pipe closes).
    """
    if own_sessions():
        os.setsid()
        favour_autogroup(os.getpid())
    asyncio.run(Worker(pipe, index).serve())
