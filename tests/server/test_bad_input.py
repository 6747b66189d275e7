"""Abuse and mistakes over a real socket: each gets its clear error (or close code) and changes nothing."""

from __future__ import annotations

import asyncio

import msgpack
import solrace
import solrace.engine as engine
from helpers.timing import scaled
from solrace.bench.server_process import ServerProcess
from solrace.protocol import messages as m


async def room_state(url: str, wire, code: str) -> dict:
    """The room as a fresh spectator sees it, minus the clock."""
    c = await wire(url)
    snap = (await c.request({"type": "spectate", "room": code}))["snapshot"]
    await c.close()
    snap.pop("now")
    snap.pop("spectators")
    snap.pop("event")
    return snap


async def test_hello_first_and_versions(shared_server, wire) -> None:
    c = await wire(shared_server.ws_url, hello=False)
    r = await c.request({"type": "lobby"})
    assert r["code"] == "hello_required"
    r = await c.request({"type": "hello", "version": 99})
    assert r["code"] == "unsupported_version" and r["versions"] == list(m.VERSIONS)
    code, _ = await asyncio.wait_for(c.closed, scaled(5))
    assert code == 1002


async def test_welcome_names_the_versions_and_the_games(shared_server, wire) -> None:
    """What a client must not keep its own copy of comes in welcome, from the one definition."""
    c = await wire(shared_server.ws_url, hello=False)
    w = await c.request({"type": "hello", "version": m.VERSION})
    assert m.validate_server(w) is w
    assert w["version"] == m.VERSION
    assert w["server"] == f"solrace/{solrace.__version__}"
    assert [g["id"] for g in w["games"]] == list(engine.GAMES)
    assert {g["id"]: g["title"] for g in w["games"]} == engine.game_titles()
    assert w["games"] == m.games()


async def test_garbage_then_close_1007(shared_server, wire) -> None:
    c = await wire(shared_server.ws_url)
    for _ in range(2):
        await c.send_raw(b"\xc1\xff\x00garbage")
        err = await c.next_push()
        assert err["code"] == "bad_frame"
    assert (await c.request({"type": "ping", "t": 5}))["t"] == 5  # still usable
    await c.send_raw(b"\xc1")
    assert (await c.next_push())["code"] == "bad_frame"
    code, _ = await asyncio.wait_for(c.closed, scaled(5))
    assert code == 1007


async def test_text_frames_close_1003(shared_server, wire) -> None:
    c = await wire(shared_server.ws_url)
    for _ in range(3):
        await c.send_raw('{"type": "hello"}')
    code, _ = await asyncio.wait_for(c.closed, scaled(5))
    assert code == 1003
    assert [x["code"] for x in c.received if x["type"] == "error"] == ["bad_frame"] * 3


async def test_oversize_frame_error_then_1009(shared_server, wire) -> None:
    c = await wire(shared_server.ws_url)
    await c.send_raw(m.encode({"type": "ping", "t": "x" * 10000}))
    assert (await c.next_push())["code"] == "frame_too_large"
    code, _ = await asyncio.wait_for(c.closed, scaled(5))
    assert code == 1009


async def test_a_frame_of_any_size_over_the_limit_gets_the_error_then_1009(
    shared_server, wire
) -> None:
    """Over websockets' own limit too (it used to close 1009 with no error): the error comes
    from below the handler, without the server reading the frame's payload."""
    for size in (70 * 1024, 2 * 1024 * 1024):
        c = await wire(shared_server.ws_url)
        await c.send_raw(m.encode({"type": "ping", "t": "x" * size}))
        err = await c.next_push()
        assert err["code"] == "frame_too_large" and m.validate_server(err) is err
        code, _ = await asyncio.wait_for(c.closed, scaled(5))
        assert code == 1009


async def test_wrong_types_unknown_type_missing_fields(shared_server, wire) -> None:
    c = await wire(shared_server.ws_url)
    assert (await c.request({"type": "teleport"}))["code"] == "unknown_type"
    r = await c.request({"type": "join", "room": 5, "name": "x"})
    assert r["code"] == "bad_message" and "room" in r["message"]
    r = await c.request({"type": "create"})
    assert r["code"] == "bad_message" and "name" in r["message"]
    await c.send_raw(msgpack.packb({"type": "move", "move": "deal", "id": "seven"}))
    assert (await c.next_push())["code"] == "bad_message"
    assert (await c.request({"type": "ping"}))["type"] == "pong"  # the connection lives on


