"""The lease holder is the room's one writer: its copy in memory is the room.

Its moves are stored by one lean fenced append (`Store.append_owned`) that checks only the
fence's counter (`sync`); every acquisition of the lease and every write without it moves that
counter. These tests drive two services on one Redis (two processes): the holder, and one
without the lease that writes too (a connection that reached it), with takeovers between them,
and check after every write of the holder that its copy in memory equals the room rebuilt
from Redis (the document, the seats' logs, each seat's engine position), and that a stale
holder's appends are refused (fencing).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from helpers.timing import scaled
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from solrace.protocol.messages import ProtocolError
from solrace.server.race.service import RoomService
from solrace.server.rules.room import RACING, Room
from solrace.server.store.lease import Leases
from solrace.server.store.scripts import TRIM_EVERY
from solrace.server.store.store import Conflict, Store

DOC = {"code": "OWNED", "seats": [{"seat": 0}], "state": "racing"}
CODE = "OWNED"


async def test_a_stale_lease_holders_append_is_refused(pair) -> None:
    """The holder loads the room under its lease and writes lean appends; another process
    takes the room over; the old holder's next lean append is refused and stores nothing."""
    a, b = pair
    la, lb = Leases(a, "proc-a", 30), Leases(b, "proc-b", 30)
    await la.acquire(CODE)
    await a.commit(CODE, 0, DOC, [], seats=1)
    loaded = await a.load(CODE)
    assert loaded is not None and loaded.sync == b"1"
    stored = await a.append_owned(CODE, loaded.sync, 0, "m1", {"kind": "progress"})
    assert (stored.length, stored.rev) == (1, 0)  # a push leaves the revision: the length moved
    await a.redis.delete(a.key(CODE, "lease"))  # a stalls past its lease
    assert await lb.acquire(CODE) == 2
    with pytest.raises(Conflict) as exc:
        await a.append_owned(CODE, loaded.sync, 0, "m2", {"kind": "progress"})
    assert exc.value.what == "fence" and exc.value.have == 2
    assert a.fences == {}  # a forgot its lease
    # the new holder writes on from its own load
    mine = await b.load(CODE)
    assert mine is not None and mine.logs[0] == [b"m1"]
    await b.append_owned(CODE, mine.sync, 0, "m2", {"kind": "progress"})
    assert (await b.load(CODE)).logs[0] == [b"m1", b"m2"]  # type: ignore[union-attr]


async def test_a_write_without_the_lease_makes_the_holder_reload(pair) -> None:
    """A process without the lease writes the room (the slow path, checked by version, length
    and revision): the holder's copy is stale, so its lean append is refused as `sync` (it
    keeps its lease), and a fresh load lets it write again."""
    a, b = pair
    await Leases(a, "proc-a", 30).acquire(CODE)
    ver, _ = await a.commit(CODE, 0, DOC, [], seats=1)
    held = await a.load(CODE)
    assert held is not None
    await b.append(CODE, ver, 0, 0, 0, "m1", {"kind": "progress"})
    with pytest.raises(Conflict) as exc:
        await a.append_owned(CODE, held.sync, 0, "x", {"kind": "progress"})
    assert exc.value.what == "sync" and a.fences == {CODE: 1}
    fresh = await a.load(CODE)
    assert fresh is not None and fresh.logs[0] == [b"m1"]
    await a.append_owned(CODE, fresh.sync, 0, "m2", {"kind": "progress"})
    assert (await a.load(CODE)).logs[0] == [b"m1", b"m2"]  # type: ignore[union-attr]


