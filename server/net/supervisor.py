"""Room supervision: what happens to rooms between messages.

* presence: a connection bound to a room counts in (a seat's `connected` event when it
  crosses zero), and out when it goes; a racing seat with nobody left gets a grace deadline;
* timers: a countdown or a time limit arms a local timer, backed by a deadline in Redis that
  any live process fires (`deadlines`), so a process that dies loses none;
* the janitor: this process's heartbeat, due deadlines (grace periods, race clocks), and the
  presence of processes that stopped beating, counted out by whoever notices first.

The fan-out (`fanout.Hub`) tells it every room event first (`on_room_event`), which is how a
countdown or a start stored by another process arms this process's timers too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Coroutine
from typing import Any

from solrace.protocol.messages import ProtocolError
from solrace.server.common.codes import shown
from solrace.server.net.conn import Conn, Limits
from solrace.server.net.fanout import Hub
from solrace.server.race.service import RECHECK_CAP_S, RECHECK_S, RoomService
from solrace.server.rules.room import COUNTDOWN, LOBBY, RACING, Room
from solrace.server.store.lease import Leases
from solrace.server.store.store import Due

log = logging.getLogger("solrace.server")

#: seconds between a spectator arriving or leaving and the room hearing the new count
WATCHERS_DEBOUNCE = 0.25
#: a claimed deadline whose handler failed is due again this long after (ms); if Redis cannot
#: even be told so, its lease (store.DEADLINE_LEASE_MS) runs out and it is due then
DEADLINE_RETRY_MS = 1000


def connected_events(seat: int, now: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The events a seat's presence emits when its count of connections crosses zero."""
    return (
        {"kind": "connected", "at": now, "seat": seat, "connected": True},
        {"kind": "connected", "at": now, "seat": seat, "connected": False},
    )


