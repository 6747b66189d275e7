"""A process fans its own events out to its own connections as soon as Redis has stored them,
and drops its own copies off pub/sub; other processes' events still come by pub/sub. The two
streams interleave, so these tests check that every client still sees each event exactly once
and in order, with no gap, when a room's seats are split across two processes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis
from helpers.race import play, until
from helpers.servers import serving
from solrace.server.store.store import ORIGIN_LEN, Store

DOC = {"code": "LOCAL", "seats": [{"seat": 0}, {"seat": 1}], "state": "lobby"}


class Sink:
    """Records what the store hands to its process's own fan-out."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int, dict[str, Any]]] = []
        self.boards: list[tuple[str, int, bytes]] = []
        self.remote: list[tuple[str, int, bytes]] = []

    def local_event(self, code: str, n: int, event: dict[str, Any]) -> None:
        self.events.append((code, n, event))

    def remote_event(self, code: str, n: int, payload: bytes) -> None:
        self.remote.append((code, n, payload))

    def board(self, code: str, delay: int, frame: bytes) -> None:
        self.boards.append((code, delay, frame))

    def lost(self, code: str) -> None:
        pass


@pytest.fixture
def sink() -> Sink:
    return Sink()


@pytest.fixture
async def store(redis_url: str, key_prefix: str, sink: Sink):
    s = Store(aioredis.from_url(redis_url), key_prefix, sink=sink)
    yield s
    await s.close()


async def test_store_hands_every_stored_event_to_its_sink_and_tags_what_it_publishes(
    store: Store, sink: Sink, redis_url: str
) -> None:
    ps = store.redis.pubsub(ignore_subscribe_messages=True)
    await ps.subscribe(store.channel("LOCAL"))
    # another process in the room: moves are published only when one listens
    listener = Store(aioredis.from_url(redis_url), store.prefix, sink=Sink())
    await listener.subscribe("LOCAL")
    ver, numbers = await store.commit("LOCAL", 0, DOC, [{"kind": "a"}, {"kind": "b"}], seats=2)
    assert numbers == [1, 2]
    await store.append("LOCAL", ver, 0, 0, 0, "deal 1", {"kind": "progress", "seat": 0}, b"board")
    await store.presence(
        "LOCAL",
        "1",
        +1,
        {"kind": "connected", "connected": True},
        {"kind": "connected", "connected": False},
    )
    await store.presence(
        "LOCAL", "1", +1, {"kind": "connected", "connected": True}
    )  # no crossing: no event
    await store.presence(
        "LOCAL",
        "1",
        -2,
        {"kind": "connected", "connected": True},
        {"kind": "connected", "connected": False},
    )
    assert [(n, e["kind"]) for _, n, e in sink.events] == [
        (1, "a"),
        (2, "b"),
        (3, "progress"),
        (4, "connected"),
        (5, "connected"),
    ]
    assert [e.get("connected") for _, n, e in sink.events if n >= 4] == [True, False]
    assert sink.boards == []  # nobody watches: the board was neither published nor fanned out
    published = []
    for _ in range(100):  # get_message also answers None for the (ignored) subscribe confirmation
        msg = await ps.get_message(timeout=0.1)
        if msg is not None:
            published.append(msg["data"])
        if len(published) == 5:
            break
    own = b"e" + store.origin
    assert [d[: 1 + ORIGIN_LEN] for d in published] == [own] * 5
    assert [int(d[1 + ORIGIN_LEN :].split(b":", 1)[0]) for d in published] == [1, 2, 3, 4, 5]
    await store.redis.hset(store.key("LOCAL", "conn"), "spectators", 1)
    await store.append("LOCAL", ver, 1, 0, 0, "deal 1", {"kind": "progress", "seat": 1}, b"board")
    await store.publish_board("LOCAL", b"late", 2)
    assert sink.boards == [("LOCAL", 0, b"board"), ("LOCAL", 2, b"late")]
    # what the store reads back off pub/sub: its own copies dropped, another process's handed on
    for data in published:
        store.receive(store.channel("LOCAL"), data)
    assert sink.remote == []
    other = Store(store.redis, store.prefix, sink=sink)
    other.receive(store.channel("LOCAL").encode(), published[2])
    other.receive(store.channel("LOCAL").encode(), b"b" + store.origin + b"3:later")
    assert [(c, n) for c, n, _ in sink.remote] == [("LOCAL", 3)]
    assert sink.boards[-1] == ("LOCAL", 3, b"later")
    await listener.close()
    await ps.aclose()


