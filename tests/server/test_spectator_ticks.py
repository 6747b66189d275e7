"""Issue 21 item 4: spectators per tick. A room's spectators get one frame per tick (the room's
events since their place, coalesced, and each seat's latest board), encoded once for every
spectator at the same place, so that a crowd costs the server CPU per tick, not per move;
racers have a tick of their own (test_coalesce.py). Every event still reaches every
spectator, in order, and a gap is caught up from the room's stream.

The server runs in the test's loop (a real Redis, real sockets: `in_loop`), so a test can
count the writes to a spectator's socket and lengthen the tick (`fanout.TICK_S`) where it
needs many moves inside one."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from helpers.race import current_view, play, start_race, until
from helpers.servers import in_loop
from helpers.views import ELSEWHERE
from solrace.protocol import messages as m
from solrace.server.net import fanout
from solrace.server.net.conn import Conn, Limits

LIMITS = Limits(burst=10_000, rate=10_000.0, spectator_burst=10_000, spectator_rate=10_000.0)


def feed(client: Any, after: int) -> list[dict[str, Any]]:
    """The room events and coalesced `progress` frames the client got past event `after`."""
    return [x for x in client.received if x["type"] in ("event", "progress") and x["n"] > after]


def assert_in_order(client: Any, after: int, last: int) -> None:
    """Every event after `after` up to `last` reached the client once, in order: each frame
    starts right after the previous one (a `progress` frame stands for `from`..`n`)."""
    expect = after + 1
    for x in feed(client, after):
        assert x.get("from", x["n"]) == expect, (expect, feed(client, after))
        expect = x["n"] + 1
    assert expect == last + 1, (expect, last)


def spectator_conns(transport: Any, code: str) -> list[Conn]:
    return [c for c in transport.conns if c.room == code and c.role == "spectator"]


async def counted_spectator(
    transport: Any, url: str, wire: Any, code: str
) -> tuple[Any, dict[str, Any]]:
    """A spectator from elsewhere, and its `spectate` answer, once the hub counts it: counted
    here, not by the `watchers` event, which is routine, so it may wait for the tick (the
    boards at the start, late on a loaded machine, may have taken the room's frame first)."""
    eve = await wire(url, source=ELSEWHERE)
    joined = await eve.request({"type": "spectate", "room": code})
    await until(lambda: transport.hub.watchers(code) == 1, "counted")
    return eve, joined


def count_writes(conn: Conn) -> list[tuple[float, int]]:
    """Record each write to the connection's socket: (loop time, frames in it)."""
    writes: list[tuple[float, int]] = []
    tcp: Any = conn.ws.transport
    real_write, real_writelines = tcp.write, tcp.writelines
    inside: list[int] = []
    loop = asyncio.get_running_loop()

    def write(data: Any) -> None:
        if not inside:  # not writelines' own write of the joined chunks
            writes.append((loop.time(), 1))
        real_write(data)

    def writelines(chunks: Any) -> None:
        chunks = list(chunks)
        writes.append((loop.time(), len(chunks)))
        inside.append(1)
        try:
            real_writelines(chunks)
        finally:
            inside.pop()

    tcp.write, tcp.writelines = write, writelines
    return writes


@pytest.mark.whitebox
async def test_one_frame_per_spectator_per_tick_with_every_event_in_order(
    redis_url, key_prefix, wire
) -> None:
    """Three racers move as fast as their acks come back; each of four spectators gets every
    event in order, and its socket one frame at a time, at most one per tick after the
    room's first few (an old server wrote a board and a progress frame per move)."""
    async with in_loop(redis_url, key_prefix, LIMITS) as (transport, url):
        (ann, bob, cy), _, code, _ = await start_race(url, wire, 3)
        watchers = [await wire(url, source=ELSEWHERE) for _ in range(4)]
        for w in watchers:
            await w.request({"type": "spectate", "room": code})
        await until(lambda: all(w.last_event >= ann.last_event for w in watchers), "caught up")
        await until(
            lambda: all(
                any(x.get("kind") == "watchers" and x["count"] == 4 for x in w.received)
                for w in watchers
            ),
            "the spectators counted",
        )
        start = max(w.last_event for w in watchers)
        writes = [count_writes(c) for c in spectator_conns(transport, code)]
        assert len(writes) == 4
        hub = transport.hub
        ticks: list[float] = []  # when each of the room's ticks began (loop time)
        real_tick = hub._tick

        def tick(code_: str) -> None:
            ticks.append(asyncio.get_running_loop().time())
            real_tick(code_)

        hub._tick = tick  # type: ignore[method-assign]
        # 12 moves: no seat of Putt Putt ends in them (its stock lasts), so no event is news
        acks = await asyncio.gather(play(ann, 12), play(bob, 12), play(cy, 12))
        moves = sum(len(a) for a in acks)
        last = max(a[-1]["event"] for a in acks)
        assert last == start + moves
        await until(lambda: all(w.last_event >= last for w in watchers), "every move seen")
        for w in watchers:
            assert_in_order(w, start, last)
            boards = [x for x in w.received if x["type"] == "board"]
            for seat, seat_acks in enumerate(acks):
                if seat_acks:  # each seat's latest board came, and its boards never go back
                    mine = [b["moves"] for b in boards if b["seat"] == seat]
                    assert mine[-1] == seat_acks[-1]["n"] and mine == sorted(set(mine))
        # a lower bound (never a speed goal): the room's frames keep to its credits, at
        # most TICK_BURST at once and one more a tick after that, over any stretch of them
        assert ticks
        for i, j in itertools.combinations(range(len(ticks)), 2):
            allowed = fanout.TICK_BURST + (ticks[j] - ticks[i]) / fanout.TICK_S + 1e-6
            assert j - i + 1 <= allowed, (i, j, ticks)
        for times in writes:
            # each write to a spectator is one frame, and it has at most one per tick
            assert times and all(frames == 1 for _, frames in times), times
            assert len(times) <= len(ticks), (len(times), len(ticks))
            assert len(times) < 2 * moves  # the old server: a board and an event per move


@pytest.mark.whitebox
async def test_many_moves_in_one_tick_are_one_frame_encoded_once(
    redis_url, key_prefix, wire, monkeypatch
) -> None:
    """With a long tick and one credit every move after the first lands in one window: the
    spectators get them in one `batch` frame (the coalesced progress and each seat's latest
    board), the same bytes for all of them, sent with one broadcast."""
    monkeypatch.setattr(fanout, "TICK_S", 2.0)
    monkeypatch.setattr(fanout, "TICK_BURST", 1.0)
    sent: list[tuple[int, bytes]] = []
    real_broadcast = fanout.broadcast

    def broadcast(targets: Any, message: bytes) -> None:
        targets = list(targets)
        sent.append((len(targets), message))
        real_broadcast(targets, message)

    monkeypatch.setattr(fanout, "broadcast", broadcast)
    async with in_loop(redis_url, key_prefix, LIMITS) as (_transport, url):
        (ann, bob), _, code, _ = await start_race(url, wire, 2)
        watchers = [await wire(url, source=ELSEWHERE) for _ in range(3)]
        for w in watchers:
            await w.request({"type": "spectate", "room": code})
        await until(
            lambda: all(
                any(x.get("kind") == "watchers" and x["count"] == 3 for x in w.received)
                for w in watchers
            ),
            "the spectators counted",
        )
        start = max(w.last_event for w in watchers)
        await until(lambda: all(w.last_event == start for w in watchers), "all at one place")
        sent.clear()
        frames_before = [len(w.frames) for w in watchers]
        acks = await play(ann, 6) + await play(bob, 6)
        last = acks[-1]["event"]
        assert last == start + len(acks)
        await until(lambda: all(w.last_event >= last for w in watchers), "every move seen")
        for w, before in zip(watchers, frames_before, strict=True):
            assert_in_order(w, start, last)
            got = w.frames[before:]
            assert len(got) < len(acks), (len(got), len(acks))  # fewer frames than moves
            batches = [m.decode(f, 1 << 22) for f in got]
            assert any(b["type"] == "batch" for b in batches)
        # every spectator frame went to all three at once: encoded once per place
        to_spectators = [(n, msg) for n, msg in sent if n == 3]
        assert to_spectators and len(to_spectators) == len(watchers[0].frames) - frames_before[0]
        assert [f for _, f in to_spectators] == watchers[0].frames[frames_before[0] :]


async def test_news_goes_out_at_once_and_results_do_not_wait_for_the_tick(
    redis_url, key_prefix, wire, monkeypatch
) -> None:
    """With a tick far longer than the test may wait, a move held for the tick's end still
    reaches the spectator before the race's end, and the results at once: news (a seat's end,
    the results) releases what the tick holds, in order."""
    monkeypatch.setattr(fanout, "TICK_S", 3600.0)
    monkeypatch.setattr(fanout, "TICK_BURST", 1.0)
    async with in_loop(redis_url, key_prefix, LIMITS) as (transport, url):
        (ann, bob), _, code, _ = await start_race(url, wire, 2)
        eve, joined = await counted_spectator(transport, url, wire, code)
        start = joined["snapshot"]["event"]  # the place the spectator continues from
        moved = await play(ann, 3)  # the first goes at once, the others wait for the tick...
        assert len(moved) == 3
        for c in (ann, bob):  # ...until the race ends
            assert (await c.request({"type": "resign"}))["type"] == "ok"
        results = await eve.wait_event("results")
        assert_in_order(eve, start, results["n"])
        kinds = [x.get("kind", x["type"]) for x in feed(eve, start)]
        at = kinds.index("results")
        assert kinds[at - 2 : at + 1] == ["progress", "progress", "results"], kinds  # resigned
        statuses = [x["status"] for x in feed(eve, start)[at - 2 : at]]
        assert statuses == ["resigned", "resigned"]


async def test_a_slow_rooms_moves_go_at_once_while_it_has_credits(
    redis_url, key_prefix, wire, monkeypatch
) -> None:
    """A room's spectators get TICK_BURST frames at once before any waits for a tick: a room
    that moves slower than a frame a tick sends each move at the end of its turn (a fixed
    window after every frame held a slow room's next move up to a tick). With a tick far
    longer than the test may wait (so no credit comes back), the moves within the credits
    arrive, a move past them waits for the tick until news (the race's end) releases it."""
    monkeypatch.setattr(fanout, "TICK_S", 3600.0)
    monkeypatch.setattr(fanout, "TICK_BURST", 6.0)
    async with in_loop(redis_url, key_prefix, LIMITS) as (transport, url):
        (ann, bob), _, code, _ = await start_race(url, wire, 2)
        eve, joined = await counted_spectator(transport, url, wire, code)
        await until(lambda: eve.last_event >= ann.last_event, "caught up")
        start = max(joined["snapshot"]["event"], eve.last_event)
        hub = transport.hub
        loop = asyncio.get_running_loop()

        def credits() -> float:
            tick = hub.ticks.get(code)
            return fanout.TICK_BURST if tick is None else tick.fill(loop.time())

        at_once = 0
        while credits() >= 2:  # a move's event and its board: two frames at the most
            ack = (await play(ann, 1))[0]
            await until(lambda a=ack: eve.last_event >= a["event"], f"move {at_once + 1} seen")
            at_once += 1
        assert at_once >= 2, at_once
        for _ in range(3):  # the credits run out: the next move waits for the tick
            held = (await play(ann, 1))[0]
            if hub.ticks[code].due:
                break
        assert hub.ticks[code].due and credits() < 1
        assert eve.last_event < held["event"]
        for c in (ann, bob):  # news releases it
            assert (await c.request({"type": "resign"}))["type"] == "ok"
        results = await eve.wait_event("results")
        assert_in_order(eve, start, results["n"])


@pytest.mark.whitebox
async def test_a_spectator_catches_up_after_a_gap_and_after_a_reconnect(
    redis_url, key_prefix, wire
) -> None:
    """An event the hub never heard (a pub/sub message lost) leaves the spectators behind:
    they fetch it from the room's stream and go on per tick, in order. A spectator that
    reconnects with its last event gets what it missed, then the live ticks."""
    async with in_loop(redis_url, key_prefix, LIMITS) as (transport, url):
        (ann, bob), _, code, _ = await start_race(url, wire, 2)
        eve = await wire(url, source=ELSEWHERE)
        await eve.request({"type": "spectate", "room": code})
        await until(lambda: any(x.get("kind") == "watchers" for x in eve.received), "counted")
        start = eve.last_event
        hub = transport.hub
        real_local = hub.local_event
        dropped: list[int] = []

        def local_event(code_: str, n: int, event: dict[str, Any]) -> None:
            if not dropped:  # the first move's event never reaches the hub
                dropped.append(n)
                return
            real_local(code_, n, event)

        hub.local_event = local_event  # type: ignore[method-assign]
        acks = await play(ann, 3)
        hub.local_event = real_local  # type: ignore[method-assign]
        last = acks[-1]["event"]
        await until(lambda: eve.last_event >= last, "caught up past the lost event")
        assert dropped == [start + 1]
        assert_in_order(eve, start, eve.last_event)

        # eve goes away mid-race and comes back with the last event it saw
        seen = eve.last_event
        await eve.ws.close()
        missed = await play(bob, 3) + await play(ann, 2)
        again = await wire(url, source=ELSEWHERE)
        joined = await again.request({"type": "spectate", "room": code, "last_event": seen})
        assert joined["event"] == seen and "snapshot" not in joined
        more = await play(bob, 2)
        assert len(missed) == 5 and len(more) == 2
        last = more[-1]["event"]  # (spectators leaving and coming are events too: `watchers`)
        await until(lambda: again.last_event >= last, "the missed events and the live ones")
        assert_in_order(again, seen, again.last_event)


@pytest.mark.parametrize("delay", [0, 1])
async def test_a_racers_address_gets_the_events_of_a_tick_but_none_of_its_boards(
    redis_url, key_prefix, wire, delay
) -> None:
    """Fairness per tick: a spectator at a racer's address is at the same place in the stream
    as one elsewhere, but gets a frame without the boards (live or delayed)."""
    async with in_loop(redis_url, key_prefix, LIMITS) as (_transport, url):
        (ann, _bob), _, code, _ = await start_race(url, wire, 2, spectator_delay=delay)
        near = await wire(url)  # 127.0.0.1: the racers' address
        far = await wire(url, source=ELSEWHERE)
        for w in (near, far):
            await w.request({"type": "spectate", "room": code})
        acks = await play(ann, 3)
        await until(
            lambda: any(x["type"] == "board" and x["moves"] == acks[-1]["n"] for x in far.received),
            "the far spectator's board",
        )
        await until(lambda: near.last_event >= acks[-1]["event"], "the near spectator's events")
        assert [x for x in near.received if x["type"] == "board"] == []
        board = [x for x in far.received if x["type"] == "board" and x["seat"] == 0][-1]
        assert board["view"] == acks[-1]["view"] == current_view(ann)