async def test_the_fence_knows_who_listens_and_watches(pair) -> None:
    """The lean append reads who else listens to the room and how many spectators watch from
    the fence alone (one read): the lease's acquisition, subscribing and presence keep them
    there, so a process that starts listening gets the holder's next move, and the count of
    spectators comes back with each append; a fence without those fields (written before
    them) makes the append read the set and the count instead. A change of who listens moves
    the fence's counter: the holder reloads and learns from its load whether another
    process listens (`Loaded.others`: then this lean script, else the native append)."""
    a, b = pair
    await b.presence(CODE, "spectators", +1)  # before the lease: the acquisition copies it
    await Leases(a, "proc-a", 30).acquire(CODE)
    await a.commit(CODE, 0, DOC, [], seats=1)
    held = await a.load(CODE)
    assert held is not None and not held.others
    await a.subscribe(CODE)
    with pytest.raises(Conflict) as exc:  # who listens changed: the copy is reloaded
        await a.append_owned(CODE, held.sync, 0, "m1", {"kind": "p"})
    assert exc.value.what == "sync"
    held = await a.load(CODE)
    assert held is not None and not held.others  # only a listens
    assert (await a.append_owned(CODE, held.sync, 0, "m1", {"kind": "p"})).spectators == 1
    pubsub = a.redis.pubsub()
    await pubsub.subscribe(a.channel(CODE))
    assert await a.redis.hget(a.key(CODE, "fence"), "here") == a.origin  # only a listens
    await b.subscribe(CODE)  # another process listens from now on
    await b.presence(CODE, "spectators", +1)
    held = await a.load(CODE)
    assert held is not None and held.others
    stored = await a.append_owned(CODE, held.sync, 0, "m2", {"kind": "p"}, last=held.seq)
    assert stored.spectators == 2

    async def published() -> bytes:
        while True:
            msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=5.0)
            if msg is not None:
                return bytes(msg["data"])

    assert (await asyncio.wait_for(published(), scaled(5.0))).startswith(b"e" + a.origin)
    await b.unsubscribe(CODE)
    await b.presence(CODE, "spectators", -2)
    held = await a.load(CODE)
    assert held is not None and not held.others
    stored = await a.append_owned(CODE, held.sync, 0, "m3", {"kind": "p"}, last=held.seq)
    assert stored.spectators == 0
    assert await a.redis.hget(a.key(CODE, "fence"), "here") == a.origin
    # a fence from before these fields: the append reads the set and the count
    await a.redis.hdel(a.key(CODE, "fence"), "here", "watching")
    await b.presence(CODE, "spectators", +3)
    assert (await a.append_owned(CODE, held.sync, 0, "m4", {"kind": "p"})).spectators == 3
    await pubsub.aclose()
    await a.unsubscribe(CODE)


async def test_a_lost_answers_outcome_stops_the_lean_append(pair) -> None:
    """A lean append whose answer was lost: asking whether it is stored moves the counter, so
    if it is still on its way it is refused when it runs (it is then never stored)."""
    a, _ = pair
    await Leases(a, "proc-a", 30).acquire(CODE)
    await a.commit(CODE, 0, DOC, [], seats=1)
    held = await a.load(CODE)
    assert held is not None
    assert await a.outcome(CODE, 0, 0, 0, "m1", {"kind": "progress"}) is None
    with pytest.raises(Conflict):
        await a.append_owned(CODE, held.sync, 0, "m1", {"kind": "progress"})
    assert (await a.load(CODE)).logs[0] == []  # type: ignore[union-attr]


async def test_the_holder_numbers_its_events_after_any_other_writers(pair) -> None:
    """The holder numbers its move's event itself (no counter is incremented per move): after
    the last number its copy knows, or, when another process numbered an event since (a
    connection counted in), the next free one. The room's events stay one gapless sequence."""
    a, b = pair
    await Leases(a, "proc-a", 30).acquire(CODE)
    await a.commit(CODE, 0, DOC, [{"kind": "created"}], seats=1)
    held = await a.load(CODE)
    assert held is not None and held.seq == 1
    first = await a.append_owned(CODE, held.sync, 0, "m1", {"kind": "p"}, last=1)
    assert first.n == 2
    _, joined = await b.presence(CODE, "0", +1, {"kind": "connected"})
    assert joined == 3
    stale = await a.append_owned(CODE, held.sync, 0, "m2", {"kind": "p"}, last=first.n)
    assert stale.n == 4  # not refused: numbered after the other writer's event
    later = await a.append_owned(CODE, held.sync, 0, "m3", {"kind": "p"}, last=stale.n)
    assert later.n == 5
    events = await a.events_after(CODE, 0)
    assert events is not None and [n for n, _ in events] == [1, 2, 3, 4, 5]
    assert await a.last_event(CODE) == 5


