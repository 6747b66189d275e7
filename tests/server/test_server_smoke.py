"""The race_server fixture and the basic create/join/start/move path over real sockets."""

from __future__ import annotations

import json
import urllib.request


def test_healthz_and_static(race_server) -> None:
    with urllib.request.urlopen(race_server.url + "/healthz") as resp:
        assert resp.status == 200
        assert json.loads(resp.read())["ok"] is True


async def test_create_join_start_move(race_server, wire) -> None:
    host = await wire(race_server.ws_url)
    joined = await host.request(
        {"type": "create", "name": "ann", "options": {"game": "puttputt", "countdown": 0}}
    )
    assert joined["type"] == "joined" and joined["seat"] == 0
    code = joined["room"]
    bob = await wire(race_server.ws_url)
    j2 = await bob.request({"type": "join", "room": code, "name": "bob"})
    assert j2["seat"] == 1 and j2["snapshot"]["players"][1]["name"] == "bob"
    assert (await host.request({"type": "start", "host_token": joined["host_token"]}))[
        "type"
    ] == "ok"
    await host.wait_event("start")
    ack = await host.request({"type": "move", "move": "deal", "n": 1})
    assert (
        ack["type"] == "ack"
        and ack["n"] == 1
        and ack["move"] == "deal"
        and ack["status"] == "racing"
    )
    ev = await bob.wait_event("progress", seat=0)
    assert ev["moves"] == 1
