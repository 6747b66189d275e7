"""Quick match's tickets, and the operators' requests."""

from __future__ import annotations

from typing import Any

from solrace.protocol import messages as m
from solrace.protocol.messages import ProtocolError
from solrace.server.net.conn import Conn
from solrace.server.net.fanout import write
from solrace.server.net.handlers import Handlers


class OpsHandlers(Handlers):
    """Quick match and admin."""

    async def on_quick(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        """Quick match: a ticket in the game's queue; `matched` follows (server/race/quick.py)."""
        if self.quick is None:
            raise ProtocolError("not_allowed", "this server has no quick match")
        rated = msg.get("rated", True)
        if rated:
            self.guard.rated_check(conn.limit_key, 1)  # spent when matched
        queued = await self.quick.ask(
            conn,
            msg["game"],
            rated,
            msg["name"],
            conn.player,
            conn.addr,
            conn.bot,
            lambda out: write(conn, out),
            conn.limit_key,
        )
        await self.send(conn, m.with_ref({"type": "queued", **queued}, ref))

    async def on_quick_cancel(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        if self.quick is None or not await self.quick.cancel(conn):
            raise ProtocolError(
                "bad_state", "no ticket of this connection is waiting (none, or matched already)"
            )
        await self.send(conn, m.ok(ref))

    async def on_admin(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        """An operator's request (server/net/admin.py): refused unless the server has an admin
        token, the connection comes from an admin network and the token is right."""
        answer = await self.admin.handle(conn.ip, msg)
        await self.send(conn, m.with_ref({"type": "admin", "op": msg["op"], **answer}, ref))
