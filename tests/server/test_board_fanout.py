"""Boards cost a view, an encoding and a pub/sub message per move: the server sends them only
while someone watches. A spectator who arrives mid-race still sees every board from then on
(its snapshot has the boards so far), on this process or another one."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis
from helpers.race import current_view, play, start_race, until
from helpers.servers import serving
from helpers.views import ELSEWHERE
from solrace.server.store.scripts import folding


class ChannelTap:
    """Every message Redis publishes on a room's channel, as any server process would get it.

    It lists itself among the room's listening processes with the store's own script, as a
    process does when it subscribes (the store publishes a move only when another process
    listens; the lease holder's append reads who listens from the room's fence)."""

    def __init__(self, redis_url: str, channel: str) -> None:
        self.redis = aioredis.from_url(redis_url)
        self.pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        self.channel = channel
        self.here = channel.removesuffix(":pub") + ":here"
        self.fence = channel.removesuffix(":pub") + ":fence"
        self.list = self.redis.register_script(folding("here", 1000, 60_000))
        self.seen: list[bytes] = []

    async def __aenter__(self) -> ChannelTap:
        await self.list(keys=[self.here, self.fence], args=["tap00000", 1, 60_000])
        await self.pubsub.subscribe(self.channel)
        self.task = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        while True:
            msg = await self.pubsub.get_message(timeout=1.0)
            if msg and msg["type"] == "message":
                self.seen.append(msg["data"])

    def boards(self) -> list[bytes]:
        return [d for d in self.seen if d[:1] == b"b"]

    def events(self) -> list[bytes]:
        return [d for d in self.seen if d[:1] == b"e"]

    async def settle(self, events: int) -> None:
        await until(lambda: len(self.events()) >= events, f"{events} events published")

    async def __aexit__(self, *exc: object) -> None:
        self.task.cancel()
        await self.list(keys=[self.here, self.fence], args=["tap00000", 0, 60_000])
        await self.pubsub.aclose()
        await self.redis.aclose()


async def test_no_board_without_spectators_and_boards_for_one_who_joins_mid_race(
    shared_server, wire, redis_url
) -> None:
    key_prefix = shared_server.prefix
    (a, b), _, code, _ = await start_race(shared_server.ws_url, wire)
    channel = f"{key_prefix}room:{{{code}}}:pub"
    async with ChannelTap(redis_url, channel) as tap:
        acks = await play(a, 4)
        await play(b, 2)
        await tap.settle(6)  # six progress events went out...
        assert tap.boards() == []  # ...and not one board: nobody watches

        eve = await wire(shared_server.ws_url, source=ELSEWHERE)
        j = await eve.request({"type": "spectate", "room": code})
        boards = j["snapshot"]["boards"]
        assert boards["0"] == acks[-1]["view"] and boards["1"]["moves"] == 2
        # the very next moves reach the new spectator as boards (per tick: a seat's latest)
        more = await play(a, 2)
        got = await eve.wait_for(
            lambda x: x["type"] == "board" and x["seat"] == 0 and x["moves"] == more[-1]["n"]
        )
        assert got["view"] == more[-1]["view"]
        assert len(tap.boards()) >= 2

        await eve.close()
        conn_key = f"{key_prefix}room:{{{code}}}:conn"

        async def nobody_watches() -> bool:
            return int(await tap.redis.hget(conn_key, "spectators") or 0) == 0

        await until(nobody_watches, "the spectator's presence counted out")
        before = len(tap.boards())
        events = len(tap.events())
        await play(b, 3)
        await tap.settle(events + 3)
        assert len(tap.boards()) == before  # nobody watches again: no more boards


async def test_a_spectator_on_another_process_gets_the_first_board(
    redis_url, key_prefix, wire
) -> None:
    """The mover's process has never seen a spectator; the store's count makes it send the board."""
    async with serving(redis_url, key_prefix, count=2) as (sa, sb):
        (a,), _, code, _ = await start_race(sa.ws_url, wire, players=1)
        await play(a, 3)
        eve = await wire(sb.ws_url, source=ELSEWHERE)
        j = await eve.request({"type": "spectate", "room": code})
        assert j["snapshot"]["boards"]["0"] == current_view(a)
        ack = (await play(a, 1))[0]
        got = await eve.wait_for(lambda x: x["type"] == "board" and x["moves"] == ack["n"])
        assert got["view"] == ack["view"]
        ack = (await play(a, 1))[0]
        got = await eve.wait_for(lambda x: x["type"] == "board" and x["moves"] == ack["n"])
        assert got["view"] == ack["view"]
