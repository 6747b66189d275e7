"""Who is connected to a room (per seat, and its spectators), the `connected` events when a
count crosses zero, and the lifetimes that follow a room's idleness."""

from __future__ import annotations

from typing import Any

from solrace.protocol.messages import encode
from solrace.server.store.base import ACTIVE_TTL_MS, ScriptArg, StoreBase, as_text
from solrace.server.store.scripts import folding


class Presence(StoreBase):
    """Connection counts per room, and the idle room's shorter lifetime."""

    def _init_presence(self) -> None:
        self._presence = self._script(folding("presence", self.max_events, ACTIVE_TTL_MS))
        self._keep = self._script(folding("keep", self.max_events, ACTIVE_TTL_MS))
        self._shorten = self._script(folding("shorten", self.max_events, ACTIVE_TTL_MS))

    async def presence(
        self,
        code: str,
        field: str,
        delta: int,
        on_event: dict[str, Any] | None = None,
        off_event: dict[str, Any] | None = None,
        *,
        always: bool = False,
    ) -> tuple[int, int]:
        """Count a connection in or out; emit on_event/off_event when the count crosses zero
        (or, with `always`, on every call: a delta of 0 then announces the count as it is)."""
        keys = [
            self.key(code, "conn"),
            self.key(code, "events"),
            self.key(code, "fence"),
        ]
        args: list[ScriptArg] = [
            field,
            delta,
            self.channel(code),
            self.max_events,
            encode(on_event) if on_event else "",
            encode(off_event) if off_event else "",
            ACTIVE_TTL_MS,
            self.origin,
            "1" if always else "0",
        ]
        out = await self._presence(keys=keys, args=args)
        after, n = int(out[0]), int(out[1])
        event = off_event if after == 0 else on_event
        if n and event is not None:
            self._fan_event(code, n, event)
        return after, n

    async def keep_lobby(self, code: str, seats: int, idle_ms: int) -> int:
        """A room in its lobby: its keys last `idle_ms` while nobody is connected to it, a day
        again once someone is (a room made and left costs Redis minutes, not a day).
        Returns the lifetime set (0: left as it was, -2: the room is gone)."""
        return int(
            await self._keep(keys=self._idle_keys(code, seats), args=[idle_ms, ACTIVE_TTL_MS])
        )

    async def shorten_idle(self, code: str, seats: int, idle_ms: int) -> int:
        """A room nobody is connected to: none of its keys lives longer than `idle_ms` (a
        room whose process died keeps no day's lifetime that no unbind shortened). Returns
        the number of keys shortened, -1 when someone is connected, -2 when the room is gone."""
        return int(await self._shorten(keys=self._idle_keys(code, seats), args=[idle_ms]))

    def _idle_keys(self, code: str, seats: int) -> list[str]:
        """The room's keys whose lifetime follows its idleness: `conn` first, `meta` second,
        the fence fifth (the scripts find the lease holder's tail by it)."""
        keys = [self.key(code, "conn"), *self.room_keys(code, seats)[:3], self.key(code, "fence")]
        return [*keys, self.key(code, "here"), *(self.log_key(code, s) for s in range(seats))]

    async def connections(self, code: str) -> dict[str, int]:
        raw = await self.redis.hgetall(self.key(code, "conn"))
        return {as_text(k): int(v) for k, v in raw.items()}
