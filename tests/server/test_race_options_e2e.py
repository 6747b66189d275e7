"""Room options over real sockets: time limit, disconnect grace, safe undo, spectator views."""

from __future__ import annotations

import asyncio
import time

from helpers.views import ELSEWHERE, putt_move
from solrace.bench.server_process import ServerProcess


async def race(url: str, wire, players: int = 1, **options):
    host = await wire(url)
    created = await host.request(
        {"type": "create", "name": "p0", "options": {"game": "puttputt", "countdown": 0, **options}}
    )
    clients, tokens = [host], [created["token"]]
    for i in range(1, players):
        c = await wire(url)
        clients.append(c)
        tokens.append(
            (await c.request({"type": "join", "room": created["room"], "name": f"p{i}"}))["token"]
        )
    return clients, tokens, created


async def start(clients, created) -> list[dict]:
    await clients[0].request({"type": "start", "host_token": created["host_token"]})
    return [(await c.wait_for(lambda x: x["type"] == "snapshot"))["snapshot"] for c in clients]


async def test_time_limit_ends_the_race(shared_server, wire) -> None:
    (a, b), _, created = await race(shared_server.ws_url, wire, 2, time_limit=1)
    await start([a, b], created)
    await a.request({"type": "move", "move": "deal"})
    t0 = time.monotonic()
    results = await a.wait_event("results", timeout=5)
    assert time.monotonic() - t0 < 3
    statuses = {r["seat"]: r["status"] for r in results["ranking"]}
    assert statuses == {0: "timeout", 1: "timeout"}
    assert (await b.request({"type": "move", "move": "deal"}))["code"] == "bad_state"


async def test_disconnected_racer_resigns_after_grace(redis_url, key_prefix, wire) -> None:
    with ServerProcess(redis_url, key_prefix, extra_args=["--grace", "0.5"]) as srv:
        (a, b), _, created = await race(srv.ws_url, wire, 2)
        await start([a, b], created)
        await b.close()
        ev = await a.wait_event("progress", seat=1, timeout=5)
        assert ev["status"] == "resigned"
        await a.request({"type": "resign"})
        results = await a.wait_event("results")
        assert {r["status"] for r in results["ranking"]} == {"resigned"}
        await a.close()
        await asyncio.to_thread(srv.stop)


async def test_safe_undo_over_the_wire(shared_server, wire) -> None:
    (a,), _, created = await race(shared_server.ws_url, wire, 1, undo="safe")
    (snap,) = await start([a], created)
    view = snap["you"]["view"]
    deal = await a.request({"type": "move", "move": "deal", "n": 1})
    assert deal["revealed"]  # the dealt card
    r = await a.request({"type": "undo", "n": 1})
    assert r["code"] == "undo_refused"
    view = deal["view"]
    while putt_move(view, deal=False) is None:
        view = (await a.request({"type": "move", "move": "deal"}))["view"]
    mv = putt_move(view, deal=False)
    ack = await a.request({"type": "move", "move": mv})
    assert ack["revealed"] == []
    undo = await a.request({"type": "undo", "n": ack["n"]})
    assert undo["type"] == "ack" and undo["undone"] == mv and undo["n"] == ack["n"] - 1
    assert undo["view"] == view
    # the undo's progress event is folded into its ack, the next event after the move's
    assert undo["event"] == ack["event"] + 1 and undo["status"] == "racing"
    assert undo["home"] == view["home"] and undo["progress"] == view["progress"]
    assert not [x for x in a.received if x["type"] == "event" and x["kind"] == "progress"]


async def test_spectator_progress_only_and_delayed_boards(shared_server, wire) -> None:
    (a,), _, created = await race(shared_server.ws_url, wire, 1, spectator_view="progress")
    eve = await wire(shared_server.ws_url, source=ELSEWHERE)
    await eve.request({"type": "spectate", "room": created["room"]})
    await start([a], created)
    await a.request({"type": "move", "move": "deal"})
    await eve.wait_event("progress", moves=1)
    snap = (
        await (await wire(shared_server.ws_url, source=ELSEWHERE)).request(
            {"type": "spectate", "room": created["room"]}
        )
    )["snapshot"]
    assert snap["boards"] is None
    assert not [x for x in eve.received if x["type"] == "board"]

    # A delayed room: a spectator arriving right after a move sees the board as it was before
    # it. "Right after" is judged by the clock: the move was made after it was sent, and the
    # snapshot before its reply came, so a reply within the delay of sending the move must
    # not show it. A machine too loaded to answer within the delay gets a fresh room (up to 3).
    delay = 2
    for _attempt in range(3):
        (b,), _, created = await race(shared_server.ws_url, wire, 1, spectator_delay=delay)
        eve2 = await wire(shared_server.ws_url, source=ELSEWHERE)
        await eve2.request({"type": "spectate", "room": created["room"]})
        late = await wire(shared_server.ws_url, source=ELSEWHERE)
        await start([b], created)
        sent = time.monotonic()
        ack = await b.request({"type": "move", "move": "deal"})
        snap = (await late.request({"type": "spectate", "room": created["room"]}))["snapshot"]
        if time.monotonic() - sent < delay:
            break
    else:
        raise AssertionError("no snapshot came within the spectator delay in 3 tries")
    assert snap["boards"]["0"]["moves"] == 0  # the snapshot is delayed too
    board = await eve2.wait_for(lambda x: x["type"] == "board", timeout=5 + delay)
    assert time.monotonic() - sent >= delay - 0.2 and board["view"] == ack["view"]


async def test_rematch_deals_a_new_game_in_the_same_room(shared_server, wire) -> None:
    (a, b), (_ta, _tb), created = await race(shared_server.ws_url, wire, 2)
    await start([a, b], created)
    first = next(x for x in a.received if x["type"] == "event" and x["kind"] == "countdown")
    for c in (a, b):
        await c.request({"type": "resign"})
    res1 = await a.wait_event("results")
    assert (await a.request({"type": "rematch", "host_token": created["host_token"]}))[
        "type"
    ] == "ok"
    await b.wait_event("rematch")
    # bob leaves in the lobby and a new player takes a seat
    assert (await b.request({"type": "leave"}))["type"] == "ok"
    ev = await a.wait_event("player_left")
    assert ev["seat"] == 1
    carl = await wire(shared_server.ws_url)
    jc = await carl.request({"type": "join", "room": created["room"], "name": "carl"})
    assert jc["seat"] == 2 and [p["name"] for p in jc["snapshot"]["players"]] == ["p0", "carl"]
    assert jc["snapshot"]["state"] == "lobby" and jc["snapshot"]["round"] == 2
    await a.request({"type": "start", "host_token": created["host_token"]})
    second = await carl.wait_event("countdown")
    assert second["commitment"] != first["commitment"] and second["players"] == [0, 2]
    snap = (await carl.wait_for(lambda x: x["type"] == "snapshot"))["snapshot"]
    assert snap["you"]["view"]["moves"] == 0 and snap["players"][1]["moves"] == 0
    for c in (a, carl):
        await c.request({"type": "resign"})
    res2 = await carl.wait_event("results")
    assert res2["seed"] != res1["seed"] and set(res2["moves"]) == {"0", "2"}
