"""The lease holder's native append (`Store.append_native`): one `XADD ... NOMKSTREAM` of the
move to the holder's tail (server/store/lua/tail.lua), whose key names the fence's counter
the holder loaded the room under. The tests check the fence without a script: a stale
holder's append is refused and stores nothing, while every append it was answered for
survives the takeover; a write without the lease, a lost answer's outcome and a change of
who listens refuse the holder's next append; an event another writer numbered refuses the
holder's stale number; what is in the tail is what a load, a resume and a commit see."""

from __future__ import annotations

import pytest
from solrace.server.store.lease import Leases
from solrace.server.store.scripts import FOLD_EVERY
from solrace.server.store.store import Conflict, Store

DOC = {"code": "NATIVE", "seats": [{"seat": 0}, {"seat": 1}], "state": "racing"}
CODE = "NATIVE"


async def _held(store: Store, owner: str = "proc-a"):
    await Leases(store, owner, 30).acquire(CODE)
    loaded = await store.load(CODE)
    assert loaded is not None and loaded.sync and not loaded.others
    return loaded


async def test_a_stale_lease_holders_native_append_is_refused(pair) -> None:
    """The holder appends natively; another process takes the room over (its acquisition
    folds the tail in and deletes it); the old holder's next append finds no key and is
    refused, storing nothing, and it forgets its lease. Every move it was answered for is in
    the new holder's load, which writes on from there."""
    a, b = pair
    await Leases(a, "proc-a", 30).acquire(CODE)
    await a.commit(CODE, 0, DOC, [{"kind": "created"}], seats=2)
    held = await _held(a)
    one = await a.append_native(CODE, held.sync, 0, "m1", {"kind": "p"}, last=held.seq)
    two = await a.append_native(CODE, held.sync, 1, "n1", {"kind": "p"}, last=one.n, length=0)
    assert (one.length, one.rev, one.n) == (1, 0, 2) and two.n == 3
    # nothing but the tail holds them yet: one command a move
    assert await a.redis.llen(a.log_key(CODE, 0)) == 0
    # a client catching up sees them (the read folds the tail in; the tail stays the holder's)
    caught = await b.events_after(CODE, 1)
    assert caught is not None and [n for n, _ in caught] == [2, 3]
    assert await b.last_event(CODE) == 3 and await b.events_after(CODE, 4) is None
    assert await a.redis.exists(a.key(CODE, "tail:" + held.sync.decode())) == 1
    three = await a.append_native(CODE, held.sync, 0, "m1b", {"kind": "p"}, last=two.n, length=1)
    assert three.n == 4
    await a.append_native(CODE, held.sync, 0, "m1b", {"kind": "p"}, pop=True, last=4, length=2)
    await a.redis.delete(a.key(CODE, "lease"))  # a stalls past its lease
    assert await Leases(b, "proc-b", 30).acquire(CODE) == 2
    assert await a.redis.exists(a.key(CODE, "tail:" + held.sync.decode())) == 0
    with pytest.raises(Conflict) as exc:
        await a.append_native(CODE, held.sync, 0, "m2", {"kind": "p"}, last=5, length=1)
    assert exc.value.what == "fence" and exc.value.have == 2
    assert a.fences == {}
    mine = await b.load(CODE)
    assert mine is not None and mine.logs == {0: [b"m1"], 1: [b"n1"]} and mine.seq == 5
    assert mine.revs == {0: 1}  # the pop bumped the seat's revision
    events = await b.events_after(CODE, 0)
    assert events is not None and [n for n, _ in events] == [1, 2, 3, 4, 5]
    # the stale holder's key was never made again: its append stays refused
    with pytest.raises(Conflict):
        await a.append_native(CODE, held.sync, 0, "m2", {"kind": "p"}, last=5, length=1)
    stored = await b.append_native(CODE, mine.sync, 0, "m2", {"kind": "p"}, last=5, length=1)
    assert stored.n == 6
    assert (await b.load(CODE)).logs[0] == [b"m1", b"m2"]  # type: ignore[union-attr]


async def test_a_write_without_the_lease_refuses_the_native_append(pair) -> None:
    """A process without the lease writes the room (checked by version, length, revision):
    it folds the holder's tail in first, so its checks see the holder's moves, and deletes
    it, so the holder's next append is refused (`sync`) and the holder reloads."""
    a, b = pair
    await Leases(a, "proc-a", 30).acquire(CODE)
    ver, _ = await a.commit(CODE, 0, DOC, [], seats=2)
    held = await _held(a)
    await a.append_native(CODE, held.sync, 0, "m1", {"kind": "p"})
    # b judged seat 0 on a log of one move: the tail's move is seen
    await b.append(CODE, ver, 0, 1, 0, "x", {"kind": "p"})
    with pytest.raises(Conflict) as exc:
        await a.append_native(CODE, held.sync, 0, "m2", {"kind": "p"}, last=1, length=1)
    assert exc.value.what == "sync" and a.fences == {CODE: 1}
    fresh = await a.load(CODE)
    assert fresh is not None and fresh.sync != held.sync and fresh.logs[0] == [b"m1", b"x"]
    stored = await a.append_native(
        CODE, fresh.sync, 0, "m2", {"kind": "p"}, last=fresh.seq, rev=1, length=2
    )
    assert stored.n == 3 and (await a.load(CODE)).logs[0] == [b"m1", b"x", b"m2"]  # type: ignore[union-attr]