async def test_a_commit_judged_before_a_lean_push_is_refused(pair) -> None:
    """The holder's lean push leaves the seat's revision as it was, so a commit judged on the
    log before it (a process without the lease ending the race) is refused by the log's
    length; judged on the log as it is, it stands."""
    a, b = pair
    await Leases(a, "proc-a", 30).acquire(CODE)
    ver, _ = await a.commit(CODE, 0, DOC, [], seats=1)
    held = await a.load(CODE)
    assert held is not None
    seen = await b.load(CODE)
    assert seen is not None and seen.logs[0] == [] and seen.revs == {}
    stored = await a.append_owned(CODE, held.sync, 0, "m1", {"kind": "p"})
    assert stored.rev == 0
    done = {**DOC, "state": "finished"}
    with pytest.raises(Conflict) as exc:
        await b.commit(CODE, ver, done, [], seats=1, revs={0: 0}, lengths={0: 0})
    assert exc.value.what == "log"
    await b.commit(CODE, ver, done, [], seats=1, revs={0: 0}, lengths={0: 1})
    assert (await b.load(CODE)).doc["state"] == "finished"  # type: ignore[union-attr]


async def test_a_lost_lean_push_is_found(pair) -> None:
    """A lean push whose answer was lost is found stored by its entry at its place (its
    revision did not move), with its event number, and asking again changes nothing."""
    a, _ = pair
    await Leases(a, "proc-a", 30).acquire(CODE)
    await a.commit(CODE, 0, DOC, [], seats=1)
    held = await a.load(CODE)
    assert held is not None
    stored = await a.append_owned(CODE, held.sync, 0, "m1", {"kind": "p", "moves": 1})
    found = await a.outcome(CODE, 0, 0, 0, "m1", {"kind": "p", "moves": 1})
    assert found is not None and found[:3] == stored[:3] == (1, 0, 1)
    assert await a.outcome(CODE, 0, 0, 0, "m1", {"kind": "p", "moves": 1}) == found
    # one that was not stored is not found, and never will be
    assert await a.outcome(CODE, 0, 1, 0, "m2", {"kind": "p", "moves": 2}) is None
    with pytest.raises(Conflict):
        await a.append(CODE, 1, 0, 1, 0, "m2", {"kind": "p", "moves": 2})


async def test_the_holders_stream_keeps_exactly_max_events(redis_url: str, key_prefix: str) -> None:
    """The lean append trims the room's stream once every TRIM_EVERY events, not at each: the
    stream holds at most that many more than max_events, and a client catching up sees
    exactly max_events of history (an older `last_event` gets a full resync, as before)."""
    store = Store.from_url(redis_url, key_prefix, max_events=10)
    try:
        await Leases(store, "proc-a", 30).acquire(CODE)
        await store.commit(CODE, 0, DOC, [], seats=1)
        held = await store.load(CODE)
        assert held is not None
        last = 0
        for i in range(40):
            stored = await store.append_owned(
                CODE, held.sync, 0, f"m{i}", {"kind": "p", "i": i}, last=last
            )
            last = stored.n
            kept = await store.redis.xlen(store.key(CODE, "events"))
            assert kept <= 10 + TRIM_EVERY - 1
        assert last == 40
        assert await store.redis.xlen(store.key(CODE, "events")) > 10  # trimmed lazily
        events = await store.events_after(CODE, last - 10)
        assert events is not None and [n for n, _ in events] == list(range(31, 41))
        assert await store.events_after(CODE, last - 11) is None
    finally:
        keys = [k async for k in store.redis.scan_iter(match=f"{key_prefix}*")]
        if keys:
            await store.redis.delete(*keys)
        await store.close()


# --- a randomized run: the holder's memory against the room rebuilt from Redis ---------------


def same_room(mine: Room, rebuilt: Room) -> None:
    assert mine.doc == rebuilt.doc
    assert set(mine.races) == set(rebuilt.races)
    for seat, race in mine.races.items():
        other = rebuilt.races[seat]
        assert [(e.move, e.at) for e in race.entries] == [(e.move, e.at) for e in other.entries]
        assert race.rev == other.rev
        assert race.game.view() == other.game.view(), f"seat {seat}"


