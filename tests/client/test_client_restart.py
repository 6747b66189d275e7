"""Auto-resume across a server restart, and the rematch / kick / leave flow."""

from __future__ import annotations

import asyncio

import pytest
from helpers.timing import scaled
from solrace.client import Client, ErrorReply, Reconnected
from solrace.client.moves import legal_moves


async def test_auto_resume_survives_server_restart(race_server):
    url = race_server.ws_url
    # the reconnect's tries (about 40 s of backoff) stretched as the hang bounds are
    tries = int(scaled(16))
    a = Client(url, auto_resume=True, reconnect_tries=tries)
    b = Client(url, auto_resume=True, reconnect_tries=tries)
    await a.connect()
    await b.connect()
    try:
        joined = await a.create("ann", {"game": "klondike", "countdown": 1})
        await b.join(joined.room, "bob")
        await a.ready()
        await b.ready()
        await a.start()
        await a.wait_board()
        await b.wait_board()
        await a.move(legal_moves(a.room.view)[0], n=1)
        await asyncio.to_thread(race_server.restart)
        await a.wait_for(lambda m: isinstance(m, Reconnected), timeout=scaled(30))
        await b.wait_for(lambda m: isinstance(m, Reconnected), timeout=scaled(30))
        # the seat, its board and the room state all come back from Redis
        assert a.room.state == "racing" and a.room.view["moves"] == 1
        ack = await a.move(legal_moves(a.room.view)[0], n=2)
        assert ack.n == 2
        await b.wait_until(lambda: b.room.players[0]["moves"] == 2, scaled(10))  # event or snapshot
    finally:
        await a.close()
        await b.close()


async def test_rematch_kick_and_leave(server_url):
    a, b, c = Client(server_url), Client(server_url), Client(server_url)
    for x in (a, b, c):
        await x.connect()
    try:
        joined = await a.create("ann", {"game": "puttputt", "countdown": 1})
        await b.join(joined.room, "bob")
        jc = await c.join(joined.room, "cy")
        await a.kick(jc.seat)
        await a.wait_until(lambda: jc.seat not in a.room.players, scaled(5))
        assert jc.seat not in a.room.players
        with pytest.raises(ErrorReply):
            await c.ready()
        await a.ready()
        await b.ready()
        await a.start()
        await a.wait_board()
        await b.wait_board()
        await a.resign()
        await b.resign()
        await a.wait_until(lambda: a.room.state == "finished", scaled(10))
        assert a.room.state == "finished" and len(a.room.results["ranking"]) == 2
        first_commitment = a.room.commitment
        await a.rematch()
        await b.wait_until(lambda: b.room.state == "lobby", scaled(5))
        assert b.room.state == "lobby" and b.room.view is None
        assert not any(p["ready"] for p in b.room.players.values())
        await a.ready()
        await b.ready()
        await a.start()
        await b.wait_board()
        assert b.room.view["moves"] == 0 and a.room.commitment != first_commitment
        await b.leave()
        await a.wait_until(
            lambda: a.room.players.get(1, {}).get("status", "left") == "left", scaled(5)
        )
    finally:
        for x in (a, b, c):
            await x.close()