async def test_an_event_numbered_by_another_writer_refuses_the_stale_number(pair) -> None:
    """A connection counted in numbers an event after the holder's (the tail folded in
    first): the holder's next append under the number its copy knows is refused by the
    tail's own order, and after a reload the room's events are one gapless sequence."""
    a, b = pair
    await Leases(a, "proc-a", 30).acquire(CODE)
    await a.commit(CODE, 0, DOC, [{"kind": "created"}], seats=2)
    held = await _held(a)
    first = await a.append_native(CODE, held.sync, 0, "m1", {"kind": "p"}, last=held.seq)
    _, joined = await b.presence(CODE, "0", +1, {"kind": "connected"})
    assert (first.n, joined) == (2, 3)
    with pytest.raises(Conflict) as exc:
        await a.append_native(CODE, held.sync, 0, "m2", {"kind": "p"}, last=first.n, length=1)
    assert exc.value.what == "sync"
    fresh = await a.load(CODE)
    assert fresh is not None and fresh.seq == 3 and fresh.logs[0] == [b"m1"]
    later = await a.append_native(CODE, fresh.sync, 0, "m2", {"kind": "p"}, last=3, length=1)
    assert later.n == 4
    events = await a.events_after(CODE, 0)
    assert events is not None and [n for n, _ in events] == [1, 2, 3, 4]


async def test_a_lost_native_append_is_found_or_never_stored(pair) -> None:
    """A native append whose answer was lost: `outcome` folds the tail in (finding the move
    at its place, with its event number) and deletes it, so one still on its way is refused
    when it runs and is never stored."""
    a, _ = pair
    await Leases(a, "proc-a", 30).acquire(CODE)
    await a.commit(CODE, 0, DOC, [], seats=2)
    held = await _held(a)
    stored = await a.append_native(CODE, held.sync, 0, "m1", {"kind": "p", "moves": 1})
    found = await a.outcome(CODE, 0, 0, 0, "m1", {"kind": "p", "moves": 1})
    assert found is not None and found[:3] == stored[:3] == (1, 0, 1)
    held = await a.load(CODE)
    assert held is not None
    assert await a.outcome(CODE, 0, 1, 0, "m2", {"kind": "p", "moves": 2}) is None
    with pytest.raises(Conflict):
        await a.append_native(CODE, held.sync, 0, "m2", {"kind": "p"}, last=1, length=1)
    assert (await a.load(CODE)).logs[0] == [b"m1"]  # type: ignore[union-attr]


async def test_pops_pushes_and_folds_rebuild_the_same_logs(pair) -> None:
    """Pushes and undos through the tail, folded every FOLD_EVERY events by the holder (and
    by a reader before it reads): the logs, revisions and events are those a checked append
    would have left, and the holder's commit sees every move (its length check stands)."""
    a, b = pair
    await Leases(a, "proc-a", 30).acquire(CODE)
    ver, _ = await a.commit(CODE, 0, DOC, [], seats=2)
    held = await _held(a)
    logs: dict[int, list[bytes]] = {0: [], 1: []}
    revs = {0: 0, 1: 0}
    last = 0
    for i in range(3 * FOLD_EVERY + 5):
        seat = i % 2
        pop = i % 5 == 4 and bool(logs[seat])
        entry = logs[seat][-1].decode() if pop else f"m{i}"
        stored = await a.append_native(
            CODE, held.sync, seat, entry, {"kind": "p", "i": i}, pop=pop, last=last,
            rev=revs[seat], length=len(logs[seat]),
        )  # fmt: skip
        if pop:
            logs[seat].pop()
        else:
            logs[seat].append(entry.encode())
        assert (stored.length, stored.n) == (len(logs[seat]), last + 1)
        revs[seat] = stored.rev
        last = stored.n
    # the holder folded its tail every FOLD_EVERY events: it never holds more
    tail = a.key(CODE, "tail:" + held.sync.decode())
    assert await a.redis.xlen(tail) < FOLD_EVERY
    seen = await b.load(CODE)  # a reader's load folds the rest in (the tail stays the holder's)
    assert seen is not None and seen.logs == logs and seen.seq == last
    assert {s: seen.revs.get(s, 0) for s in (0, 1)} == revs
    assert await a.redis.exists(tail) == 1
    again = await a.append_native(CODE, held.sync, 0, "z", {"kind": "p"}, last=last,
                                  rev=revs[0], length=len(logs[0]))  # fmt: skip
    logs[0].append(b"z")
    done = {**DOC, "state": "finished"}
    lengths = {s: len(logs[s]) for s in (0, 1)}
    await a.commit(CODE, ver, done, [{"kind": "results"}], seats=2, revs=revs, lengths=lengths)
    final = await b.load(CODE)
    assert final is not None and final.logs == logs and final.seq == again.n + 1
