"""The spectator count reaches the room's players as spectators come and go (issue 12, bug 3),
once per short window however many arrive together."""

from __future__ import annotations

from solrace.protocol import messages as m


async def test_players_hear_the_spectator_count(race_server, wire) -> None:
    host = await wire(race_server.ws_url)
    created = await host.request({"type": "create", "name": "p0", "options": {"game": "manx"}})
    code = created["room"]
    fans = [await wire(race_server.ws_url) for _ in range(3)]
    for fan in fans:
        assert (await fan.request({"type": "spectate", "room": code}))["type"] == "joined"
    seen = await host.wait_for(
        lambda x: x["type"] == "event" and x["kind"] == "watchers" and x["count"] == 3
    )
    m.validate_server(seen)
    # three arrivals in one window: one announcement (or two, if the window split them)
    counts = [x["count"] for x in host.received if x.get("kind") == "watchers"]
    assert 1 <= len(counts) <= 2 and counts[-1] == 3
    for fan in fans:
        await fan.close()
    await host.wait_for(
        lambda x: x["type"] == "event" and x["kind"] == "watchers" and x["count"] == 0
    )
