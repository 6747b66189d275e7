"""Fan-out: which local connections watch which room, and getting every room event to each of
them once and in order.

The `Hub` is the store's event sink (`store.EventSink`): the store hands it this process's own
events as soon as Redis has stored them, and other processes' events as they arrive on pub/sub
(the store drops our own copies there and is the only one that knows the published format).
Events are queued and sent at the end of the loop's turn, so the acks written in that turn go
first (`_queue`); a mover's ack stands for its own progress event (`acked`). Each event goes
out as one encoded frame shared by every connection that is at the event before it
(`websockets.broadcast`, which never waits on a slow client).

Those two streams interleave when a room's seats are split across processes, so event n+1 may
arrive before n: it is held (each room keeps its last few frames) and sent right after n once
n arrives. A connection still behind after a short wait fetches the missing events from the
room's stream (or gets a `snapshot` when they are no longer kept): that is the catch-up, the
only part of the hub that does I/O, through the `RoomReader` it is given at `attach`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

import websockets
from solrace.protocol import messages as m
from solrace.protocol.messages import ProtocolError
from solrace.server.conn import Conn
from solrace.server.metrics import METRICS
from solrace.server.projection import Viewer
from websockets.exceptions import ConnectionClosed

log = logging.getLogger("solrace.server")

#: frames kept per room, so an event that arrived early can follow the one it waited for
RECENT = 32
#: seconds a connection may wait for a late event before it fetches from the stream
GAP_WAIT = 0.1


class RoomReader(Protocol):
    """What catch-up reads: the room's kept events, else a snapshot (the room service)."""

    async def events_after(
        self, code: str, after: int
    ) -> list[tuple[int, dict[str, Any]]] | None: ...

    async def snapshot(self, code: str, viewer: Viewer) -> dict[str, Any]: ...

    async def snapshots(self, code: str, viewers: list[Viewer]) -> list[dict[str, Any]]: ...


async def send(conn: Conn, msg: dict[str, Any]) -> None:
    await conn.ws.send(m.encode(msg))


def write(conn: Conn, msg: dict[str, Any]) -> None:
    """Send now, without waiting for the socket to drain (a reply that must go out before
    anything else of this turn: nothing can run between this and the write)."""
    websockets.broadcast([conn.ws], m.encode(msg))


class Hub:
    """Local connections per room, fed by the store (own events at once, others' by pub/sub)."""

    def __init__(self) -> None:
        self.rooms: dict[str, set[Conn]] = {}
        self.recent: dict[str, dict[int, bytes]] = {}
        self.gap_timers: dict[str, asyncio.TimerHandle] = {}
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
        return first

    def remove(self, code: str, conn: Conn) -> bool:
        """Count a connection out; True when the room has nobody left here (unsubscribe then)."""
        members = self.rooms.get(code)
        if members is None:
            return False
        members.discard(conn)
        if members:
            return False
        del self.rooms[code]
        self.recent.pop(code, None)
        timer = self.gap_timers.pop(code, None)
        if timer is not None:
            timer.cancel()
        return True

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

    def flush(self) -> None:
        """Send the queued events now. Every reply but an ack calls this first, so a request's
        own events (a `ready`'s, a `rematch`'s) reach its connection before its `ok`."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if not self._outbox:
            return
        out, self._outbox = self._outbox, []
        for code, event in out:
            try:
                self.deliver(code, event)
            except Exception:  # one room's failure must not hold back the others' events
                log.exception("fan-out of event %s in %s", event.get("n"), code)

    def acked(self, conn: Conn, n: int) -> None:
        """The mover's ack carried its own progress event n: when that is the next event for
        the connection, it counts as sent (the client applies it from the ack the same way:
        the two must agree, so nothing else decides it; a catch-up under way checks the number
        again before each event it sends)."""
        if conn.last_event == n - 1:
            conn.last_event = n

    def board(self, code: str, delay: int, frame: bytes) -> None:
        """A spectator board (ours or another process's): to this room's spectators here."""
        if code not in self.rooms:
            return

        def out() -> None:
            targets = [c.ws for c in self.rooms.get(code, ()) if c.role == "spectator"]
            if targets:
                websockets.broadcast(targets, frame)
                METRICS.fanout_frames.inc(len(targets))

        if delay > 0:
            asyncio.get_running_loop().call_later(delay, out)
        else:
            out()

    def lost(self, code: str) -> None:
        """Pub/sub may have dropped some of this room's events: everyone here checks the stream."""
        for conn in self.rooms.get(code, ()):
            conn.dirty = True
            self.spawn(self.catch_up(conn))

    # --- ordering -------------------------------------------------------------------------

    def deliver(self, code: str, event: dict[str, Any]) -> None:
        """Send event n to each connection at n-1, then any later events held for it; one that
        is further behind waits GAP_WAIT for the missing events before it fetches them."""
        n = event["n"]
        if self._on_event is not None:
            self._on_event(code, event)
        if event.get("kind") == "start":
            self.spawn(self.send_boards_at_start(code))
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
                self.spawn(self.catch_up(conn))
            elif conn.last_event == n - 1:
                conn.last_event = n
                ready.append(conn.ws)
                if n + 1 in recent:
                    drain.append(conn)
            else:
                behind = True
        if ready:
            websockets.broadcast(ready, frame)
            METRICS.fanout_frames.inc(len(ready))
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
                self.spawn(self.catch_up(conn))

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
        """The race is on: each local player gets a snapshot with its own board (one load per room)."""
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
            with contextlib.suppress(ConnectionClosed):
                await send(conn, {"type": "snapshot", "snapshot": snap})
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
        for task in list(self.tasks):
            task.cancel()
