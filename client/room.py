"""The client's model of a room, kept current from snapshots, events, acks and boards.

A UI renders this model and never the raw messages, so the same drawing code
serves a fresh join, a resume that replayed missed events, and a resync. It
is plain data in, plain data out (no I/O), which keeps it testable alone.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

from solrace.protocol.messages import acked_view

from . import events as ev


def _new_player(seat: int, name: str, player: str | None = None) -> dict[str, Any]:
    return {
        "seat": seat,
        "name": name,
        "player": player,
        "ready": False,
        "connected": True,
        "status": "waiting",
        "moves": 0,
        "home": 0,
        "progress": 0.0,
        "time": None,
    }


@dataclass
class RoomModel:
    """Everything a client knows about one room; `event` is the last event number applied."""

    room: str | None = None
    state: str = "lobby"
    event: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    host_seat: int | None = None
    commitment: str | None = None
    starts_at: int | None = None
    ends_at: int | None = None
    players: dict[int, dict[str, Any]] = field(default_factory=dict)
    spectators: int = 0
    seat: int | None = None
    view: dict[str, Any] | None = None
    boards: dict[int, dict[str, Any]] = field(default_factory=dict)
    results: dict[str, Any] | None = None
    #: the room's series (under way, or the last one ended), with its standings
    series: dict[str, Any] | None = None
    #: server clock minus local clock, in ms (from the snapshot's `now` and events' `at`)
    clock_offset: float = 0.0
    #: numbers of events that arrived after a gap (a resync is then advisable)
    gaps: list[int] = field(default_factory=list)

    # ---- clock ------------------------------------------------------------

    def server_now(self, local_ms: float | None = None) -> float:
        """The server's Unix time in ms, estimated from the local clock."""
        local = time.time() * 1000 if local_ms is None else local_ms
        return local + self.clock_offset

    def countdown_left(self, local_ms: float | None = None) -> float | None:
        """Seconds until the start, while counting down; None otherwise."""
        if self.state != "countdown" or self.starts_at is None:
            return None
        return max(0.0, (self.starts_at - self.server_now(local_ms)) / 1000)

    def elapsed(self, local_ms: float | None = None) -> float | None:
        """Seconds since the start of the race, once it has started."""
        if self.starts_at is None or self.state not in ("racing", "finished"):
            return None
        return max(0.0, (self.server_now(local_ms) - self.starts_at) / 1000)

    def time_left(self, local_ms: float | None = None) -> float | None:
        """Seconds until the time limit, when the room has one and is racing."""
        if self.ends_at is None or self.state != "racing":
            return None
        return max(0.0, (self.ends_at - self.server_now(local_ms)) / 1000)

    # ---- inputs ------------------------------------------------------------

    def apply_snapshot(self, snap: dict[str, Any], local_ms: float | None = None) -> None:
        """Replace the model with a server snapshot (join, resume or resync)."""
        self.room = snap.get("room", self.room)
        self.state = snap.get("state", self.state)
        self.event = int(snap.get("event") or 0)
        self.options = dict(snap.get("options") or {})
        self.host_seat = snap.get("host_seat")
        self.commitment = snap.get("commitment")
        self.starts_at = snap.get("starts_at")
        self.ends_at = snap.get("ends_at")
        self.players = {int(p["seat"]): dict(p) for p in snap.get("players") or []}
        self.spectators = int(snap.get("spectators") or 0)
        you = snap.get("you")
        if you:
            self.seat = you.get("seat", self.seat)
            self.view = you.get("view")
        self.boards = {int(k): v for k, v in (snap.get("boards") or {}).items()}
        self.results = snap.get("results")
        self.series = snap.get("series")
        if snap.get("now") is not None:
            local = time.time() * 1000 if local_ms is None else local_ms
            self.clock_offset = snap["now"] - local
        self.gaps.clear()

    def apply_event(self, event: ev.Event) -> bool:
        """Apply one numbered event; False when it was already applied (a replay)."""
        if event.n <= self.event:
            return False
        if event.n != self.event + 1:
            self.gaps.append(event.n)
        self.event = event.n
        handler = getattr(self, f"_on_{event.kind}", None)
        if handler is not None:
            handler(event)
        return True

    def apply_ack(self, ack: ev.Ack) -> None:
        """Take the player's own board, and its own progress line, from a move or undo reply.

        The ack stands for the mover's own `progress` event (the server sends no separate
        one): when it is the next event (`event` is one past ours) it counts as applied.
        Otherwise earlier events are still on their way and that event follows them.
        """
        if ack.view is None and ack.change is not None:
            raw: dict[str, Any] = {"n": ack.n, "change": ack.change}
            if ack.undone is not None:
                raw["undone"] = ack.undone
            # None: the board here is not the one the change applies to (the seat moved from
            # another connection); the connection asks for a snapshot (`_needs_board`)
            ack.view = acked_view(self.view, raw)
            self.view = ack.view
        elif ack.view is not None:
            self.view = ack.view
        me = self.players.get(self.seat) if self.seat is not None else None
        if me is not None and ack.view is not None:
            me["moves"] = ack.view.get("moves", me.get("moves", 0))
            me["home"] = ack.view.get("home", me.get("home", 0))
            me["progress"] = ack.view.get("progress", me.get("progress", 0.0))
            if ack.status:
                me["status"] = ack.status
            if ack.event is not None:
                me["time"] = ack.time
        if ack.event is not None and ack.event == self.event + 1:
            self.event = ack.event

    def apply_progress(self, frame: ev.ProgressFrame) -> bool:
        """Apply a coalesced `progress` frame (events `first`..`n`); False when nothing in it
        is new. Its lines are each seat's latest, so one that overlaps events already applied
        (its first ones came in the mover's ack) is applied whole; one that starts past the
        next event leaves a gap."""
        if frame.n <= self.event:
            return False
        if frame.first > self.event + 1:
            self.gaps.append(frame.first)
        self.event = frame.n
        for line in frame.seats:
            seat = int(line["seat"])
            p = self.players.setdefault(seat, _new_player(seat, ""))
            p.update({k: v for k, v in line.items() if k != "seat"})
        return True

    def apply_board(self, board: ev.Board) -> None:
        """Store a spectator board push."""
        self.boards[board.seat] = board.view

    def apply(self, message: ev.Message) -> bool:
        """Route any server message to the right update; True when the model changed."""
        if isinstance(message, ev.Joined):
            if message.room != self.room:
                self.event = 0
            self.room = message.room
            if message.seat is not None and message.role == "player":
                self.seat = message.seat
            if message.snapshot:
                self.apply_snapshot(message.snapshot)
            else:
                # a resume within the kept history: the missed events follow, and the
                # reply may carry the player's own board (`you`) outside a snapshot
                you = message.raw.get("you")
                if you and you.get("view") is not None:
                    self.view = you["view"]
            return True
        if isinstance(message, ev.Snapshot):
            self.apply_snapshot(message.snapshot)
            return True
        if isinstance(message, ev.Event):
            return self.apply_event(message)
        if isinstance(message, ev.ProgressFrame):
            return self.apply_progress(message)
        if isinstance(message, ev.Ack):
            self.apply_ack(message)
            return True
        if isinstance(message, ev.Board):
            self.apply_board(message)
            return True
        return False

    def copy(self) -> RoomModel:
        return copy.deepcopy(self)

    # ---- event kinds --------------------------------------------------------

    def _on_player_joined(self, e: ev.PlayerJoined) -> None:
        self.players[e.seat] = _new_player(e.seat, e.name, e.player)

    def _on_player_left(self, e: ev.PlayerLeft) -> None:
        if self.state == "lobby":
            self.players.pop(e.seat, None)
        elif e.seat in self.players:
            self.players[e.seat]["status"] = "left"
            self.players[e.seat]["connected"] = False

    def _on_connected(self, e: ev.Connected) -> None:
        if e.seat in self.players:
            self.players[e.seat]["connected"] = e.connected

    def _on_watchers(self, e: ev.Watchers) -> None:
        self.spectators = e.count

    def _on_ready(self, e: ev.ReadyChanged) -> None:
        if e.seat in self.players:
            self.players[e.seat]["ready"] = e.ready

    def _on_options(self, e: ev.OptionsChanged) -> None:
        self.options.update(e.options)

    def _on_kicked(self, e: ev.Kicked) -> None:
        self.players.pop(e.seat, None)
        if e.seat == self.seat:
            self.view = None

    def _on_countdown(self, e: ev.Countdown) -> None:
        self.state = "countdown"
        self.starts_at = e.starts_at
        self.commitment = e.commitment
        if e.at is not None:
            self._seen_server_time(e.at)

    def _on_start(self, e: ev.Start) -> None:
        self.state = "racing"
        self.starts_at = e.starts_at if e.starts_at is not None else self.starts_at
        self.ends_at = e.ends_at
        for p in self.players.values():
            if p.get("status") == "waiting":
                p["status"] = "racing"

    def _on_progress(self, e: ev.Progress) -> None:
        p = self.players.setdefault(e.seat, _new_player(e.seat, ""))
        p.update(moves=e.moves, home=e.home, progress=e.progress, status=e.status, time=e.time)

    def _on_results(self, e: ev.Results) -> None:
        self.state = "finished"
        self.results = {k: v for k, v in e.raw.items() if k not in ("type", "n", "kind", "at")}
        if e.series is not None:
            self.series = e.series

    def _on_series_end(self, e: ev.SeriesEnd) -> None:
        self.series = e.series

    def _on_rematch(self, e: ev.Rematch) -> None:
        self.state = "lobby"
        if e.options:
            self.options = dict(e.options)
        if e.series is not None:
            self.series = e.series
        self.commitment = self.starts_at = self.ends_at = None
        self.results = None
        self.view = None
        self.boards.clear()
        for p in self.players.values():
            p.update(ready=False, status="waiting", moves=0, home=0, progress=0.0, time=None)

    def _seen_server_time(self, at_ms: int) -> None:
        """An event's `at` is a lower bound on the server clock: nudge the offset up to it."""
        offset = at_ms - time.time() * 1000
        if offset > self.clock_offset:
            self.clock_offset = offset
