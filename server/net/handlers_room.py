"""A room's commands: create, join, spectate, resume, leave, and the racers' and host's
requests in a room (ready, configure, start, kick, rematch, end_series, move, undo, hint,
resign)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from solrace.protocol import messages as m
from solrace.protocol.messages import ProtocolError
from solrace.server.common.codes import normalize_code
from solrace.server.common.metrics import METRICS
from solrace.server.net.conn import Conn
from solrace.server.net.fanout import write
from solrace.server.net.handlers import Handlers, proposed_code
from solrace.server.solver.solving import hint


class RoomHandlers(Handlers):
    """The room commands."""

    async def on_create(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        play = msg.get("play", True)
        out = await self.service.create(
            msg["name"],
            msg.get("options"),
            play,
            conn.player,
            conn.addr,
            conn.bot,
            code=proposed_code(msg),
        )
        extra = {"host_token": out["host_token"]}
        if play:
            extra["token"] = out["token"]
            conn.seated.add(out["room"])
        await self._joined(
            conn, ref, out["room"], "player" if play else "spectator", out["seat"], None, **extra
        )

    async def on_join(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        code = normalize_code(msg["room"])
        if code in conn.seated:  # one connection must not take a room's every seat
            raise ProtocolError(
                "bad_state", "this connection has a seat in that room already; resume it"
            )
        out = await self.service.join(code, msg["name"], conn.player, conn.addr, conn.bot)
        conn.seated.add(out["room"])
        await self._joined(conn, ref, out["room"], "player", out["seat"], None, token=out["token"])

    async def on_spectate(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        room = await self.service.check_spectate(msg["room"])
        await self._joined(conn, ref, room.code, "spectator", None, msg.get("last_event"))

    async def on_resume(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        code = normalize_code(msg["room"])
        seat = await self.service.authenticate(code, msg["token"], conn.addr)
        await self._joined(conn, ref, code, "player", seat, msg.get("last_event"))

    async def on_leave(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        if conn.room is None:
            raise ProtocolError("not_player", "you are in no room")
        if conn.role == "player" and conn.seat is not None:
            await self.service.leave(conn.room, conn.seat)
            conn.seated.discard(conn.room)
        await self.rooms.unbind(conn)
        await self.send(conn, m.ok(ref))

    async def on_ready(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        code, seat = self._player(conn)
        await self.service.ready(code, seat, msg["ready"])
        await self.send(conn, m.ok(ref))

    async def on_configure(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        await self.service.configure(self._room_of(conn), msg["host_token"], msg["options"])
        await self.send(conn, m.ok(ref))

    async def on_start(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        room = await self.service.start(
            self._room_of(conn),
            msg["host_token"],
            check=lambda seats: self.guard.rated_check(conn.limit_key, seats),
        )
        if room.options.get("rated"):
            self.guard.rated_spend(conn.limit_key, len(room.seats()))
        await self.send(conn, m.ok(ref))
        self.rooms.arm(room.code, room.doc["starts_at"])

    async def on_kick(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        await self.service.kick(self._room_of(conn), msg["host_token"], msg["seat"])
        await self.send(conn, m.ok(ref))

    async def on_rematch(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        await self.service.rematch(self._room_of(conn), msg["host_token"])
        await self.send(conn, m.ok(ref))

    async def on_end_series(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        await self.service.end_series(self._room_of(conn), msg["host_token"])
        await self.send(conn, m.ok(ref))

    async def on_move(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        code, seat = self._player(conn)
        await self.service.move(code, seat, msg["move"], msg.get("n"), reply=self._ack(conn, ref))

    async def on_undo(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        code, seat = self._player(conn)
        await self.service.move(code, seat, "", msg.get("n"), undo=True, reply=self._ack(conn, ref))

    def move_now(
        self,
        conn: Conn,
        msg: dict[str, Any],
        ref: int | None,
        finished: Callable[[Coroutine[Any, Any, Any] | None], None],
    ) -> asyncio.Future[Any] | None:
        """`on_move` / `on_undo` without a task, from the connection's `data_received`
        (`RoomService.move_now`; the transport checked the connection holds a seat): the
        future of the move's store, or None when it must go the ordinary way."""
        assert conn.room is not None and conn.seat is not None
        undo = msg["type"] == "undo"
        return self.service.move_now(
            conn.room,
            conn.seat,
            "" if undo else msg["move"],
            msg.get("n"),
            undo=undo,
            reply=self._ack(conn, ref),
            finished=finished,
        )

    def _ack(self, conn: Conn, ref: int | None) -> Callable[[dict[str, Any]], None]:
        """Write the ack the moment the move is stored, ahead of the room's fan-out; it stands
        for the mover's own progress event."""

        def reply(ack: dict[str, Any]) -> None:
            self.hub.acked(conn, ack["event"])
            write(conn, m.with_ref(ack, ref))
            METRICS.acked(conn.last_seen)  # the frame was read at last_seen

        return reply

    async def on_hint(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        code, seat = self._player(conn)
        if self.service.solver is None:
            raise ProtocolError("not_allowed", "this server has no solver")
        room = (await self.service.load(code)).room
        if await self.dailies.used_today(room.doc["seed"]):
            # whoever could practise a deal of today's dailies with the solver's help would
            # race it knowing the way (the derivation keeps text seeds off them: belt and braces)
            raise ProtocolError("not_allowed", "no hints on a deal that a daily uses today")
        answer = await hint(self.service.solver, room, seat, self.service.clock())
        await self.send(conn, m.with_ref(answer, ref))

    async def on_resign(self, conn: Conn, msg: dict[str, Any], ref: int | None) -> None:
        code, seat = self._player(conn)
        await self.service.resign(code, seat)
        await self.send(conn, m.ok(ref))
