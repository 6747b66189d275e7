"""Presence: a connection bound to a room counts in (a seat's `connected` event when it crosses
zero), and out when it goes; a racing seat with nobody left gets a grace deadline, and counts
as resigned when it expires; spectators are counted and announced (debounced)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from solrace.protocol.messages import ProtocolError
from solrace.server.common.codes import shown
from solrace.server.net.clocks import Clocks
from solrace.server.net.conn import Conn
from solrace.server.net.supervision import Part, Supervision
from solrace.server.race.service import RECHECK_CAP_S, RECHECK_S
from solrace.server.rules.room import COUNTDOWN, LOBBY, RACING

log = logging.getLogger("solrace.server")

#: seconds between a spectator arriving or leaving and the room hearing the new count
WATCHERS_DEBOUNCE = 0.25


def connected_events(seat: int, now: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The events a seat's presence emits when its count of connections crosses zero."""
    return (
        {"kind": "connected", "at": now, "seat": seat, "connected": True},
        {"kind": "connected", "at": now, "seat": seat, "connected": False},
    )


class Presence(Part):
    """Binding connections to rooms, and what follows from who is connected."""

    def __init__(self, sv: Supervision, clocks: Clocks) -> None:
        super().__init__(sv)
        self.clocks = clocks
        #: rooms whose spectator count is due to be announced (one pending timer per room)
        self.watcher_timers: dict[str, asyncio.TimerHandle] = {}

    async def bind(self, conn: Conn, code: str, role: str, seat: int | None) -> None:
        """The connection joins a room here: fan-out membership, then presence in Redis."""
        if conn.room is not None:
            await self.unbind(conn)
        conn.room, conn.role, conn.seat = code, role, seat
        if self.hub.add(code, conn):
            await self.store.subscribe(code)
            await self._lease(code)
        if role == "player" and seat is not None:
            on, off = connected_events(seat, self.service.clock())
            await self.store.presence(code, str(seat), +1, on, off)
            await self.store.note_connection(self.proc_id, code, str(seat), +1)
        else:
            await self.store.presence(code, "spectators", +1)
            await self.store.note_connection(self.proc_id, code, "spectators", +1)
            self.announce_watchers(code)
        self.clocks.arm_clock(code)

    async def keep_lobby(self, code: str) -> None:
        """After a connection was bound and answered (the room is cached then: a resume reads
        only the room's document before), a room in its lobby lives a day again."""
        await self._keep_lobby(code, self._lobby_seats(code))

    def _lobby_seats(self, code: str) -> int | None:
        """The room's seat count when this process has it cached in its lobby, else None."""
        cached = self.service.cache.get(code)
        if cached is None or cached.room.state != LOBBY:
            return None
        return len(cached.room.doc["seats"])

    async def _keep_lobby(self, code: str, seats: int | None) -> None:
        """A room in its lobby lives `lobby_ttl` once nobody is connected (store.keep_lobby);
        a failure only leaves it the longer lifetime."""
        if seats is None:
            return
        try:
            await self.store.keep_lobby(code, seats, int(self.limits.lobby_ttl * 1000))
        except Exception:
            log.debug("lifetime of %s not set", shown(code), exc_info=True)

    async def unbind(self, conn: Conn) -> None:
        """The connection leaves its room: presence down (and a grace timer for a racing seat)."""
        code, role, seat = conn.room, conn.role, conn.seat
        if code is None:
            return
        conn.room = conn.role = conn.seat = None
        lobby_seats = self._lobby_seats(code)
        if self.hub.remove(code, conn):
            self.service.forget(code)
            # no longer served here: its clock's deadline in Redis fires in whichever process
            self.clocks.disarm(code)
            with contextlib.suppress(Exception):
                await self.store.unsubscribe(code)
            if self.leases is not None:
                with contextlib.suppress(Exception):
                    await self.leases.release(code)
        try:
            if role == "player" and seat is not None:
                now = self.service.clock()
                on, off = connected_events(seat, now)
                count, _ = await self.store.presence(code, str(seat), -1, on, off)
                await self.store.note_connection(self.proc_id, code, str(seat), -1)
                if count == 0:
                    await self.store.add_deadline(
                        f"grace|{code}|{seat}", now + int(self.limits.grace * 1000)
                    )
            elif role == "spectator":
                await self.store.presence(code, "spectators", -1)
                await self.store.note_connection(self.proc_id, code, "spectators", -1)
                self.announce_watchers(code)
        except Exception:  # Redis away (a failover, a shutdown)
            log.debug("presence update failed", exc_info=True)
            if role == "player" and not self.sv.closing:
                # the seat's grace deadline may not be set: look again once Redis is back
                self.spawn(self._grace_later(code))
            return
        await self._keep_lobby(code, lobby_seats)

    def announce_watchers(self, code: str) -> None:
        """Tell the room how many watch, once per WATCHERS_DEBOUNCE however many come and go:
        a crowd arriving costs the room one `watchers` event, not one per spectator."""
        if code not in self.watcher_timers:
            self.watcher_timers[code] = asyncio.get_running_loop().call_later(
                WATCHERS_DEBOUNCE, lambda: self.spawn(self._send_watchers(code))
            )

    async def _send_watchers(self, code: str) -> None:
        self.watcher_timers.pop(code, None)
        try:
            count = (await self.store.connections(code)).get("spectators", 0)
            event = {"kind": "watchers", "at": self.service.clock(), "count": count}
            await self.store.presence(code, "spectators", 0, event, event, always=True)
        except Exception:  # Redis away: the next arrival or departure announces the count
            log.debug("watchers count not announced for %s", shown(code), exc_info=True)

    async def _lease(self, code: str) -> None:
        """Serve the room as its owner if its lease is free; a failure only means this process
        writes without the lease (the renewal retries every beat)."""
        if self.leases is None:
            return
        try:
            await self.leases.acquire(code)
        except Exception:
            log.warning("lease of %s not taken", shown(code), exc_info=True)

    async def _grace_later(self, code: str) -> None:
        """A seat left while Redis was away, so its grace deadline may be missing: once Redis
        answers, every racing seat nobody holds gets one (`_absent_grace`; one already set
        stays), so the race still ends. Tried with backoff for a while, then the room's clock
        deadline (if it has a time limit) or the next process to find it orphaned takes over."""
        delay = RECHECK_S
        for _ in range(8):
            await asyncio.sleep(delay)
            if self.sv.closing:
                return
            try:
                room = (await self.service.load(code)).room
                if room.state in (COUNTDOWN, RACING):
                    await self.clocks.absent_grace(room)
                return
            except ProtocolError:
                return
            except Exception:
                log.debug("grace of %s not set yet", shown(code), exc_info=True)
                delay = min(RECHECK_CAP_S, delay * 2)

    async def grace_expired(self, code: str, seat: int) -> None:
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

    def unbind_kicked(self, code: str, seat: int) -> None:
        """The kicked seat's connections here get the `kicked` event (it is on its way to
        them), then nothing more of the room: they no longer act for the seat."""
        for conn in list(self.hub.rooms.get(code, ())):
            if conn.role == "player" and conn.seat == seat:
                self.spawn(self._unbind_if(conn, code, seat))

    async def _unbind_if(self, conn: Conn, code: str, seat: int) -> None:
        if (conn.room, conn.role, conn.seat) == (code, "player", seat):
            await self.unbind(conn)