@dataclass
class Side:
    service: RoomService
    leases: Leases
    owned: int = 0  # lean appends stored


def counting(side: Side) -> None:
    """Count the holder's fenced appends: the native one (nobody else listens, as here) and
    the lean script."""
    store = side.service.store
    owned, native = store.append_owned, store.append_native

    async def append_owned(*args: Any, **kw: Any) -> Any:
        out = await owned(*args, **kw)
        side.owned += 1
        return out

    async def append_native(*args: Any, **kw: Any) -> Any:
        out = await native(*args, **kw)
        side.owned += 1
        return out

    store.append_owned = append_owned  # type: ignore[method-assign]
    store.append_native = append_native  # type: ignore[method-assign]


ACTION = st.one_of(
    st.tuples(st.just("move"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("undo"), st.integers(0, 2), st.just(0)),
    st.tuples(st.just("foreign"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("takeover"), st.just(0), st.just(0)),
)


async def _run(redis_url: str, races: list[list[tuple[str, int, int]]]) -> None:
    prefix = f"solrace-test-{uuid.uuid4().hex[:12]}:"
    stores = [Store.from_url(redis_url, prefix) for _ in range(3)]
    sides = [
        Side(RoomService(stores[0]), Leases(stores[0], "proc-a", 30)),
        Side(RoomService(stores[1]), Leases(stores[1], "proc-b", 30)),
    ]
    for side in sides:
        counting(side)
    judge = RoomService(stores[2])  # rebuilds the room from Redis alone
    holder, other = sides
    lean = writes = 0
    try:
        made = await holder.service.create("p0", {"game": "klondike", "countdown": 0}, True)
        code = made["room"]
        for i in (1, 2):
            await holder.service.join(code, f"p{i}")
        await holder.leases.acquire(code)
        for actions in races:
            await holder.service.start(code, made["host_token"])
            await holder.service.tick(code)
            for kind, seat, pick in actions:
                if kind == "takeover":
                    # the holder stalls past its lease: the other process takes the room over,
                    # and the stale holder still believes it holds it (its next write is fenced)
                    await stores[0].redis.delete(stores[0].key(code, "lease"))
                    assert await other.leases.acquire(code) > 0
                    holder, other = other, holder
                    continue
                side = holder if kind in ("move", "undo") else other
                service = side.service
                room = (await service.load(code)).room if kind == "foreign" else None
                if room is None:
                    cached = service.cache.get(code)
                    room = cached.room if cached else (await service.load(code)).room
                if room.state != RACING or seat not in room.races:
                    continue
                moves = [str(mv) for mv in room.races[seat].game.legal_moves()]
                if not moves:
                    continue
                before = side.owned
                try:
                    await service.move(
                        code, seat, moves[pick % len(moves)], None, undo=kind == "undo"
                    )
                except ProtocolError:
                    continue  # not its turn to move any more, an undo refused: nothing stored
                if side is holder:
                    writes += 1
                    lean += side.owned - before
                    rebuilt = (await judge.load(code)).room
                    same_room(service.cache[code].room, rebuilt)
            # end the race (every seat resigns), rebuild once more, deal the next one
            for seat in range(3):
                try:
                    await holder.service.resign(code, seat)
                except ProtocolError:
                    pass
            rebuilt = (await judge.load(code)).room
            same_room(holder.service.cache[code].room, rebuilt)
            await holder.service.rematch(code, made["host_token"])
        assert lean == writes  # every move the holder stored was one lean append
    finally:
        keys = [k async for k in stores[0].redis.scan_iter(match=f"{prefix}*")]
        if keys:
            await stores[0].redis.delete(*keys)
        for store in stores:
            await store.close()


@settings(
    max_examples=15,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(races=st.lists(st.lists(ACTION, min_size=1, max_size=30), min_size=1, max_size=3))
def test_the_holders_memory_is_the_room_in_redis(redis_url: str, races) -> None:
    asyncio.run(_run(redis_url, races))