def events_since_start(client, seat: int | None = None) -> list[dict[str, Any]]:
    """The events a client has after its last snapshot, applied as a client applies them, and
    checked on the way: each once, in order, no gap.

    A mover's ack stands for its own progress event when that is the next one (`event` is
    one past the last); otherwise the event itself follows the ones it waited for. A coalesced
    `progress` frame stands for its events `from`..`n` (each seat's latest line): it must not
    leave a gap, and may overlap what an ack already gave.
    """
    starts = [
        i for i, x in enumerate(client.received) if x.get("snapshot")
    ]  # snapshot, or joined with one
    assert starts, "no snapshot"
    last = client.received[starts[-1]]["snapshot"]["event"]
    applied: list[dict[str, Any]] = []
    for x in client.received[starts[-1] + 1 :]:
        if x["type"] == "event":
            assert x["n"] == last + 1, (last, x)  # once, in order, no gap
            applied.append(x)
            last = x["n"]
        elif x["type"] == "progress":
            assert x["from"] <= last + 1 < x["n"] + 1, (last, x)  # no gap, something new
            applied += [{"n": x["n"], "kind": "progress", **line} for line in x["seats"]]
            last = x["n"]
        elif x["type"] == "ack" and x["event"] == last + 1:
            assert seat is not None, "an ack to a spectator"
            applied.append({"n": x["event"], "kind": "progress", "seat": seat, "moves": x["n"]})
            last = x["event"]
    return applied


async def test_own_events_reach_local_clients_once_and_in_order_while_another_process_publishes(
    redis_url: str, key_prefix: str, wire
) -> None:
    async with serving(redis_url, key_prefix, count=2) as (sa, sb):
        host = await wire(sa.ws_url)
        created = await host.request(
            {"type": "create", "name": "a0", "options": {"game": "puttputt", "countdown": 0}}
        )
        code = created["room"]
        players = [host]
        for i, srv in enumerate((sb, sa, sb), start=1):  # seats 0 and 2 on a, 1 and 3 on b
            c = await wire(srv.ws_url)
            j = await c.request({"type": "join", "room": code, "name": f"p{i}"})
            assert j["seat"] == i
            players.append(c)
        watchers = [await wire(srv.ws_url) for srv in (sa, sb)]
        for w in watchers:
            await w.request({"type": "spectate", "room": code})
        await host.wait_event("player_joined", seat=3)
        await host.request({"type": "start", "host_token": created["host_token"]})
        for c in players:
            await c.wait_for(lambda x: x["type"] == "snapshot")
        # every seat moves as fast as its acks return, on both processes at once
        acks = await asyncio.gather(*(play(c, 20) for c in players))
        moved = {seat: len(a) for seat, a in enumerate(acks)}
        assert all(moved[s] > 0 for s in moved)

        seats = {id(c): i for i, c in enumerate(players)}

        def caught_up(client) -> bool:
            last = {}
            for x in events_since_start(client, seats.get(id(client))):
                if x["kind"] == "progress":
                    last[x["seat"]] = x["moves"]
            return all(last.get(s, 0) >= k for s, k in moved.items())

        await until(lambda: all(caught_up(c) for c in players + watchers), "every client caught up")
        for c in players + watchers:
            seen = events_since_start(c, seats.get(id(c)))
            for seat, k in moved.items():
                progress = [
                    x["moves"] for x in seen if x["kind"] == "progress" and x["seat"] == seat
                ]
                # in order, never twice, up to the last move (coalescing may skip between)
                assert progress == sorted(set(progress)) and progress[-1] == k, (seat, progress)


async def test_a_move_is_published_only_when_another_process_listens_to_the_room(
    redis_url: str, key_prefix: str
) -> None:
    """A room served by one process publishes nothing on a move (that process would only read
    its own copy back and drop it); once another process subscribes, its moves go out."""
    a_sink, b_sink = Sink(), Sink()
    a = Store(aioredis.from_url(redis_url), key_prefix, sink=a_sink)
    b = Store(aioredis.from_url(redis_url), key_prefix, sink=b_sink)
    spy = a.redis.pubsub(ignore_subscribe_messages=True)
    await spy.subscribe(a.channel("LOCAL"))
    try:
        ver, _ = await a.commit("LOCAL", 0, DOC, [], seats=2)
        await a.subscribe("LOCAL")
        await a.append("LOCAL", ver, 0, 0, 0, "deal 1", {"kind": "progress", "seat": 0})
        await b.subscribe("LOCAL")
        await a.append("LOCAL", ver, 0, 1, 1, "deal 2", {"kind": "progress", "seat": 0})
        await until(lambda: bool(b_sink.remote), "b hears a's second move")
        assert [n for _, n, _ in b_sink.remote] == [2]
        await b.unsubscribe("LOCAL")
        await a.append("LOCAL", ver, 0, 2, 2, "deal 3", {"kind": "progress", "seat": 0})
        heard = []
        for _ in range(30):
            msg = await spy.get_message(timeout=0.05)
            if msg is not None:
                heard.append(msg["data"][1 + ORIGIN_LEN :].split(b":", 1)[0])
        assert heard == [b"2"]  # only the move made while b listened went out
        assert [n for _, n, _ in a_sink.events] == [1, 2, 3] and a_sink.remote == []
    finally:
        await spy.aclose()
        await a.close()
        await b.close()