class RoomSupervisor:
    #: seconds between janitor rounds (deadlines are due to this precision)
    JANITOR_S = 0.25

    def __init__(
        self,
        service: RoomService,
        hub: Hub,
        limits: Limits,
        leases: Leases | None = None,
        proc_id: str | None = None,
    ) -> None:
        self.service = service
        self.store = service.store
        self.hub = hub
        self.limits = limits
        self.timers: dict[str, asyncio.TimerHandle] = {}
        #: rooms whose spectator count is due to be announced (one pending timer per room)
        self.watcher_timers: dict[str, asyncio.TimerHandle] = {}
        self.tasks: set[asyncio.Task[Any]] = set()
        self.proc_id = proc_id or secrets.token_hex(8)
        #: the leases of the rooms this process serves (None: no leases, no fencing)
        self.leases = leases
        self.janitor: asyncio.Task[None] | None = None
        #: set by close(): the janitor ends even if its cancellation was swallowed
        self.closing = False
        #: an arena's end (deadline `arena|ID`): server/race/arena.py's, linked by app.py
        self.arena_end: Callable[[str], Coroutine[Any, Any, Any]] | None = None

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # --- presence -------------------------------------------------------------------------

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
        self.arm_clock(code)

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
            timer = self.timers.pop(code, None)
            if timer is not None:
                timer.cancel()
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
            if role == "player" and not self.closing:
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
            if self.closing:
                return
            try:
                room = (await self.service.load(code)).room
                if room.state in (COUNTDOWN, RACING):
                    await self._absent_grace(room)
                return
            except ProtocolError:
                return
            except Exception:
                log.debug("grace of %s not set yet", shown(code), exc_info=True)
                delay = min(RECHECK_CAP_S, delay * 2)

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

    # --- clock ----------------------------------------------------------------------------

    def on_room_event(self, code: str, event: dict[str, Any]) -> None:
        """Events that set a clock (countdown, start) arm a timer; any process may fire it."""
        kind = event.get("kind")
        if kind == "kicked":
            self._unbind_kicked(code, event["seat"])
        elif kind == "countdown":
            self.arm(code, event["starts_at"])
            cached = self.service.cache.get(code)
            if cached is not None and cached.room.state not in (COUNTDOWN, RACING):
                # another process started the race: know its seats (and their addresses)
                # before its first board reaches a spectator here (`Hub.board`)
                self.spawn(self._refresh(code))
        elif kind == "start" and event.get("ends_at"):
            self.arm(code, event["ends_at"])
        elif kind in ("results", "rematch"):
            # the race is over before its clock: every race has one now (`--max-race`), and
            # a timer left armed would hold the room here for hours
            timer = self.timers.pop(code, None)
            if timer is not None:
                timer.cancel()

    def _unbind_kicked(self, code: str, seat: int) -> None:
        """The kicked seat's connections here get the `kicked` event (it is on its way to
        them), then nothing more of the room: they no longer act for the seat."""
        for conn in list(self.hub.rooms.get(code, ())):
            if conn.role == "player" and conn.seat == seat:
                self.spawn(self._unbind_if(conn, code, seat))

    async def _unbind_if(self, conn: Conn, code: str, seat: int) -> None:
        if (conn.room, conn.role, conn.seat) == (code, "player", seat):
            await self.unbind(conn)

    async def _refresh(self, code: str) -> None:
        with contextlib.suppress(Exception):
            await self.service.load(code)

    def arm_clock(self, code: str) -> None:
        """Arm the room's next clock from this process's cached copy, if it has one."""
        cached = self.service.cache.get(code)
        if cached is None or code not in self.hub.rooms:
            return  # not served here: its deadline in Redis fires wherever (the janitor)
        d = cached.room.doc
        if cached.room.state == COUNTDOWN:
            self.arm(code, d["starts_at"])
        elif cached.room.state == RACING and d["ends_at"]:
            self.arm(code, d["ends_at"])

    def arm(self, code: str, at_ms: int) -> None:
        delay = max(0.0, (at_ms - self.service.clock()) / 1000.0) + 0.01
        # the Redis deadline is the backstop: if this process dies, another one fires it
        self.spawn(self._backstop(code, at_ms + 500))
        self._arm_in(code, delay, 0)

    def _backstop_at(self, code: str, at_ms: int) -> None:
        self.spawn(self._backstop(code, at_ms + 500))

    def _arm_in(self, code: str, delay: float, attempt: int) -> None:
        old = self.timers.pop(code, None)
        if old:
            old.cancel()
        loop = asyncio.get_running_loop()
        self.timers[code] = loop.call_later(delay, lambda: self.spawn(self._fire(code, attempt)))

    async def _backstop(self, code: str, at_ms: int) -> None:
        try:
            await self.store.add_deadline(f"tick|{code}", at_ms)
        except Exception:  # the local timer still fires, and retries until Redis answers
            log.warning("clock deadline of %s not stored", shown(code), exc_info=True)

    async def _fire(self, code: str, attempt: int = 0) -> None:
        """The room's local timer: its clock is due. A failure (Redis away) arms it again
        after a backoff, so the clock fires here even if its Redis deadline was never set."""
        self.timers.pop(code, None)
        try:
            await self._clock(code)
        except Exception:
            if code in self.timers or self.closing:
                return  # armed again meanwhile
            delay = min(RECHECK_CAP_S, RECHECK_S * 2**attempt)
            log.warning("clock of %s not fired; again in %.1fs", shown(code), delay, exc_info=True)
            self._arm_in(code, delay, attempt + 1)

    async def _clock(self, code: str) -> None:
        """The room's clock is due (a countdown's end, a time limit): the rules run, the next
        clock is armed, racing seats nobody holds get their grace. Raises on a Redis failure;
        a room that is gone is done with."""
        try:
            room = await self.service.tick(code)
        except ProtocolError:
            return
        d = room.doc
        # a room not served here (its racers gone) gets no timer here, only its deadline in
        # Redis (which any process's janitor fires): a timer would hold it here for hours
        arm = self.arm if code in self.hub.rooms else self._backstop_at
        if room.state == RACING and d["ends_at"]:
            arm(code, d["ends_at"])
        elif room.state == COUNTDOWN:
            arm(code, d["starts_at"])
        if room.state in (COUNTDOWN, RACING):
            await self._absent_grace(room)

    async def _absent_grace(self, room: Room) -> None:
        """Racing seats nobody holds get a grace period from now. A seat whose connection went
        in the lobby had its grace end there, where it means nothing; without this it would
        race forever (a race with no time limit would never end). A grace period already
        running is left as it is; any process firing the room's clock may do this, so each
        seat's deadline is added once."""
        conns = await self.store.connections(room.code)
        now = self.service.clock()
        for seat in room.racing_seats():
            if conns.get(str(seat), 0) <= 0:
                await self.store.add_deadline(
                    f"grace|{room.code}|{seat}", now + int(self.limits.grace * 1000), keep=True
                )

    # --- the janitor: heartbeat, deadlines, tidying up after dead processes ---------------

    async def start(self) -> None:
        await self.store.heartbeat(self.proc_id, self.service.clock())
        self.janitor = asyncio.create_task(self._janitor())
        if self.leases is not None:
            self.leases.start(lambda: self.hub.rooms.keys(), self.limits.heartbeat)

    async def _janitor(self) -> None:
        """Deadlines in Redis (grace periods, race clocks) fire here, in whichever process is
        alive; a process that stopped beating has its connections counted out by another."""
        last_beat = 0.0
        while not self.closing:  # not only the cancel: see Leases._renew
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
            return self._grace_expired(code, int(seat))
        if kind == "tick":
            return self._clock(rest)
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
            await self.keep_lobby(code)  # shortened as a dead process's idle room: a day again

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
                    await self._absent_grace(room)
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
        self.closing = True
        for handle in [*self.timers.values(), *self.watcher_timers.values()]:
            handle.cancel()
        if self.janitor:
            self.janitor.cancel()
            with contextlib.suppress(BaseException):
                await self.janitor
        if self.leases is not None:
            await self.leases.close()
        with contextlib.suppress(Exception):
            await self.store.retire(self.proc_id)
