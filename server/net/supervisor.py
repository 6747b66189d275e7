"""Room supervision: what happens to rooms between messages.

* presence: a connection bound to a room counts in (a seat's `connected` event when it
  crosses zero), and out when it goes; a racing seat with nobody left gets a grace deadline;
* timers: a countdown or a time limit arms a local timer, backed by a deadline in Redis that
  any live process fires (`deadlines`), so a process that dies loses none;
* the janitor: this process's heartbeat, due deadlines (grace periods, race clocks), and the
  presence of processes that stopped beating, counted out by whoever notices first.

The fan-out (`fanout.Hub`) tells it every room event first (`on_room_event`), which is how a
countdown or a start stored by another process arms this process's timers too.

The three are modules of their own (`presence`, `clocks`, `janitor`, on the common ground of
`supervision`); `RoomSupervisor` is what the rest of the server holds.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Coroutine
from typing import Any

from solrace.server.net.clocks import Clocks
from solrace.server.net.conn import Conn, Limits
from solrace.server.net.fanout import Hub
from solrace.server.net.janitor import Janitor
from solrace.server.net.presence import Presence
from solrace.server.net.supervision import Supervision
from solrace.server.race.service import RoomService
from solrace.server.store.lease import Leases


class RoomSupervisor:
    """Presence, clocks and the janitor of one process, over one `Supervision`."""

    def __init__(
        self,
        service: RoomService,
        hub: Hub,
        limits: Limits,
        leases: Leases | None = None,
        proc_id: str | None = None,
        arena_end: Callable[[str], Coroutine[Any, Any, Any]] | None = None,
    ) -> None:
        self.sv = Supervision(service, hub, limits, leases, proc_id or secrets.token_hex(8))
        self.clocks = Clocks(self.sv)
        self.presence = Presence(self.sv, self.clocks)
        self.janitor = Janitor(self.sv, self.presence, self.clocks, arena_end)
        self.service = service
        self.hub = hub
        self.limits = limits
        self.proc_id = self.sv.proc_id
        #: the leases of the rooms this process serves (None: no leases, no fencing)
        self.leases = leases
        #: the rooms' local timers (clocks) and pending spectator counts (presence)
        self.timers = self.clocks.timers
        self.watcher_timers = self.presence.watcher_timers
        self.tasks = self.sv.tasks

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.sv.spawn(coro)

    # --- presence -------------------------------------------------------------------------

    async def bind(self, conn: Conn, code: str, role: str, seat: int | None) -> None:
        """The connection joins a room here: fan-out membership, then presence in Redis."""
        await self.presence.bind(conn, code, role, seat)

    async def unbind(self, conn: Conn) -> None:
        """The connection leaves its room: presence down (and a grace timer for a racing seat)."""
        await self.presence.unbind(conn)

    async def keep_lobby(self, code: str) -> None:
        """After a connection was bound and answered, a room in its lobby lives a day again."""
        await self.presence.keep_lobby(code)

    def announce_watchers(self, code: str) -> None:
        self.presence.announce_watchers(code)

    # --- clocks ---------------------------------------------------------------------------

    def on_room_event(self, code: str, event: dict[str, Any]) -> None:
        """Every room event, first (the hub's): a kick unbinds the seat's connections here, a
        countdown or a start arms the room's clock, the results or a rematch disarm it."""
        if event.get("kind") == "kicked":
            self.presence.unbind_kicked(code, event["seat"])
        else:
            self.clocks.on_room_event(code, event)

    def arm(self, code: str, at_ms: int) -> None:
        """The room's clock is due at `at_ms`: a local timer, and its deadline in Redis."""
        self.clocks.arm(code, at_ms)

    def arm_clock(self, code: str) -> None:
        self.clocks.arm_clock(code)

    # --- the janitor ----------------------------------------------------------------------

    async def start(self) -> None:
        await self.janitor.start()

    async def close(self) -> None:
        self.sv.closing = True
        for handle in [*self.timers.values(), *self.watcher_timers.values()]:
            handle.cancel()
        await self.janitor.close()
