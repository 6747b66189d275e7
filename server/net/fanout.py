"""Fan-out: which local connections watch which room, and getting every room event to each of
them once and in order.

The `Hub` is the store's event sink (`store.EventSink`): the store hands it this process's own
events as soon as Redis has stored them, and other processes' events as they arrive on pub/sub
(the store drops our own copies there and is the only one that knows the published format).
Events are queued and sent at the end of the loop's turn, so the acks written in that turn go
first (`_queue`); a mover's ack stands for its own progress event (`acked`). Players get a
racing seat's progress per tick too (`PLAYER_TICK_S`): the first one of a room is held, and
every one that follows within the tick, and the tick's end sends them as one `progress` frame
per place (`deliver`): a player gets at most one frame of the room's routine progress a tick,
however many seats moved, and its own move's ack at once. News (any other event) releases
what is held and goes out at once. Connections at the same place share the same frames (one
encoding, one `broadcast`, which frames it once and never waits on a slow client:
server/net/ws_server.py).

Spectators go per tick (`TICK_S`), not per move: what a room's spectators lack (its events
since their place, coalesced as above, and each seat's latest board) is held and sent as one
frame per spectator per tick (a `batch`, protocol/messages.py), encoded once for all the
spectators at the same place, so a thousand spectators cost the room's CPU per tick, not per
move (`_tick`). A room's frames are credits (`Tick.fill`): one comes back each tick, at most
`TICK_BURST` are kept, and a frame with a credit goes out at the end of the loop's turn, as
does an event that is news (a start, a seat's end, the results: `urgent`); with none left the
next frame waits for the next credit. So a room slower than a frame a tick sends each move at
once, and a fast one still one frame a tick.

Those two streams interleave when a room's seats are split across processes, so event n+1 may
arrive before n: it is kept (each room keeps its last events) and sent right after n once n
arrives. A connection still behind after a short wait fetches the missing events from the
room's stream (or gets a `snapshot` when they are no longer kept): that is the catch-up, the
only part of the hub that does I/O, through the `RoomReader` it is given at `attach`.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import math
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgpack
from solrace.protocol import messages as m
from solrace.protocol.messages import ProtocolError
from solrace.server.common.codes import shown
from solrace.server.common.metrics import METRICS
from solrace.server.net.conn import Conn
from solrace.server.net.ws_server import broadcast
from solrace.server.rules.projection import Viewer
from websockets.exceptions import ConnectionClosed

log = logging.getLogger("solrace.server")

#: events kept per room, so an event that arrived early can follow the one it waited for
RECENT = 64
#: seconds a connection may wait for a late event before it fetches from the stream
GAP_WAIT = 0.1
#: seconds a room's racing progress is held for its players, from the first one held, then
#: sent as one frame per place (`Hub.player_tick`; 0: each at the end of the loop's turn).
#: 250 ms, the high end of what issue 21 allows for a tick: with 8 paced racers (8 moves a
#: second a room) a move costs 3.7 frames (its ack and 2.7 of progress) against 5.3 at
#: 100 ms and 7.7 when the first went at once, and each frame is a send (~9 µs of the
#: kernel's on loopback); a racer sees another's move at most a quarter second late
PLAYER_TICK_S = 0.25
#: a players' window closes on the first multiple of this after its tick (so 250-260 ms): the
#: windows due in one slot share one timer of the loop's (`Hub._windows_due`), where a timer
#: each (~680 a second with 2,000 paced players) cost a handle, its place in the loop's heap
#: of ~4,500 timers (a Python comparison per level) and a callback each
WINDOW_SLOT_S = 0.01
#: progress events a room holds at most: the tick ends early at this many (a room at full
#: speed makes ~60 in 100 ms), so that what it holds is always among the kept ones (RECENT)
HELD_MAX = RECENT // 2
#: seconds between two frames to a room's spectators: one frame per spectator per tick holds
#: the room's events since its last one and each seat's latest board (`Hub._tick`). 100 ms, the
#: low end of what issue 21 allows: a spectator sees a move at most a tick late (a human's
#: reaction time), and 1,000 spectators cost ~10 writes per second each, whatever the room's
#: pace
TICK_S = 0.1
#: frames a room's spectators may get at once beyond one a tick: a room's frames are
#: credits, one back each TICK_S, at most this many kept (`Tick.fill`). A slow room's moves
#: (8 a second) each go at the end of their turn, where a fixed window after each frame held
#: the next move up to a tick (p99 1.5-2x the bare broadcast's); a fast room's still get one
#: frame a tick (32 moves a second: 10 frames, not 32)
TICK_BURST = 3.0


@dataclass
class Tick:
    """A room's spectator tick: the boards waiting for its next frame (one per seat, the
    latest), and its credits: a frame takes one, and one comes back each TICK_S (at most
    TICK_BURST kept); with none left, the next frame waits for `timer` (`due` says one is
    owed then); `soon` is a frame due at the end of this turn of the loop."""

    boards: dict[int, bytes] = field(default_factory=dict)
    timer: asyncio.TimerHandle | None = None
    soon: asyncio.Handle | None = None
    due: bool = False
    credits: float = field(default_factory=lambda: TICK_BURST)
    #: the loop's time `credits` was counted at
    counted: float = 0.0

    def fill(self, now: float) -> float:
        """The credits at `now` (the loop's time)."""
        self.credits = min(TICK_BURST, self.credits + (now - self.counted) / TICK_S)
        self.counted = now
        return self.credits

    def cancel(self) -> None:
        for handle in (self.timer, self.soon):
            if handle is not None:
                handle.cancel()
        self.timer = self.soon = None


def urgent(event: dict[str, Any]) -> bool:
    """An event the room's spectators get at the end of the turn, not at the tick's end: news
    (a start, a seat's end, the results). Routine progress and the spectator count wait."""
    return not coalescible(event) and event.get("kind") != "watchers"


@dataclass
class Window:
    """A room's coalescing window: progress events held until `due` (the loop's time; the
    hub's one timer for every window due, `Hub._windows_due`, sends them)."""

    due: float
    held: list[dict[str, Any]] = field(default_factory=list)


def coalescible(event: dict[str, Any]) -> bool:
    """Routine progress: a racing seat's. A seat that finishes (won, dead, out) is news that
    goes out at once, as its own event, so every client sees its status change as an event."""
    return event.get("kind") == "progress" and event.get("status") == "racing"


def frames(run: list[dict[str, Any]]) -> list[bytes]:
    """Consecutive events as frames: each run of two or more coalescible events one
    `progress` frame carrying every seat's latest line, any other event its own frame."""
    out = []
    i = 0
    while i < len(run):
        j = i
        while j < len(run) and coalescible(run[j]):
            j += 1
        if j - i >= 2:
            out.append(m.encode(progress_frame(run[i:j])))
            i = j
        else:
            out.append(m.encode(run[i]))
            i += 1
    return out


def progress_frame(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Room events `from`..`n`, all progress of racing seats: each seat's latest line."""
    latest = {e["seat"]: e for e in events}
    seats = []
    for seat in sorted(latest):
        e = latest[seat]
        # a seat's line: its progress event's fields less n and at, written out (a
        # comprehension per seat was a call each in Python 3.11)
        seats.append(
            {
                "seat": seat,
                "moves": e["moves"],
                "home": e["home"],
                "progress": e["progress"],
                "status": e["status"],
                "time": e["time"],
            }
        )
    last = events[-1]
    return {
        "type": "progress",
        "from": events[0]["n"],
        "n": last["n"],
        "at": last["at"],
        "seats": seats,
    }


class RoomReader(Protocol):
    """What catch-up reads: the room's kept events, else a snapshot (the room service)."""

    async def events_after(
        self, code: str, after: int
    ) -> list[tuple[int, dict[str, Any]]] | None: ...

    async def snapshot(self, code: str, viewer: Viewer) -> dict[str, Any]: ...

    async def snapshots(self, code: str, viewers: list[Viewer]) -> list[dict[str, Any]]: ...

    async def spectator_boards(self, code: str, viewer: Viewer) -> list[dict[str, Any]]: ...

    def watching_own_race(self, code: str, addr: str | None) -> bool: ...

    def racing_addresses(self, code: str) -> frozenset[str] | None: ...


async def send(conn: Conn, msg: dict[str, Any]) -> None:
    await conn.ws.send(m.encode(msg))


def write(conn: Conn, msg: dict[str, Any]) -> None:
    """Send now, without waiting for the socket to drain (a reply that must go out before
    anything else of this turn: nothing can run between this and the write)."""
    broadcast([conn.ws], m.encode(msg))


#: a delayed spectator stream keeps at most one board per seat per this many seconds (`Hub.board`)
DELAYED_BOARD_S = 1.0


def _board_seat(frame: bytes) -> int:
    """The seat of an encoded `board` frame, read up to its `seat` field (the view after it,
    most of the frame, is never decoded)."""
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(frame)
    try:
        for _ in range(unpacker.read_map_header()):
            key = unpacker.unpack()
            if key == "seat":
                seat = unpacker.unpack()
                return seat if isinstance(seat, int) else -1
            unpacker.skip()
    except Exception:  # not a map: no seat
        pass
    return -1


class Hub:
    """Local connections per room, fed by the store (own events at once, others' by pub/sub)."""

    def __init__(self) -> None:
        self.rooms: dict[str, set[Conn]] = {}
        #: the same connections by role: players get events as they come, spectators per tick
        self.players: dict[str, set[Conn]] = {}
        self.spectators: dict[str, set[Conn]] = {}
        #: per room with spectators here: its tick (`_tick`)
        self.ticks: dict[str, Tick] = {}
        #: per room: the highest event number this process has heard of (spectators' top)
        self.heard: dict[str, int] = {}
        #: per room: its last events sent (by number), the highest number sent, its window
        self.recent: dict[str, dict[int, dict[str, Any]]] = {}
        self.tops: dict[str, int] = {}
        self.windows: dict[str, Window] = {}
        #: every window by its due time (a heap of (due, seq, code, window); one closed early
        #: stays until its time and is then passed over) and the one timer for its head
        self._due: list[tuple[float, int, str, Window]] = []
        self._due_seq = 0
        self._due_timer: asyncio.TimerHandle | None = None
        #: seconds a room's racing progress waits for its players' frame (`deliver`)
        self.player_tick = PLAYER_TICK_S
        self.gap_timers: dict[str, asyncio.TimerHandle] = {}
        #: per room: delayed spectator boards waiting for their time, at most one per seat
        #: per DELAYED_BOARD_S (`board`)
        self.delayed: dict[str, dict[tuple[int, int], bytes]] = {}
        self.tasks: set[asyncio.Task[Any]] = set()
        #: events of this turn of the loop, delivered together at its end (`_queue`)
        self._outbox: list[tuple[str, dict[str, Any]]] = []
        self._flush_handle: asyncio.Handle | None = None
        self._reader: RoomReader | None = None
        self._on_event: Callable[[str, dict[str, Any]], None] | None = None

    def attach(self, reader: RoomReader, on_event: Callable[[str, dict[str, Any]], None]) -> None:
        """Give the hub what it needs once the store (whose sink it is) and the service exist:
        the reader for catch-ups, and who hears every room event first (room supervision arms
        its timers on countdown and start)."""
        self._reader = reader
        self._on_event = on_event

    @property
    def reader(self) -> RoomReader:
        if self._reader is None:
            raise RuntimeError("the hub was not attached to a room reader")
        return self._reader

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # --- membership -----------------------------------------------------------------------

    def add(self, code: str, conn: Conn) -> bool:
        """Count a connection in; True when it is the room's first here (subscribe then)."""
        members = self.rooms.get(code)
        first = members is None
        if members is None:
            members = self.rooms[code] = set()
        members.add(conn)
        by_role = self.spectators if conn.role == "spectator" else self.players
        by_role.setdefault(code, set()).add(conn)
        return first

    def remove(self, code: str, conn: Conn) -> bool:
        """Count a connection out; True when the room has nobody left here (unsubscribe then)."""
        members = self.rooms.get(code)
        if members is None:
            return False
        members.discard(conn)
        for by_role in (self.players, self.spectators):
            conns = by_role.get(code)
            if conns is not None:
                conns.discard(conn)
                if not conns:
                    del by_role[code]
        if code not in self.spectators:
            tick = self.ticks.pop(code, None)
            if tick is not None:
                tick.cancel()
        if members:
            return False
        del self.rooms[code]
        self.recent.pop(code, None)
        self.tops.pop(code, None)
        self.heard.pop(code, None)
        self.windows.pop(code, None)  # its place in `_due` is passed over when due
        timer = self.gap_timers.pop(code, None)
        if timer is not None:
            timer.cancel()
        return True

    def watchers(self, code: str) -> int:
        """The room's spectators here (`EventSink.watchers`)."""
        return len(self.spectators.get(code, ()))

    def members(self, code: str) -> set[Conn]:
        return self.rooms.get(code, set())

    # --- the store's sink -----------------------------------------------------------------

    def local_event(self, code: str, n: int, event: dict[str, Any]) -> None:
        """An event this process just stored (a room nobody here watches gets nothing)."""
        if code in self.rooms:
            self._queue(code, {"type": "event", "n": n, **event})

    def remote_event(self, code: str, n: int, payload: bytes) -> None:
        """Another process's event, off pub/sub."""
        if code in self.rooms:
            self._queue(code, {"type": "event", "n": n, **m.decode_trusted(payload)})

    def _queue(self, code: str, event: dict[str, Any]) -> None:
        """Events go out at the end of the loop's turn, not inside the store's call.

        The store hands over an event as soon as Redis answers, in the middle of the command
        that stored it; the mover's ack is written right after, in the same turn. Sending
        the room's frames later in the turn puts every ack of the turn ahead of every
        fan-out of it, so a room with a slow or abusive connection never delays an ack, and
        the mover's own progress (folded into its ack, `acked`) needs no frame of its own.
        """
        self._outbox.append((code, event))
        if self._flush_handle is None:
            self._flush_handle = asyncio.get_running_loop().call_soon(self.flush)

    def flush(self, conn: Conn | None = None) -> None:
        """Send the queued events now. Every reply but an ack calls this first, so a request's
        own events (a `ready`'s, a `rematch`'s) reach its connection before its `ok`; a
        spectator's (a host who watches) are sent it at once, ahead of its tick."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if self._outbox:
            out, self._outbox = self._outbox, []
            for code, event in out:
                try:
                    self.deliver(code, event)
                except Exception:  # one room's failure must not hold back the others' events
                    log.exception("fan-out of event %s in %s", event.get("n"), shown(code))
        if conn is not None and conn.role == "spectator" and conn.room is not None:
            self._events_now(conn.room, conn)

    def acked(self, conn: Conn, n: int) -> None:
        """The mover's ack carried its own progress event n: when that is the next event for
        the connection, it counts as sent (the client applies it from the ack the same way:
        the two must agree, so nothing else decides it; a catch-up under way checks the number
        again before each event it sends)."""
        if conn.last_event == n - 1:
            conn.last_event = n

    def board(self, code: str, delay: int, frame: bytes) -> None:
        """A spectator board (ours or another process's): to this room's spectators here with
        their next tick (`_board_due`), but never to the address of a seat still in the race
        (judged when the tick goes out).

        A delayed board waits in memory for `delay` seconds; so that what waits is bounded by
        seats x delay and not by how fast racers move, a seat's later board of the same
        DELAYED_BOARD_S window takes the place of the one waiting (a board is a whole view, so
        the spectator loses only intermediate frames, and gets it up to a window early)."""
        if code not in self.rooms:
            return
        if delay <= 0:
            self._board_due(code, frame)
            return
        key = (_board_seat(frame), int(asyncio.get_running_loop().time() // DELAYED_BOARD_S))
        waiting = self.delayed.setdefault(code, {})
        if key not in waiting:
            asyncio.get_running_loop().call_later(delay, self._delayed_out, code, key)
        waiting[key] = frame

    def _delayed_out(self, code: str, key: tuple[int, int]) -> None:
        waiting = self.delayed.get(code)
        frame = None if waiting is None else waiting.pop(key, None)
        if waiting is not None and not waiting:
            del self.delayed[code]
        if frame is not None:
            self._board_due(code, frame)

    def _board_due(self, code: str, frame: bytes) -> None:
        """A board for the room's next tick: it takes the place of the seat's board waiting
        there (a board is a whole view; a spectator sees each seat's latest, once a tick)."""
        if code not in self.spectators:
            return
        tick = self.ticks.get(code)
        if tick is None:
            tick = self.ticks[code] = Tick()
        tick.boards[_board_seat(frame)] = frame
        self._spectators_due(code, tick, now=False)

    @staticmethod
    def _may_watch(conn: Conn, racers: frozenset[str] | None) -> bool:
        """A spectator not at a racer's address (`racers`); one that is has its boards withheld
        until its race is over for it. None: this process has no copy of the room (dropped
        after a failure), so nobody is sure: the board goes to nobody, the next one may."""
        if conn.role != "spectator" or racers is None:
            return False
        if conn.withheld or not conn.addr_key or conn.addr_key in racers:
            conn.withheld = True
            return False
        return True

    def _release_withheld(self, code: str, event: dict[str, Any]) -> None:
        """A seat is done (or the race is): spectators whose boards were withheld may now be
        allowed them; each asks the room as Redis has it, and gets the boards if so."""
        kind = event.get("kind")
        if kind != "results" and not (kind == "progress" and event.get("status") != "racing"):
            return
        if kind == "results":
            # the race is over: nothing is hidden any more, so every spectator gets the final
            # boards now instead of the delayed ones still waiting (up to the room's delay)
            self.delayed.pop(code, None)
        for conn in self.rooms.get(code, ()):
            if conn.role == "spectator" and (conn.withheld or kind == "results"):
                self.spawn(self._send_withheld(code, conn))

    async def _send_withheld(self, code: str, conn: Conn) -> None:
        try:
            boards = await self.reader.spectator_boards(code, conn.viewer())
        except ProtocolError:
            return
        if conn.room != code or self.reader.watching_own_race(code, conn.addr_key):
            return
        conn.withheld = False
        for board in boards:
            with contextlib.suppress(ConnectionClosed):
                await send(conn, board)

    def lost(self, code: str) -> None:
        """Pub/sub may have dropped some of this room's events: everyone here checks the stream."""
        for conn in self.rooms.get(code, ()):
            conn.dirty = True
            self.spawn(self.catch_up(conn))

    # --- ordering and coalescing -----------------------------------------------------------

    def deliver(self, code: str, event: dict[str, Any]) -> None:
        """One room event, in the order it reached this process: out now, or, for a racing
        seat's progress, held for the room's players' tick (`player_tick` after the first
        one held) and sent with the others as one `progress` frame (`_send` says who gets
        what). Anything else first releases what is held, then goes out."""
        if self._on_event is not None:
            self._on_event(code, event)
        if event.get("kind") == "start":
            self.spawn(self.send_boards_at_start(code))
        if code not in self.rooms:
            return
        self._release_withheld(code, event)
        self._heard(code, event)
        if code in self.spectators:
            tick = self.ticks.get(code)
            if tick is None:
                tick = self.ticks[code] = Tick()
            self._spectators_due(code, tick, now=urgent(event))
        if coalescible(event):
            window = self.windows.get(code)
            if window is not None:
                window.held.append(event)
                if len(window.held) >= HELD_MAX:  # a room at full speed: out before the
                    self._release(code)  # kept events (`recent`) could lose what it holds
                return
            n = event["n"]
            players = self.players.get(code)
            if players is None or all(c.last_event >= n for c in players):
                return  # nobody here lacks it (a room of one: the mover's ack carried it)
            if self.player_tick <= 0:
                self._send(code, [event])
                return
            self._open_window(code, event)
            return
        self._release(code)  # what is held goes first: the room's order is kept
        self._send(code, [event])

    def _open_window(self, code: str, event: dict[str, Any]) -> None:
        """A players' window for the room, holding `event`, due on the first WINDOW_SLOT_S
        after the players' tick; the hub's timer is armed for it when it is the earliest."""
        loop = asyncio.get_running_loop()
        due = math.ceil((loop.time() + self.player_tick) / WINDOW_SLOT_S) * WINDOW_SLOT_S
        window = Window(due, [event])
        self.windows[code] = window
        self._due_seq += 1
        heapq.heappush(self._due, (due, self._due_seq, code, window))
        timer = self._due_timer
        if timer is None or due < timer.when():
            if timer is not None:
                timer.cancel()
            self._due_timer = loop.call_at(due, self._windows_due)

    def _windows_due(self) -> None:
        """The players' tick is over for every window due by now: what each held goes out
        (the next progress opens the room's next one); the timer is armed for the next due."""
        self._due_timer = None
        loop = asyncio.get_running_loop()
        limit = loop.time() + WINDOW_SLOT_S / 10  # the loop runs a timer this early at most
        due = self._due
        while due and due[0][0] <= limit:
            _, _, code, window = heapq.heappop(due)
            if self.windows.get(code) is window:
                try:
                    self._window_end(code)
                except Exception:  # one room's failure must not hold back the others'
                    log.exception("players' window of %s", shown(code))
        if due:
            self._due_timer = loop.call_at(due[0][0], self._windows_due)

    def _window_end(self, code: str) -> None:
        """The room's players' tick is over: what it held goes out (the next progress opens
        the next one)."""
        self._release(code)

    def _release(self, code: str) -> None:
        """Send what the room's window holds, now, and close the window (its place in the
        hub's heap is passed over when due)."""
        window = self.windows.pop(code, None)
        if window is not None and window.held:
            self._send(code, window.held)

    def _heard(self, code: str, event: dict[str, Any]) -> None:
        """Keep a room event (by number) for whoever lacks it: players now or at the window's
        end, spectators at the tick's."""
        recent = self.recent.setdefault(code, {})
        recent[event["n"]] = event
        if event["n"] > self.heard.get(code, 0):
            self.heard[code] = event["n"]
        if len(recent) > 2 * RECENT:  # keep the newest (numbers far apart after a resync)
            for old in sorted(recent)[:-RECENT]:
                del recent[old]

    def _send(self, code: str, events: list[dict[str, Any]]) -> None:
        """Give each player of the room the events it lacks, from the one after its last
        (spectators get theirs per tick: `_tick`).

        Connections at the same place share the same frames (one encoding, one broadcast): a
        run of two or more progress events of racing seats is one `progress` frame, anything
        else one frame per event. Kept events (`recent`) also carry a connection past events
        that arrived out of order; one still behind after GAP_WAIT fetches what it missed.
        """
        members = self.players.get(code)
        if not members:
            return
        recent = self.recent.setdefault(code, {})
        top = max(self.tops.get(code, 0), *(e["n"] for e in events))
        self.tops[code] = top
        at: dict[int, list[Conn]] = {}
        for conn in members:
            if conn.last_event >= top:
                continue
            if conn.catching_up:
                conn.dirty = True
                self.spawn(self.catch_up(conn))
                continue
            at.setdefault(conn.last_event, []).append(conn)
        behind = False
        for last, conns in at.items():
            run: list[dict[str, Any]] = []
            while (following := recent.get(last + 1 + len(run))) is not None:
                run.append(following)
            if run:
                targets = [c.ws for c in conns]
                for frame in frames(run):
                    broadcast(targets, frame)
                    METRICS.fanout_frames.inc(len(targets))
                for conn in conns:
                    conn.last_event = run[-1]["n"]
            if last + len(run) < top:
                behind = True
        if behind:
            self._gap_wait(code)

    def _gap_wait(self, code: str) -> None:
        if code not in self.gap_timers:
            self.gap_timers[code] = asyncio.get_running_loop().call_later(
                GAP_WAIT, self._gap_check, code
            )

    def _gap_check(self, code: str) -> None:
        """Whoever is still behind the newest event sent after the wait fetches what it missed:
        a player behind the newest event sent, a spectator whose next event is not here (one
        whose next is here only waits for its tick)."""
        self.gap_timers.pop(code, None)
        top = self.tops.get(code, 0)
        heard = self.heard.get(code, 0)
        recent = self.recent.get(code, {})
        for conn in self.players.get(code, ()):
            if conn.last_event < top:
                conn.dirty = True
                self.spawn(self.catch_up(conn))
        for conn in self.spectators.get(code, ()):
            if conn.last_event < heard and conn.last_event + 1 not in recent:
                conn.dirty = True
                self.spawn(self.catch_up(conn))

    # --- spectators, per tick ----------------------------------------------------------------

    def _spectators_due(self, code: str, tick: Tick, *, now: bool) -> None:
        """Something for the room's spectators: their frame goes at the end of this turn when
        the room has a credit (or `now`: news), else when its next credit comes."""
        if tick.soon is not None:
            return  # a frame is due this turn: it takes this too
        loop = asyncio.get_running_loop()
        if now or (tick.timer is None and tick.fill(loop.time()) >= 1):
            if tick.timer is not None:
                tick.timer.cancel()
                tick.timer = None
            tick.due = False
            tick.soon = loop.call_soon(self._tick, code)
            return
        tick.due = True
        if tick.timer is None:
            wait = (1 - tick.credits) * TICK_S
            tick.timer = loop.call_later(wait, self._tick_end, code)

    def _tick_end(self, code: str) -> None:
        """A credit came back: send what waited for it."""
        tick = self.ticks.get(code)
        if tick is None:
            return
        tick.timer = None
        if tick.due:
            tick.due = False
            self._tick(code)

    def _tick(self, code: str) -> None:
        """One frame to each spectator of the room: the events after its place (each run of
        racing seats' progress one `progress`) and, to those allowed boards, each seat's latest
        board; one encoding and one `broadcast` per place. It takes one of the room's credits
        (news may take it below none: the frames after it wait longer)."""
        tick = self.ticks.get(code)
        if tick is None:
            return
        tick.soon = None
        tick.fill(asyncio.get_running_loop().time())
        tick.credits -= 1
        boards = [tick.boards[seat] for seat in sorted(tick.boards)]
        tick.boards = {}
        try:
            self._to_spectators(code, boards)
        except Exception:  # one room's failure must not stop its ticks
            log.exception("spectator tick of %s", shown(code))

    def _to_spectators(self, code: str, boards: list[bytes]) -> None:
        conns = self.spectators.get(code)
        if not conns:
            return
        heard = self.heard.get(code, 0)
        racers = self.reader.racing_addresses(code) if boards else None
        places: dict[tuple[int, bool], list[Conn]] = {}
        boards_only: list[Conn] = []
        for conn in conns:
            watch = bool(boards) and self._may_watch(conn, racers)
            if conn.catching_up:  # its events come from the catch-up, in order
                if conn.last_event < heard:
                    conn.dirty = True
                    self.spawn(self.catch_up(conn))
                if watch:
                    boards_only.append(conn)
                continue
            if conn.last_event < heard or watch:
                places.setdefault((conn.last_event, watch), []).append(conn)
        if boards_only:
            self._frame_out(boards_only, boards)
        recent = self.recent.get(code, {})
        runs: dict[int, tuple[list[dict[str, Any]], list[bytes]]] = {}
        behind = False
        for (last, watch), group in places.items():
            got = runs.get(last)
            if got is None:
                run: list[dict[str, Any]] = []
                while (following := recent.get(last + 1 + len(run))) is not None:
                    run.append(following)
                got = runs[last] = (run, frames(run))
            run, encoded = got
            if last + len(run) < heard:
                behind = True
            self._frame_out(group, encoded + boards if watch else encoded)
            if run:
                for conn in group:
                    conn.last_event = run[-1]["n"]
        if behind:
            self._gap_wait(code)

    @staticmethod
    def _frame_out(conns: list[Conn], messages: list[bytes]) -> None:
        """Messages to connections at one place: one frame (a `batch` of two or more)."""
        if messages:
            broadcast([c.ws for c in conns], m.batch_frame(messages))
            METRICS.fanout_frames.inc(len(conns))

    def _events_now(self, code: str, conn: Conn) -> None:
        """A spectator's own request is answered: the room's events it lacks go first."""
        if conn.catching_up:
            return
        recent = self.recent.get(code, {})
        run: list[dict[str, Any]] = []
        while (following := recent.get(conn.last_event + 1 + len(run))) is not None:
            run.append(following)
        if run:
            self._frame_out([conn], frames(run))
            conn.last_event = run[-1]["n"]

    # --- catch-up -------------------------------------------------------------------------

    async def catch_up(self, conn: Conn) -> None:
        """Send the events a connection missed, in order, or a snapshot when they are gone."""
        if conn.catching_up or conn.room is None:
            return
        conn.catching_up = True
        try:
            while True:
                conn.dirty = False
                events = await self.reader.events_after(conn.room, conn.last_event)
                if events is None:
                    snap = await self.reader.snapshot(conn.room, conn.viewer())
                    # the client takes the snapshot's number, even if an ack took it further
                    # meanwhile: count the same, and send what follows it
                    conn.last_event = snap["event"]
                    await send(conn, {"type": "snapshot", "snapshot": snap})
                    continue
                fresh = [(n, e) for n, e in events if n > conn.last_event]
                if not fresh and not conn.dirty:
                    return
                for n, body in fresh:
                    if n <= conn.last_event:
                        continue
                    conn.last_event = n
                    await send(conn, {"type": "event", "n": n, **body})
        except ConnectionClosed:
            pass
        finally:
            conn.catching_up = False

    async def send_boards_at_start(self, code: str) -> None:
        """The race is on: each local player gets a snapshot with its own board (one load per room).

        Written without waiting for any socket to drain: a player that stops reading must not
        hold back the others' boards (its own buffer is bounded by the slow-reader limit,
        `ws_limits`)."""
        players = [c for c in self.rooms.get(code, ()) if c.role == "player"]
        if not players:
            return
        try:
            snaps = await self.reader.snapshots(code, [c.viewer() for c in players])
        except ProtocolError:
            return
        for conn, snap in zip(players, snaps, strict=False):
            ahead = conn.last_event > snap["event"]
            conn.last_event = snap["event"]  # what the client will take: count the same
            write(conn, {"type": "snapshot", "snapshot": snap})
            if ahead:  # events it had before the snapshot came again after it
                conn.dirty = True
                self.spawn(self.catch_up(conn))

    async def close(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        for timer in self.gap_timers.values():
            timer.cancel()
        self.gap_timers.clear()
        if self._due_timer is not None:
            self._due_timer.cancel()
            self._due_timer = None
        self._due.clear()
        self.windows.clear()
        for tick in self.ticks.values():
            tick.cancel()
        self.ticks.clear()
        for task in list(self.tasks):
            task.cancel()