async def test_a_ping_never_echoes_an_extension_type(shared_server, wire) -> None:
    """Issue 20 item 10: an ExtType in a ping's `t` came back in the pong; now refused with a
    clear error, and a `type` that is not a string is named as such (not as missing)."""
    c = await wire(shared_server.ws_url)
    reply = await c.request_once({"type": "ping", "t": msgpack.ExtType(7, b"evil")})
    assert reply["type"] == "error", reply
    assert reply["code"] == "bad_message" and reply["field"] == "t", reply
    assert not any(x["type"] == "pong" for x in c.received)
    assert all(b"evil" not in f for f in c.frames)
    await c.send_raw(msgpack.packb({"type": 5, "id": 9}))  # no usable type: a push, no ref
    r = await c.next_push()
    assert r["code"] == "bad_message" and r["message"] == "field 'type' must be a string", r
    assert (await c.request({"type": "ping", "t": [1, "x"]}))["t"] == [1, "x"]


async def test_flood_is_rate_limited_then_closed_1008(redis_url, key_prefix, wire) -> None:
    with ServerProcess(redis_url, key_prefix, extra_args=["--burst", "5", "--rate", "1"]) as srv:
        c = await wire(srv.ws_url)  # hello took one token
        for _ in range(40):
            await c.send_raw(m.encode({"type": "ping"}))
        code, _ = await asyncio.wait_for(c.closed, scaled(5))
        assert code == 1008
        kinds = [x.get("code") or x["type"] for x in c.received]
        assert kinds.count("pong") == 4 and "rate_limited" in kinds
        # a refusal names the request it refuses
        c2 = await wire(srv.ws_url)
        for _ in range(4):
            await c2.request_once({"type": "ping"})
        refused = await c2.request_once({"type": "ping"})
        assert refused["code"] == "rate_limited" and refused["ref"] == c2.next_id
        await asyncio.to_thread(srv.stop)


async def test_room_errors_change_nothing(shared_server, wire) -> None:
    url = shared_server.ws_url
    host = await wire(url)
    created = await host.request(
        {
            "type": "create",
            "name": "ann",
            "options": {"game": "puttputt", "countdown": 0, "max_players": 2},
        }
    )
    code = created["room"]
    bob = await wire(url)
    jb = await bob.request({"type": "join", "room": code, "name": "bob"})
    before = await room_state(url, wire, code)

    stranger = await wire(url)
    assert (await stranger.request({"type": "join", "room": "ZZZZZ", "name": "x"}))[
        "code"
    ] == "no_room"
    assert (await stranger.request({"type": "spectate", "room": "ZZZZZ"}))["code"] == "no_room"
    assert (await stranger.request({"type": "join", "room": code, "name": "third"}))[
        "code"
    ] == "room_full"
    r = await stranger.request({"type": "resume", "room": code, "token": jb["token"] + "x"})
    assert r["code"] == "bad_token"
    assert (await stranger.request({"type": "move", "move": "deal"}))["code"] == "not_player"
    # host actions by a non-host (bob uses his own player token as host token)
    for req in (
        {"type": "start"},
        {"type": "configure", "options": {"time_limit": 5}},
        {"type": "kick", "seat": 0},
        {"type": "rematch"},
    ):
        r = await bob.request({**req, "host_token": jb["token"]})
        assert r["code"] == "not_host", (req, r)
    r = await host.request(
        {"type": "configure", "host_token": created["host_token"], "options": {"game": "nope"}}
    )
    assert r["code"] == "bad_options"
    r = await host.request(
        {
            "type": "configure",
            "host_token": created["host_token"],
            "options": {"game_options": {"draw": 9}, "game": "klondike"},
        }
    )
    assert r["code"] == "bad_options"
    # moves before the start
    assert (await bob.request({"type": "move", "move": "deal"}))["code"] == "bad_state"
    assert (await bob.request({"type": "undo"}))["code"] == "bad_state"
    assert (await bob.request({"type": "resign"}))["code"] == "bad_state"
    assert await room_state(url, wire, code) == before

    await host.request({"type": "start", "host_token": created["host_token"]})
    await bob.wait_for(lambda x: x["type"] == "snapshot")
    during = await room_state(url, wire, code)
    r = await bob.request({"type": "move", "move": "t9-f1"})
    assert r["code"] == "illegal_move" and r["message"]
    r = await bob.request({"type": "move", "move": "deal", "n": 7})
    assert r["code"] == "out_of_sync" and r["expected"] == 1
    assert (await bob.request({"type": "undo"}))["code"] == "undo_refused"
    assert (await stranger.request({"type": "join", "room": code, "name": "late"}))[
        "code"
    ] == "bad_state"
    assert await room_state(url, wire, code) == during

    # after the finish
    for c in (host, bob):
        assert (await c.request({"type": "resign"}))["type"] == "ok"
    await bob.wait_event("results")
    after = await room_state(url, wire, code)
    assert (await bob.request({"type": "move", "move": "deal"}))["code"] == "bad_state"
    assert (await bob.request({"type": "resign"}))["code"] == "bad_state"
    assert await room_state(url, wire, code) == after
    # the host can start over in the same room with a new deal
    assert (await host.request({"type": "rematch", "host_token": created["host_token"]}))[
        "type"
    ] == "ok"
    ev = await bob.wait_event("rematch")
    assert ev["options"]["game"] == "puttputt"


