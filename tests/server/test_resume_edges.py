"""Resuming with a `last_event` the room never had, and resumes with tokens that hold no seat.

A `last_event` ahead of the room (a client from before a Redis restart, or a forged number),
negative, or past any number the server could reach is answered with a full snapshot: the
connection then gets every later event. A bad token is refused before the room is loaded.
"""

from __future__ import annotations

import urllib.request

import pytest
from helpers.race import play, reached, start_race
from helpers.timing import scaled

ODD_LAST_EVENTS = [10**6, -1, -(2**63), 2**63 - 1, 2**64 - 1]


@pytest.mark.parametrize("last_event", ODD_LAST_EVENTS)
async def test_resume_with_a_last_event_the_room_never_had_resyncs(
    shared_server, wire, last_event: int
) -> None:
    (a, b), (ta, _tb), code, _ = await start_race(shared_server.ws_url, wire)
    await play(a, 1)
    a2 = await wire(shared_server.ws_url)
    j = await a2.request({"type": "resume", "room": code, "token": ta, "last_event": last_event})
    assert j["type"] == "joined", j
    snap = j["snapshot"]  # a full resync, not a replay from a number the room never reached
    assert snap["you"]["view"]["moves"] == 1
    acks = await play(b, 1)  # a later event reaches the resumed connection
    await a2.wait_for(lambda x: reached(x, 1, 1))
    assert acks[0]["event"] > snap["event"]
    assert (await play(a2, 1))[0]["n"] == 2  # and the seat plays on


@pytest.mark.parametrize("last_event", ODD_LAST_EVENTS)
async def test_spectate_with_a_last_event_the_room_never_had_resyncs(
    shared_server, wire, last_event: int
) -> None:
    (a, _b), _, code, _ = await start_race(shared_server.ws_url, wire)
    eve = await wire(shared_server.ws_url)
    j = await eve.request({"type": "spectate", "room": code, "last_event": last_event})
    assert j["type"] == "joined" and j["snapshot"]["event"] >= 1, j
    await play(a, 1)
    await eve.wait_for(lambda x: reached(x, 0, 1))


def room_loads(url: str) -> float:
    """The server's count of full room loads (document, logs and replay) from its /metrics."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=scaled(10)) as resp:
        text = resp.read().decode()
    for line in text.splitlines():
        if line.startswith("solrace_room_loads_total "):
            return float(line.split()[1])
    raise AssertionError("no solrace_room_loads_total in /metrics")


async def test_a_bad_token_resume_does_not_load_the_room(race_server, wire) -> None:
    (a, _b), (ta, _tb), code, _ = await start_race(race_server.ws_url, wire)
    await play(a, 3)
    c = await wire(race_server.ws_url)
    before = room_loads(race_server.url)
    forged = 20
    for i in range(forged):
        bad = await c.request({"type": "resume", "room": code, "token": f"forged-{i}"})
        assert bad["code"] == "bad_token"
    # each used to load the whole room under its lock; now the token check alone refuses them
    # (the room's clock may load it once meanwhile: the count is not asked to stay still)
    assert room_loads(race_server.url) - before < forged
    # nothing changed for the connection: it holds no seat
    assert (await c.request({"type": "resign"}))["code"] == "not_player"
    good = await c.request({"type": "resume", "room": code, "token": ta})
    assert good["seat"] == 0 and good["snapshot"]["you"]["view"]["moves"] == 3
