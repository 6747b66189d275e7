"""Other seats' progress is coalesced per room: the first of a quiet room goes out at once,
the ones that follow within COALESCE_S go out together as one `progress` frame (each seat's
latest line), and anything else (a seat finishing, a resignation) goes out alone after what
was held. Events stay numbered one by one in Redis: a resume replays them individually."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.race import current_view, start_race, until
from helpers.views import putt_move
from solrace.protocol import messages as m
from solrace.server.app import build
from solrace.server.net.fanout import coalescible, frames, progress_frame
from solrace.server.net.ws_server import serve
from solrace.server.store.store import Store


def progress(n: int, seat: int, moves: int, status: str = "racing") -> dict[str, Any]:
    return {
        "type": "event",
        "n": n,
        "kind": "progress",
        "at": 1000 + n,
        "seat": seat,
        "moves": moves,
        "home": moves,
        "progress": moves / 35,
        "status": status,
        "time": moves * 10,
    }


def test_a_run_of_racing_progress_is_one_frame_with_each_seats_latest_line() -> None:
    run = [progress(7, 1, 3), progress(8, 2, 1), progress(9, 1, 4)]
    frame = progress_frame(run)
    assert frame == {
        "type": "progress",
        "from": 7,
        "n": 9,
        "at": 1009,
        "seats": [
            {"seat": 1, "moves": 4, "home": 4, "progress": 4 / 35, "status": "racing", "time": 40},
            {"seat": 2, "moves": 1, "home": 1, "progress": 1 / 35, "status": "racing", "time": 10},
        ],
    }
    assert m.validate_server(frame)
    # a seat that finishes, and any other event, is its own frame; a lone progress too
    won = progress(10, 2, 35, "won")
    joined = {"type": "event", "n": 11, "kind": "connected", "at": 0, "seat": 1, "connected": True}
    assert not coalescible(won) and not coalescible(joined)
    out = [m.decode(f) for f in frames([*run, won, joined, progress(12, 1, 5)])]
    assert [(x["type"], x["n"]) for x in out] == [
        ("progress", 9),
        ("event", 10),
        ("event", 11),
        ("event", 12),
    ]


@pytest.fixture
async def url(redis_url: str, key_prefix: str) -> AsyncIterator[str]:
    transport = build(lambda sink: Store.from_url(redis_url, key_prefix, sink=sink))
    async with serve(transport, "127.0.0.1", 0) as srv:
        await transport.start()
        yield f"ws://127.0.0.1:{next(iter(srv.sockets)).getsockname()[1]}/ws"
        await transport.close()
    await transport.store.close()


async def test_a_busy_seats_moves_reach_the_others_in_fewer_frames_in_order_and_resumable(
    url: str, wire: Any
) -> None:
    (ann, bob, _cy), tokens, code, _ = await start_race(url, wire, 3)
    eve = await wire(url)
    await eve.request({"type": "spectate", "room": code})
    # eve's arrival is announced a moment later (a `watchers` event, debounced): counted
    # before the moves, so that every event after `start` is one of them
    for c in (bob, eve):
        await c.wait_event("watchers", count=1)
    start = bob.last_event
    moved = 0
    for _ in range(12):  # as fast as acks come back: many moves inside each window
        view = current_view(ann)
        mv = putt_move(view)
        if mv is None:
            break
        ack = await ann.request({"type": "move", "move": mv, "n": view["moves"] + 1})
        assert ack["type"] == "ack"
        moved += 1
        if ack["status"] != "racing":
            break
    last = start + moved
    await until(lambda: bob.last_event >= last and eve.last_event >= last, "the others caught up")
    for c in (bob, eve):
        feed = [x for x in c.received if x["type"] in ("event", "progress") and x["n"] > start]
        # no gap, nothing twice: each frame starts right after the previous one
        expect = start + 1
        for x in feed:
            assert x.get("from", x["n"]) == expect, (expect, x)
            expect = x["n"] + 1
        assert expect == last + 1
        assert len(feed) < moved, feed  # coalesced: fewer frames than moves
        assert any(x["type"] == "progress" for x in feed)
        final = [x for x in feed if x["type"] == "progress"][-1]["seats"]
        assert {line["seat"]: line["moves"] for line in final}.get(0) in range(1, moved + 1)
    # the events themselves are kept one by one: a resume from inside a frame replays them
    again = await wire(url)
    joined = await again.request(
        {"type": "resume", "room": code, "token": tokens[1], "last_event": start + 2}
    )
    assert joined["type"] == "joined" and joined["event"] == start + 2
    await until(lambda: again.last_event >= last, "the resume replayed the events")
    replayed = [x for x in again.received if x["type"] == "event"]
    assert [x["n"] for x in replayed] == list(range(start + 3, last + 1))


async def test_what_is_held_goes_out_before_an_event_that_is_not_progress(
    url: str, wire: Any
) -> None:
    (ann, bob, cy), _, _, _ = await start_race(url, wire, 3)
    start = cy.last_event
    for _ in range(4):
        view = current_view(ann)
        await ann.request({"type": "move", "move": putt_move(view), "n": view["moves"] + 1})
    assert (await bob.request({"type": "resign"}))["type"] == "ok"
    resigned = await cy.wait_event("progress", seat=1, status="resigned")
    await asyncio.sleep(0.1)
    feed = [x for x in cy.received if x["type"] in ("event", "progress") and x["n"] > start]
    expect = start + 1
    for x in feed:  # in order: the held progress of ann before bob's resignation
        assert x.get("from", x["n"]) == expect, (expect, feed)
        expect = x["n"] + 1
    assert resigned["n"] == start + 5
