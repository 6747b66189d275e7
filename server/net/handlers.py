"""The message handlers' common ground: the parts a handler uses, the reply, joining a room
(bind, then the `joined` reply), and the table the transport dispatches from.

A handler is an `on_<type>` method of one of the groups (`handlers_room`: a room's commands;
`handlers_lobby`: the lobby and dailies; `handlers_ops`: quick match and the operators'
requests; `handlers_arena`: arena events); `Handlers.table` maps each message type to its bound method, and the transport
(server/net/transport.py) builds one dict of them all when it is made. The checks before a
handler runs (hello, rate limits, the guard's budget, slow requests in their own task) are the
transport's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from solrace.protocol import messages as m
from solrace.protocol.messages import ProtocolError
from solrace.server.common.codes import (
    CODE_ALPHABET,
    CODE_LENGTH,
    PRIVATE_CODE_LENGTH,
    normalize_code,
    valid_new_code,
)
from solrace.server.league.daily import Dailies
from solrace.server.net.admin import Admin
from solrace.server.net.conn import Bucket, Conn, Limits
from solrace.server.net.fanout import Hub, send
from solrace.server.net.guard import Guard
from solrace.server.net.supervisor import RoomSupervisor
from solrace.server.race.arena import ArenaService
from solrace.server.race.quick import QuickMatch
from solrace.server.race.service import RoomService

#: a message's handler: (the connection, the checked message, its `ref`)
Handler = Callable[[Conn, dict[str, Any], int | None], Awaitable[None]]


async def reply(hub: Hub, conn: Conn, msg: dict[str, Any]) -> None:
    """A reply (or error): the room events its request made go out first (`Hub.flush`).
    Acks are written by `RoomHandlers._ack` instead, ahead of their move's fan-out."""
    hub.flush(conn)
    await send(conn, msg)


class Handlers:
    """One group of handlers, with the parts they use (the same ones for every group)."""

    def __init__(
        self,
        service: RoomService,
        hub: Hub,
        rooms: RoomSupervisor,
        limits: Limits,
        *,
        guard: Guard,
        dailies: Dailies,
        admin: Admin,
        quick: QuickMatch | None,
        arena: ArenaService | None = None,
    ) -> None:
        self.service = service
        self.hub = hub
        self.rooms = rooms
        self.limits = limits
        self.guard = guard
        self.dailies = dailies
        self.admin = admin
        self.quick = quick
        self.arena = arena

    def table(self) -> dict[str, Handler]:
        """This group's handlers by message type: each `on_<type>` method."""
        return {name[3:]: getattr(self, name) for name in dir(type(self)) if name.startswith("on_")}

    async def send(self, conn: Conn, msg: dict[str, Any]) -> None:
        await reply(self.hub, conn, msg)

    async def _joined(
        self,
        conn: Conn,
        ref: int | None,
        code: str,
        role: str,
        seat: int | None,
        last_event: int | None,
        **extra: Any,
    ) -> None:
        """Bind, then reply with a snapshot, or (resuming with a kept gap) with the missed events;
        a reply that fails unbinds again."""
        conn.catching_up = True  # live events wait until the reply has set where this client is
        try:
            # in a room: a racer's credits; watchers get fewer (lichess does the same)
            if role != "player":
                conn.bucket = Bucket(self.limits.spectator_burst, self.limits.spectator_rate)
            elif conn.role != "player":
                conn.bucket = Bucket(self.limits.burst, self.limits.rate)
            await self.rooms.bind(conn, code, role, seat)
            try:
                await self._joined_reply(conn, ref, code, role, seat, last_event, **extra)
            except Exception:
                # no `joined` reached the client: it must not stay bound to a room it was not
                # told of (its next move would act for a seat it does not know it holds)
                await self.rooms.unbind(conn)
                raise
        finally:
            conn.catching_up = False
        await self.hub.catch_up(conn)
        await self.rooms.keep_lobby(code)

    async def _joined_reply(
        self,
        conn: Conn,
        ref: int | None,
        code: str,
        role: str,
        seat: int | None,
        last_event: int | None,
        **extra: Any,
    ) -> None:
        """The `joined` reply of a bound connection, and what follows it."""
        reply: dict[str, Any] = {
            "type": "joined",
            "room": code,
            "role": role,
            "seat": seat,
            **extra,
        }
        m.with_ref(reply, ref)
        if last_event is not None:
            missed = await self.service.events_after(code, last_event)
            if missed is not None:
                you = (
                    await self.service.own_view(code, seat)
                    if role == "player" and seat is not None
                    else None
                )
                reply["event"] = last_event
                if role == "player":
                    reply["you"] = {"seat": seat, "view": you}
                conn.last_event = last_event
                await self.send(conn, reply)
                if role == "spectator":
                    for board in await self.service.spectator_boards(code, conn.viewer()):
                        await self.send(conn, board)
                    conn.withheld = self.service.watching_own_race(code, conn.addr_key)
                return
        snap = await self.service.snapshot(code, conn.viewer())
        conn.last_event = snap["event"]
        reply["snapshot"] = snap
        await self.send(conn, reply)
        if role == "spectator":  # a racer's own address: boards once its race is over
            conn.withheld = self.service.watching_own_race(code, conn.addr_key)

    def _player(self, conn: Conn) -> tuple[str, int]:
        if conn.room is None or conn.role != "player" or conn.seat is None:
            raise ProtocolError("not_player", "join or resume a seat first")
        return conn.room, conn.seat

    def _room_of(self, conn: Conn) -> str:
        if conn.room is None:
            raise ProtocolError("not_player", "join or create a room first")
        return conn.room


def proposed_code(msg: dict[str, Any]) -> str | None:
    """The room code a `create` (or `daily`) proposes, normalized; None when it names none.
    It must fit the room: the alphabet, and the length of a public or a private room's code
    (a private room must not get a short one: PROTOCOL.md, Room codes and links)."""
    raw = msg.get("code")
    if raw is None:
        return None
    code = normalize_code(raw)
    public = bool((msg.get("options") or {}).get("public"))
    if not valid_new_code(code, public):
        raise ProtocolError(
            "bad_message",
            f"code: {CODE_LENGTH if public else PRIVATE_CODE_LENGTH} characters of "
            f"{CODE_ALPHABET} for a {'public' if public else 'private'} room",
            field="code",
        )
    return code
