"""Other seats' progress goes to a room's players per tick (`Hub.player_tick`): the first
racing progress of a room is held, with every one that follows within the tick, and the
tick's end sends them as one `progress` frame (each seat's latest line) per place; anything
else (a seat finishing, a resignation) releases what is held and goes out at once. Events
stay numbered one by one in Redis: a resume replays them individually."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.race import current_view, play, start_race, until
from helpers.servers import in_loop
from helpers.views import putt_move
from solrace.protocol import messages as m
from solrace.server.app import build
from solrace.server.net import fanout
from solrace.server.net.conn import Conn, Limits
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


LIMITS = Limits(burst=10_000, rate=10_000.0)


def feed(client: Any, after: int) -> list[dict[str, Any]]:
    """The room events and coalesced `progress` frames the client got past event `after`."""
    return [x for x in client.received if x["type"] in ("event", "progress") and x["n"] > after]


def assert_in_order(client: Any, after: int, last: int) -> None:
    """Every event after `after` up to `last` reached the client once, in order."""
    expect = after + 1
    for x in feed(client, after):
        assert x.get("from", x["n"]) == expect, (expect, feed(client, after))
        expect = x["n"] + 1
    assert expect == last + 1, (expect, last)


def latest_lines(client: Any, after: int) -> dict[int, int]:
    """Each seat's latest move count in what the client got past `after`."""
    lines: dict[int, int] = {}
    for x in feed(client, after):
        for line in x["seats"] if x["type"] == "progress" else [x]:
            if "seat" in line and "moves" in line:
                lines[line["seat"]] = line["moves"]
    return lines


def count_writes(conn: Conn) -> list[int]:
    """Record each write to the connection's socket: the frames in it."""
    writes: list[int] = []
    tcp: Any = conn.ws.transport
    real_writelines = tcp.writelines

    def writelines(chunks: Any) -> None:
        chunks = list(chunks)
        writes.append(len(chunks))
        real_writelines(chunks)

    tcp.writelines = writelines
    return writes


@pytest.mark.whitebox
async def test_a_racer_gets_the_rooms_progress_once_a_tick_in_order_with_each_seats_latest(
    redis_url: str, key_prefix: str, wire: Any, monkeypatch: Any
) -> None:
    """Three racers move as fast as their acks come back; the fourth, who does not move,
    gets every event in order, each seat's latest line at the end, and at most one frame per
    tick of the room (a move did not go out at once: the old server sent the first progress
    of a quiet room as its own frame). Only the tick ends a hold here (not HELD_MAX: below)."""
    monkeypatch.setattr(fanout, "RECENT", 1000)
    monkeypatch.setattr(fanout, "HELD_MAX", 500)
    async with in_loop(redis_url, key_prefix, LIMITS) as (transport, url):
        (ann, bob, cy, dan), _, code, _ = await start_race(url, wire, 4)
        hub = transport.hub
        await until(lambda: dan.last_event >= ann.last_event, "dan caught up")
        start = dan.last_event
        (dan_conn,) = [c for c in transport.conns if c.room == code and c.seat == 3]
        writes = count_writes(dan_conn)
        ticks: list[int] = []  # the room's ticks that ended
        real_end = hub._window_end

        def window_end(code_: str) -> None:
            ticks.append(1)
            real_end(code_)

        hub._window_end = window_end  # type: ignore[method-assign]
        # 12 moves each: no seat of Putt Putt ends in them (its stock lasts): no news
        acks = await asyncio.gather(play(ann, 12), play(bob, 12), play(cy, 12))
        moves = sum(len(a) for a in acks)
        last = max(a[-1]["event"] for a in acks)
        assert last == start + moves
        await until(lambda: dan.last_event >= last, "every move seen")
        assert_in_order(dan, start, last)
        assert latest_lines(dan, start) == {s: a[-1]["n"] for s, a in enumerate(acks)}
        assert all(x["type"] == "progress" or x["kind"] == "progress" for x in feed(dan, start))
        # one frame a write, at most one write a tick, far fewer than the moves
        assert writes and all(frames == 1 for frames in writes), writes
        assert len(writes) <= len(ticks), (len(writes), len(ticks))
        assert len(writes) < moves / 2, (len(writes), moves)


