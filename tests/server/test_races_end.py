"""Races always end: a seat gone since the lobby is counted out, and a stored move whose
follow-up failed still finishes its race."""

from __future__ import annotations

import asyncio

from helpers.servers import serving

GRACE = 1.0


async def test_seat_gone_since_the_lobby_is_counted_out_after_the_start(
    redis_url, key_prefix, wire
) -> None:
    async with serving(redis_url, key_prefix, extra_args=["--grace", str(GRACE)]) as (srv,):
        host = await wire(srv.ws_url)
        created = await host.request(
            {"type": "create", "name": "host", "options": {"game": "puttputt", "countdown": 0}}
        )
        b = await wire(srv.ws_url)
        assert (await b.request({"type": "join", "room": created["room"], "name": "b"}))[
            "seat"
        ] == 1
        await b.close()
        await host.wait_event("connected", seat=1, connected=False)
        # the grace deadline set at the disconnect comes and goes while the room is a lobby
        await asyncio.sleep(GRACE * 3)
        started = await host.request({"type": "start", "host_token": created["host_token"]})
        assert started["type"] == "ok", started
        await host.wait_event("start")
        assert (await host.request({"type": "resign"}))["type"] == "ok"
        results = await host.wait_event("results", timeout=20)
        by_seat = {row["seat"]: row["status"] for row in results["ranking"]}
        assert by_seat == {0: "resigned", 1: "resigned"}
