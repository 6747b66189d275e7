"""Finding a race outside a room: the lobby's pages and the daily races' attempts."""

from __future__ import annotations

from typing import Any

from solrace.protocol.names import clean_name
from solrace.server.league.daily import ROOM_OPTIONS as DAILY_OPTIONS
from solrace.server.net.conn import Conn
from solrace.server.net.handlers import Handlers, proposed_code


class LobbyHandlers(Handlers):
    """The lobby and the dailies."""

    async def on_lobby(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        frame = await self.service.lobby_frame(msg.get("after", ""), ref)
        self.hub.flush(conn)
        await conn.ws.send(frame)

    async def on_daily(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        """A daily attempt: a solo room dealt the day's deal, racing at once (server/league/daily.py).
        No host token goes out: nobody may reconfigure, restart or rematch an attempt."""
        game = self.dailies.check_request(msg)
        name = clean_name(msg["name"])
        practice = bool(msg.get("practice"))
        options = {"game": game, **DAILY_OPTIONS}
        code = proposed_code({**msg, "options": options})  # checked before an entry is made
        rule, info = await self.dailies.begin(game, name, conn.player, practice, msg.get("date"))
        out = await self.service.create(
            name,
            options,
            True,
            conn.player,
            conn.addr,
            conn.bot,
            prepare=rule,
            code=code,
        )
        conn.seated.add(out["room"])
        await self.dailies.started(out["room"], out["doc"])
        await self._joined(
            conn, ref, out["room"], "player", out["seat"], None, token=out["token"], daily=info
        )