async def test_a_rooms_progress_waits_for_its_tick_and_news_releases_it_in_order(
    redis_url: str, key_prefix: str, wire: Any
) -> None:
    """With a tick longer than the test, the others' moves are held (a reply to the racer who
    waits, sent after the moves were stored, comes with none of them), and a resignation, news,
    sends them first as one `progress` frame, then goes out itself at once."""
    async with in_loop(redis_url, key_prefix, LIMITS) as (transport, url):
        (ann, bob, cy), _, _, _ = await start_race(url, wire, 3)
        transport.hub.player_tick = 3600.0
        await until(lambda: cy.last_event >= ann.last_event, "cy caught up")
        start = cy.last_event
        moved = await play(ann, 3) + await play(bob, 2)
        assert len(moved) == 5 and moved[-1]["event"] == start + 5
        assert (await cy.request({"type": "ping"}))["type"] == "pong"
        assert feed(cy, start) == []  # held for the tick
        assert feed(ann, moved[2]["event"]) == []  # ann's own moves came in its acks only
        assert (await cy.request({"type": "resign"}))["type"] == "ok"
        await ann.wait_event("progress", seat=2, status="resigned")
        # ann's acks stood for its own events (nothing was held before them); bob's came
        # behind ann's held ones, so bob gets its own moves again in the frame (harmless: a
        # line is the seat's state)
        for c, since, lines in ((ann, start + 3, {1: 2}), (bob, start, {0: 3, 1: 2})):
            got = feed(c, since)
            assert [x.get("from", x["n"]) for x in got] == [since + 1, start + 6], got
            held, news = got
            assert held["type"] == "progress" and held["n"] == start + 5, got
            assert {x["seat"]: x["moves"] for x in held["seats"]} == lines
            assert news["kind"] == "progress" and news["status"] == "resigned"
        assert_in_order(bob, start, start + 6)


async def test_a_room_holds_at_most_held_max_progress_events_and_loses_none(
    redis_url: str, key_prefix: str, wire: Any, monkeypatch: Any
) -> None:
    """A room at full speed makes more progress in a tick than the hub keeps of its events
    (`RECENT`): the tick ends early at HELD_MAX held, so every event still reaches the others
    from what is kept, in `progress` frames, and none is fetched again from Redis (a
    catch-up, which replays events one by one)."""
    monkeypatch.setattr(fanout, "RECENT", 8)
    monkeypatch.setattr(fanout, "HELD_MAX", 4)
    async with in_loop(redis_url, key_prefix, LIMITS) as (transport, url):
        (ann, bob, cy), _, _, _ = await start_race(url, wire, 3)
        transport.hub.player_tick = 3600.0
        await until(lambda: cy.last_event >= ann.last_event, "cy caught up")
        start = cy.last_event
        moved = await play(ann, 22)
        assert len(moved) >= 20, len(moved)  # more than twice RECENT
        last = moved[-1]["event"]
        out = len(moved) // 4 * 4  # what the full holds sent; the rest is held
        await until(lambda: cy.last_event >= start + out, "the full holds came")
        assert (await bob.request({"type": "resign"}))["type"] == "ok"
        await until(lambda: cy.last_event >= last + 1, "the resignation came")
        assert_in_order(cy, start, last + 1)
        got = feed(cy, start)
        rest = len(moved) % 4  # released by the news: one frame, or one event
        tail = ["progress"] if rest > 1 else ["event"] if rest else []
        assert [x["type"] for x in got] == ["progress"] * (len(moved) // 4) + tail + ["event"]


async def test_a_tick_of_zero_sends_each_progress_at_the_end_of_its_turn(
    redis_url: str, key_prefix: str, wire: Any
) -> None:
    """`--progress-tick 0`: nothing is held; each move's progress reaches the others as its
    own event, before a reply the server writes later (nothing waits for a tick)."""
    async with in_loop(redis_url, key_prefix, LIMITS) as (transport, url):
        (ann, _bob, cy), _, _, _ = await start_race(url, wire, 3)
        transport.hub.player_tick = 0.0
        await until(lambda: cy.last_event >= ann.last_event, "cy caught up")
        start = cy.last_event
        moved = await play(ann, 3)
        assert (await cy.request({"type": "ping"}))["type"] == "pong"
        got = feed(cy, start)
        assert [(x["type"], x["n"]) for x in got] == [("event", a["event"]) for a in moved]
        assert not transport.hub.windows
