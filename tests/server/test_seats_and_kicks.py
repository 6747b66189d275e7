"""Seats per connection and per client address, and kicks that stick, over real sockets.

Clients name their address in X-Forwarded-For, which the server trusts from loopback (as it
trusts the proxy in front of it in production): so one machine can play several addresses.
"""

from __future__ import annotations

from helpers.race import current_view, play, start_race
from helpers.servers import serving
from helpers.views import putt_move


async def create(client, **options) -> dict:
    created = await client.request(
        {"type": "create", "name": "host", "options": {"game": "puttputt", **options}}
    )
    assert created["type"] == "joined", created
    return created


async def test_one_connection_takes_one_seat_of_a_room(shared_server, wire) -> None:
    url = shared_server.ws_url
    host = await wire(url)
    created = await create(host)
    code = created["room"]
    grabber = await wire(url)
    assert (await grabber.request({"type": "join", "room": code, "name": "g"}))["seat"] == 1
    again = await grabber.request({"type": "join", "room": code, "name": "g2"})
    assert again["code"] == "bad_state", again
    # nothing changed: the room has two seats and the grabber is still seat 1
    snap = (await grabber.request({"type": "resume", "room": code, "token": created["token"]}))[
        "snapshot"
    ]
    assert [p["seat"] for p in snap["players"]] == [0, 1]
    # the real player still gets a seat
    real = await wire(url)
    assert (await real.request({"type": "join", "room": code, "name": "real"}))["seat"] == 2
    # a connection that leaves its seat may take one again
    assert (await real.request({"type": "leave"}))["type"] == "ok"
    assert (await real.request({"type": "join", "room": code, "name": "real"}))["type"] == "joined"


async def test_one_address_holds_a_limited_number_of_seats(redis_url, key_prefix, wire) -> None:
    async with serving(redis_url, key_prefix, extra_args=["--seats-per-address", "2"]) as (srv,):
        host = await wire(srv.ws_url, address="203.0.113.1")
        code = (await create(host, max_players=8))["room"]
        for i in range(1, 3):
            c = await wire(srv.ws_url, address="203.0.113.7")
            assert (await c.request({"type": "join", "room": code, "name": f"s{i}"}))["seat"] == i
        third = await wire(srv.ws_url, address="203.0.113.7")
        refused = await third.request({"type": "join", "room": code, "name": "s3"})
        assert refused["code"] == "not_allowed", refused
        # only the client's own hop counts: an address it prepends is not believed
        forged = await wire(srv.ws_url, address="198.51.100.9, 203.0.113.7")
        refused = await forged.request({"type": "join", "room": code, "name": "s3"})
        assert refused["code"] == "not_allowed", refused
        other = await wire(srv.ws_url, address="203.0.113.8")
        assert (await other.request({"type": "join", "room": code, "name": "o"}))["seat"] == 3


async def test_a_kick_unbinds_the_connection_and_sticks(shared_server, wire) -> None:
    url = shared_server.ws_url
    host = await wire(url, address="192.0.2.1")
    created = await create(host)
    code = created["room"]
    bob = await wire(url, address="192.0.2.66")
    jb = await bob.request({"type": "join", "room": code, "name": "bob"})
    kick = {"type": "kick", "host_token": created["host_token"], "seat": jb["seat"]}
    assert (await host.request(kick))["type"] == "ok"
    await bob.wait_event("kicked", seat=jb["seat"])  # the kicked connection is told
    assert (await bob.request({"type": "ready", "ready": True}))["code"] == "not_player"
    refused = await bob.request({"type": "join", "room": code, "name": "bob"})
    assert refused["code"] in ("bad_state", "not_allowed"), refused
    bob2 = await wire(url, address="192.0.2.66")  # a new connection from the same address
    refused = await bob2.request({"type": "join", "room": code, "name": "bob again"})
    assert refused["code"] == "not_allowed", refused
    resumed = await bob2.request({"type": "resume", "room": code, "token": jb["token"]})
    assert resumed["code"] == "bad_token"
    carol = await wire(url, address="192.0.2.7")
    assert (await carol.request({"type": "join", "room": code, "name": "carol"}))["type"] == (
        "joined"
    )


async def test_a_kick_during_a_race_unbinds_the_racer(shared_server, wire) -> None:
    (a, b), _tokens, _code, host_token = await start_race(shared_server.ws_url, wire)
    await play(b, 1)
    assert (await a.request({"type": "kick", "host_token": host_token, "seat": 1}))["type"] == "ok"
    await b.wait_event("kicked", seat=1)
    view = current_view(b)
    refused = await b.request({"type": "move", "move": putt_move(view), "n": view["moves"] + 1})
    assert refused["code"] == "not_player", refused