async def test_spectators_can_be_refused_and_kick_works(shared_server, wire) -> None:
    url = shared_server.ws_url
    host = await wire(url)
    created = await host.request(
        {"type": "create", "name": "ann", "options": {"spectators": False}}
    )
    code = created["room"]
    eve = await wire(url)
    assert (await eve.request({"type": "spectate", "room": code}))["code"] == "not_allowed"
    bob = await wire(url)
    jb = await bob.request({"type": "join", "room": code, "name": "bob"})
    assert (await host.request({"type": "kick", "host_token": created["host_token"], "seat": 1}))[
        "type"
    ] == "ok"
    await host.wait_event("kicked", seat=1)
    r = await eve.request({"type": "resume", "room": code, "token": jb["token"]})
    assert r["code"] == "bad_token"


async def test_lobby_lists_public_rooms(shared_server, wire) -> None:
    c = await wire(shared_server.ws_url)
    pub = await c.request(
        {"type": "create", "name": "a", "options": {"public": True, "game": "manx"}}
    )
    c2 = await wire(shared_server.ws_url)
    priv = await c2.request({"type": "create", "name": "b"})
    rooms = (await c2.request({"type": "lobby"}))["rooms"]
    codes = [r["room"] for r in rooms]
    assert pub["room"] in codes and priv["room"] not in codes
    row = rooms[codes.index(pub["room"])]
    assert row == {
        "room": pub["room"],
        "game": "manx",
        "state": "lobby",
        "players": 1,
        "max_players": 8,
        "spectators": 0,
        "deal": "any",
        "rated": False,
    }


async def test_silent_connection_is_closed_1001(redis_url, key_prefix, wire) -> None:
    with ServerProcess(redis_url, key_prefix, extra_args=["--idle-timeout", "0.5"]) as srv:
        c = await wire(srv.ws_url)
        for _ in range(3):  # application pings keep it open
            await asyncio.sleep(0.3)
            assert (await c.request({"type": "ping"}))["type"] == "pong"
        code, _ = await asyncio.wait_for(c.closed, scaled(5))
        assert code == 1001
        await asyncio.to_thread(srv.stop)


async def test_a_create_takes_the_code_its_client_drew(shared_server, wire) -> None:
    """A client draws its room's code (to route its connection by it, PROTOCOL.md Room codes):
    the room gets exactly that code; a taken one is `code_taken` and nothing is made; one of
    the wrong shape (a short code for a private room) is `bad_message` naming `code`."""
    from solrace.protocol.codes import code_for

    c = await wire(shared_server.ws_url)
    private, public = code_for(False), code_for(True)
    r = await c.request({"type": "create", "name": "a", "code": private.lower()})
    assert r["type"] == "joined" and r["room"] == private
    c2 = await wire(shared_server.ws_url)
    r = await c2.request(
        {"type": "create", "name": "b", "code": public, "options": {"public": True}}
    )
    assert r["type"] == "joined" and r["room"] == public
    c3 = await wire(shared_server.ws_url)
    taken = await c3.request({"type": "create", "name": "eve", "code": private})
    assert taken["code"] == "code_taken"
    seats = (await c3.request({"type": "spectate", "room": private}))["snapshot"]["players"]
    assert [p["name"] for p in seats] == ["a"]  # the room is the first creator's still
    for code, options in (
        (public, {}),  # a private room must not get a short code
        (code_for(False), {"public": True}),
        ("I" * 20, {}),  # not of the alphabet
    ):
        c4 = await wire(shared_server.ws_url)
        r = await c4.request({"type": "create", "name": "x", "code": code, "options": options})
        assert (r["code"], r.get("field")) == ("bad_message", "code"), (code, r)
