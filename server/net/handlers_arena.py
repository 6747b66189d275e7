"""Arena events' requests: each delegated to the arena service (server/race/arena.py), its
view of the arena the reply."""

from __future__ import annotations

from typing import Any

from solrace.protocol import messages as m
from solrace.protocol.messages import ProtocolError
from solrace.server.net.conn import Conn
from solrace.server.net.handlers import Handlers
from solrace.server.race.arena import ArenaService


class ArenaHandlers(Handlers):
    """Create, join, pause and watch an arena."""

    def _arenas(self) -> ArenaService:
        if self.arena is None:
            raise ProtocolError("not_allowed", "this server has no arenas")
        return self.arena

    async def on_arena_create(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        view = await self._arenas().create(
            msg["game"],
            msg["minutes"],
            msg.get("max_players", 4),
            msg.get("title") or "",
            conn.player,
            msg.get("name") or "host",
            conn.addr,
            exempt=self.guard.exempt(conn.ip),
        )
        await self.send(conn, m.with_ref({"type": "arena", "arena": view}, ref))

    async def on_arena_join(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        view = await self._arenas().join(conn, msg["arena"], msg["name"])
        await self.send(conn, m.with_ref({"type": "arena", "arena": view}, ref))

    async def on_arena_leave(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        view = await self._arenas().leave(conn, msg["arena"])
        await self.send(conn, m.with_ref({"type": "arena", "arena": view}, ref))

    async def on_arena_watch(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        view = await self._arenas().watch(conn, msg["arena"])
        await self.send(conn, m.with_ref({"type": "arena", "arena": view}, ref))
