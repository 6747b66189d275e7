"""Race clocks: a countdown or a time limit arms a local timer, backed by a deadline in Redis
that any live process fires (the janitor), so a process that dies loses none; when a clock
fires, racing seats nobody holds get their grace periods."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from solrace.protocol.messages import ProtocolError
from solrace.server.common.codes import shown
from solrace.server.net.supervision import Part, Supervision
from solrace.server.race.service import RECHECK_CAP_S, RECHECK_S
from solrace.server.rules.room import COUNTDOWN, RACING, Room

log = logging.getLogger("solrace.server")


class Clocks(Part):
    """The rooms' local timers and their Redis deadlines."""

    def __init__(self, sv: Supervision) -> None:
        super().__init__(sv)
        self.timers: dict[str, asyncio.TimerHandle] = {}

    def on_room_event(self, code: str, event: dict[str, Any]) -> None:
        """Events that set a clock (countdown, start) arm a timer; any process may fire it."""
        kind = event.get("kind")
        if kind == "countdown":
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
            self.disarm(code)

    def disarm(self, code: str) -> None:
        """The room's local timer, if any, cancelled (its deadline in Redis stays)."""
        timer = self.timers.pop(code, None)
        if timer is not None:
            timer.cancel()

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
            await self.tick(code)
        except Exception:
            if code in self.timers or self.sv.closing:
                return  # armed again meanwhile
            delay = min(RECHECK_CAP_S, RECHECK_S * 2**attempt)
            log.warning("clock of %s not fired; again in %.1fs", shown(code), delay, exc_info=True)
            self._arm_in(code, delay, attempt + 1)

    async def tick(self, code: str) -> None:
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
            await self.absent_grace(room)

    async def absent_grace(self, room: Room) -> None:
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
