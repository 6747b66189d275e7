"""The janitor: this process's heartbeat, due deadlines (grace periods, race clocks, owed
records), and the presence of processes that stopped beating, counted out by whoever notices
first (their rooms get the lifetimes their last connection leaving would have given them)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from solrace.protocol.messages import ProtocolError
from solrace.server.common.codes import shown
from solrace.server.net.clocks import Clocks
from solrace.server.net.presence import Presence, connected_events
from solrace.server.net.supervision import Part, Supervision
from solrace.server.rules.room import COUNTDOWN, LOBBY, RACING
from solrace.server.store.store import Due

log = logging.getLogger("solrace.server")

#: a claimed deadline whose handler failed is due again this long after (ms); if Redis cannot
#: even be told so, its lease (store.DEADLINE_LEASE_MS) runs out and it is due then
DEADLINE_RETRY_MS = 1000


class Janitor(Part):
    """One task per process: beats, fires due deadlines, counts dead processes out."""

    #: seconds between janitor rounds (deadlines are due to this precision)
    JANITOR_S = 0.25

    def __init__(
        self,
        sv: Supervision,
        presence: Presence,
        clocks: Clocks,
        arena_end: Callable[[str], Coroutine[Any, Any, Any]] | None = None,
    ) -> None:
        super().__init__(sv)
        #: an arena's end (deadline `arena|ID`): server/race/arena.py's
        self.arena_end = arena_end
        self.presence = presence
        self.clocks = clocks
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.store.heartbeat(self.proc_id, self.service.clock())
        self.task = asyncio.create_task(self._janitor())
        if self.leases is not None:
            self.leases.start(lambda: self.hub.rooms.keys(), self.limits.heartbeat)

    async def _janitor(self) -> None:
        """Deadlines in Redis (grace periods, race clocks) fire here, in whichever process is
        alive; a process that stopped beating has its connections counted out by another."""
        last_beat = 0.0
        while not self.sv.closing:  # not only the cancel: see Leases._renew
            try:
                await asyncio.sleep(self.JANITOR_S)
                now = self.service.clock()
                if time.monotonic() - last_beat >= self.limits.heartbeat:
                    last_beat = time.monotonic()
                    if await self.store.heartbeat(self.proc_id, now):
                        await self._count_in()  # counted out while paused: we are back
                    dead_after = int(self.limits.heartbeat * 5 * 1000)
                    for _proc, held in await self.store.claim_dead(now, dead_after):
                        await self._count_out(held)
                for due in await self.store.claim_due(now):
                    self.spawn(self._handle(due))
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("janitor")

    def _handler(self, member: str) -> Coroutine[Any, Any, Any] | None:
        kind, _, rest = member.partition("|")
        if kind == "grace":
            code, _, seat = rest.partition("|")
            return self.presence.grace_expired(code, int(seat))
        if kind == "tick":
            return self.clocks.tick(rest)
        if kind == "record":
            code, _, round_ = rest.partition("|")
            return self.service.owed_record(code, int(round_))
        if kind == "arena" and self.arena_end is not None:
            return self.arena_end(rest)
        return None

    async def _handle(self, due: Due) -> None:
        """Run a claimed deadline's handler, then settle it: removed once the handler ran, due
        again DEADLINE_RETRY_MS later when it failed (the room's master failing over). Every
        handler is idempotent (a clock ticks only what is due; a grace period resigns a seat
        still racing and unheld; a record is written once), so firing twice is harmless."""
        again: int | None = None
        try:
            handler = self._handler(due.member)
            if handler is not None:
                await handler
        except Exception:
            log.warning(
                "deadline %s failed; due again", due.member.partition("|")[0], exc_info=True
            )
            again = self.service.clock() + DEADLINE_RETRY_MS
        try:
            await self.store.settle_deadline(due, again)
        except Exception:  # its lease runs out, and it is due again then
            log.debug("deadline not settled", exc_info=True)

    async def _count_in(self) -> None:
        """Another process counted this one out (it could not beat for a while: a long pause,
        a partition) while its connections stayed open: they count in again, so no seat of
        theirs is resigned when the grace period that started ends."""
        held: dict[str, int] = {}
        for code, members in self.hub.rooms.items():
            for conn in members:
                player = conn.role == "player" and conn.seat is not None
                key = f"{code}|{conn.seat if player else 'spectators'}"
                held[key] = held.get(key, 0) + 1
        log.warning(  # the codes are not logged: a private room's code is its link's secret
            "this process was counted out; its connections count in again (%d rooms)",
            len({k.partition("|")[0] for k in held}),
        )
        await self.store.reset_connections(self.proc_id, held)
        for key, count in held.items():
            code, _, field = key.partition("|")
            if field == "spectators":
                await self.store.presence(code, field, count)
            else:
                on, off = connected_events(int(field), self.service.clock())
                await self.store.presence(code, field, count, on, off)
        for code in {key.partition("|")[0] for key in held}:
            await self.presence.keep_lobby(
                code
            )  # shortened as a dead process's idle room: a day again

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
            on, off = connected_events(seat, now)
            left, _ = await self.store.presence(code, field, -count, on, off)
            if left == 0:
                await self.store.add_deadline(
                    f"grace|{code}|{seat}", now + int(self.limits.grace * 1000)
                )
        self.spawn(self._orphaned({key.partition("|")[0] for key, c in held.items() if c > 0}))

    async def _orphaned(self, codes: set[str]) -> None:
        """The rooms a dead process served get the lifetime their last connection leaving would
        have given them (its unbind never ran): one in its lobby lives `lobby_ttl` with nobody
        connected, a finished one its finished lifetime, instead of the day an active room
        keeps; a racing one gets its grace periods, so a race nobody is connected to ends
        (and is then kept as a finished room), and its clock's deadline again (the dead
        process's local timer died with it; its deadline in Redis may never have been stored):
        the race's end (its time limit, or the server's longest race) fires whatever happened to
        the grace periods. A room someone is connected to is left alone."""
        for code in sorted(codes):
            try:
                if any(n > 0 for n in (await self.store.connections(code)).values()):
                    continue
                room = (await self.service.load(code)).room
                if room.state in (COUNTDOWN, RACING):
                    await self.clocks.absent_grace(room)
                    clock = room.doc["starts_at" if room.state == COUNTDOWN else "ends_at"]
                    if clock:  # the one pending stays (a sooner one, set by the room's owner)
                        await self.store.add_deadline(f"tick|{code}", clock + 500, keep=True)
                    continue
                lobby = room.state == LOBBY
                idle_ms = int(self.limits.lobby_ttl * 1000) if lobby else self.store.finished_ttl_ms
                await self.store.shorten_idle(code, len(room.doc["seats"]), idle_ms)
            except ProtocolError:
                pass  # the room is gone already
            except Exception:
                log.warning("lifetime of %s not shortened", shown(code), exc_info=True)

    async def close(self) -> None:
        """After the closing flag is set: the janitor stopped, the leases let go, this process
        out of the registry."""
        if self.task:
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task
        if self.leases is not None:
            await self.leases.close()
        with contextlib.suppress(Exception):
            await self.store.retire(self.proc_id)
