"""The operators' interface (server/net/admin.py) through real servers and a real Redis: off
without a token, only for the admin networks, every live process's rooms listed, a room
inspected, a seat kicked and a room closed through the room rules, recent warnings shown, and
wrong tokens charged as guesses."""

from __future__ import annotations

from typing import Any

from helpers.http_get import aget
from helpers.race import seated_room, start_race, until
from helpers.servers import serving
from solrace.server.net.admin import ENV

TOKEN = "admin-token-for-the-tests-0123456789"
FAST = ("--heartbeat", "0.5")


async def admin(client: Any, op: str, **extra: Any) -> dict[str, Any]:
    return await client.request({"type": "admin", "token": TOKEN, "op": op, **extra})


async def test_off_without_a_token(shared_server, wire) -> None:
    c = await wire(shared_server.ws_url)
    reply = await admin(c, "rooms")
    assert reply["type"] == "error" and reply["code"] == "not_allowed", reply
    assert "off" in reply["message"]
    assert (await aget(shared_server.port, "/admin"))[0] == 404
    assert (await aget(shared_server.port, "/admin.html"))[0] == 404


async def test_rooms_of_every_process_inspect_kick_close(redis_url, key_prefix, wire) -> None:
    async with serving(redis_url, key_prefix, 2, FAST, env={ENV: TOKEN}) as (a, b):
        status, headers, body = await aget(b.port, "/admin")
        assert status == 200 and b"solrace admin" in body
        assert headers.get("Cache-Control") == "no-store"
        (p0, _p1), _, racing, _ = await start_race(a.ws_url, wire, players=2)
        _, _, waiting, _ = await seated_room(b.ws_url, wire, players=1)
        ops = await wire(b.ws_url)

        async def listed() -> bool:
            procs = (await admin(ops, "rooms"))["procs"]
            rows = {r["code"]: r for p in procs for r in p["rooms"]}
            # each process writes its rooms' summary every beat: wait for one written after
            # the race started (a beat from the lobby already lists both seats connected)
            return (
                racing in rows
                and waiting in rows
                and rows[racing]["connected"] == 2
                and rows[racing]["state"] == "racing"
            )

        await until(listed, "both processes' rooms on the admin page, the race racing")
        procs = (await admin(ops, "rooms"))["procs"]
        assert len(procs) == 2 and sum(p["here"] for p in procs) == 1
        row = next(r for p in procs for r in p["rooms"] if r["code"] == racing)
        assert row["state"] == "racing" and row["game"] == "puttputt" and row["seats"] == 2

        room = (await admin(ops, "room", room=racing))["room"]
        assert [(s["seat"], s["name"], s["status"]) for s in room["seats"]] == [
            (0, "p0", "racing"),
            (1, "p1", "racing"),
        ]
        fields = {"seat", "name", "bot", "status", "moves", "connected"}
        assert all(set(s) == fields for s in room["seats"])  # progress, never a card

        kicked = (await admin(ops, "kick", room=racing, seat=1))["room"]
        assert kicked["seats"][1]["status"] == "left"
        await p0.wait_event("kicked")
        closed = (await admin(ops, "close", room=racing))["room"]
        assert closed["state"] == "finished"
        await p0.wait_event("results")
        errors = (await admin(ops, "errors"))["errors"]
        assert any("closed by an operator" in e["message"] for e in errors), errors
        assert not any(racing in e["message"] for e in errors)  # a private code is cut in logs


async def test_wrong_tokens_are_guesses_and_other_networks_are_refused(
    redis_url, key_prefix, wire
) -> None:
    args = (*FAST, "--admin-from", "10.0.0.0/8")
    async with serving(redis_url, key_prefix, 1, args, env={ENV: TOKEN}) as (srv,):
        local = await wire(srv.ws_url)
        reply = await admin(local, "rooms")
        assert reply["code"] == "not_allowed" and "address" in reply["message"], reply
        assert (await aget(srv.port, "/admin"))[0] == 404
        inside = {"X-Forwarded-For": "10.1.2.3"}  # through the trusted proxy (loopback)
        assert (await aget(srv.port, "/admin", inside))[0] == 200

        ops = await wire(srv.ws_url, address="10.1.2.3")
        assert (await admin(ops, "rooms"))["type"] == "admin"
        codes = []
        for _ in range(15):
            r = await ops.request_once({"type": "admin", "token": "x" * 20, "op": "rooms"})
            codes.append(r["code"])
        assert codes[:10] == ["bad_token"] * 10 and codes[10:] == ["rate_limited"] * 5, codes
