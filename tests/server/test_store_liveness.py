"""Liveness and deadlines in the store (real Redis): a silent process is counted out once, by
one process, only after a window of seeing it missing, and never by a process whose own beats
are failing; deadlines are spread over buckets and each due one is handed out once."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator, Callable

import pytest
from helpers.race import play, sent_to, start_race
from helpers.servers import serving
from solrace.server.store import store as store_mod
from solrace.server.store.redis_process import free_port
from solrace.server.store.store import Store

#: these tests wait on real time (heartbeats, paused processes and grace periods): one at a time (tests/conftest.py)
pytestmark = pytest.mark.timing


@pytest.fixture
async def stores(redis_url: str, key_prefix: str) -> AsyncIterator[Callable[..., Store]]:
    made: list[Store] = []

    def make(url: str = redis_url, liveness_ms: int = 200) -> Store:
        s = Store.from_url(url, key_prefix, liveness_ms=liveness_ms)
        made.append(s)
        return s

    yield make
    first = made[0]
    keys = [k async for k in first.redis.scan_iter(match=f"{key_prefix}*")]
    if keys:
        await first.redis.delete(*keys)
    for s in made:
        await s.close()


async def test_a_silent_process_is_counted_out_after_the_window(stores) -> None:
    a, b, c = stores(), stores(), stores()
    last_beat = time.monotonic()  # A's key is set after this, and lives 200 ms
    assert await a.heartbeat("A", 1) is False  # beating; nobody counted it out
    await a.note_connection("A", "ROOM1", "0", +1)
    await a.note_connection("A", "ROOM1", "spectators", +2)
    await b.heartbeat("B", 1)
    await c.heartbeat("C", 1)
    window_ms = 400
    assert await b.claim_dead(0, window_ms) == []  # A is alive
    # A stops beating; its key expires after liveness_ms (200 ms)
    claimed: list = []
    while not claimed:
        await b.heartbeat("B", 2)
        await c.heartbeat("C", 2)
        claimed = await b.claim_dead(0, window_ms) + await c.claim_dead(0, window_ms)
        await asyncio.sleep(0.05)
        assert time.monotonic() - last_beat < 30  # only a bound for a test that would hang
    # not before the key's expiry plus a full window of seeing it missing
    assert time.monotonic() - last_beat >= 0.2 + window_ms / 1000
    assert claimed == [("A", {"ROOM1|0": 1, "ROOM1|spectators": 2})]  # by one of them, once
    assert await b.claim_dead(0, window_ms) == [] and await c.claim_dead(0, window_ms) == []
    assert {m.decode() for m in await b.redis.smembers(b.procs_key)} == {"B", "C"}
    # A was only paused: its next beat learns it was counted out (once), and it is back
    assert await a.heartbeat("A", 3) is True
    assert await a.heartbeat("A", 4) is False
    assert {m.decode() for m in await b.redis.smembers(b.procs_key)} == {"A", "B", "C"}


async def test_a_process_that_comes_back_stops_the_count(stores) -> None:
    a, b = stores(), stores()
    await a.heartbeat("A", 1)
    await b.heartbeat("B", 1)
    await asyncio.sleep(0.3)  # A's key is gone: B starts to suspect it
    await b.heartbeat("B", 2)
    assert await b.claim_dead(0, 400) == []
    assert "A" in b._suspects
    # A beats again (its Redis node was failing over, say). Its key lives a fraction of a
    # second here, so a stall of the machine between the beat and the check can let it lapse
    # again: a few tries, each a fresh beat followed at once by the check.
    for _ in range(5):
        await a.heartbeat("A", 2)
        if await b.claim_dead(0, 400) == [] and "A" not in b._suspects:
            break
    else:
        raise AssertionError(f"A is still suspected after beating again: {b._suspects}")


async def test_nobody_is_counted_out_by_a_process_whose_beats_fail(stores) -> None:
    a, b = stores(), stores()
    await a.heartbeat("A", 1)
    await b.heartbeat("B", 1)
    cut_off = stores(f"redis://127.0.0.1:{free_port()}/0")  # B's view when it cannot reach Redis
    assert await cut_off.heartbeat("B", 2) is False  # a failed beat does not raise
    assert await cut_off.claim_dead(0, 100) == []
    # B's last good beat grows old while A is silent: B counts nobody out
    await asyncio.sleep(0.5)
    assert await b.claim_dead(0, 300) == []
    await asyncio.sleep(0.5)
    assert await b.claim_dead(0, 300) == []
    assert {m.decode() for m in await b.redis.smembers(b.procs_key)} == {"A", "B"}


async def test_retire_leaves_nothing_behind(stores) -> None:
    a = stores()
    await a.heartbeat("A", 1)
    await a.note_connection("A", "R", "0", +1)
    await a.retire("A")
    assert not [k async for k in a.redis.scan_iter(match=f"{a.prefix}*proc*")]
    assert await a.redis.smembers(a.procs_key) == set()


async def test_deadlines_spread_over_buckets_and_each_is_claimed_once(stores) -> None:
    a, b = stores(), stores()
    codes = [f"D{i:03d}" for i in range(40)]
    for i, code in enumerate(codes):
        await a.add_deadline(f"tick|{code}", 1000 + i)
        await a.add_deadline(f"grace|{code}|1", 5000 + i)
    buckets = {a.deadline_bucket(f"tick|{c}") for c in codes}
    assert len(buckets) == store_mod.DEADLINE_BUCKETS  # every bucket in use
    assert a.deadline_bucket(f"tick|{codes[0]}") == a.deadline_bucket(f"grace|{codes[0]}|1")
    one, two = await asyncio.gather(a.claim_due(2000), b.claim_due(2000))
    assert sorted(d.member for d in one + two) == sorted(f"tick|{c}" for c in codes)  # each once
    assert await a.claim_due(2000) == []
    for due in one + two:
        assert await a.settle_deadline(due)  # handled: gone
    later = await b.claim_due(10_000)
    assert sorted(d.member for d in later) == sorted(f"grace|{c}|1" for c in codes)


async def test_a_paused_process_counts_its_players_in_again(redis_url, key_prefix, wire) -> None:
    """A process stopped (SIGSTOP) longer than the liveness window is counted out by the other
    one (its players show as disconnected); when it runs again it learns so at its next beat
    and counts its still-open connections in: nobody is resigned when the grace period ends."""
    args = ["--heartbeat", "0.2", "--grace", "3"]
    async with serving(redis_url, key_prefix, count=2, extra_args=args) as (sa, sb):
        (a, _b), _, code, _ = await start_race(sa.ws_url, wire)
        eve = await wire(sb.ws_url)
        await eve.request({"type": "spectate", "room": code})
        os.kill(sa.proc.pid, signal.SIGSTOP)
        try:
            for seat in (0, 1):
                await sent_to(eve, lambda x, s=seat: _connected(x, s, False), timeout=30)
        finally:
            os.kill(sa.proc.pid, signal.SIGCONT)
        for seat in (0, 1):
            await sent_to(eve, lambda x, s=seat: _connected(x, s, True), timeout=30)
        await asyncio.sleep(4)  # past the grace period the count-out started
        assert not [x for x in eve.received if x.get("kind") in ("resigned", "results")]
        acks = await play(a, 2)
        assert acks and acks[-1]["status"] == "racing"
        snap = (await eve.request({"type": "spectate", "room": code}))["snapshot"]
        assert [p["connected"] for p in snap["players"]] == [True, True]
        assert [p["status"] for p in snap["players"]] == ["racing", "racing"]


def _connected(msg: dict, seat: int, connected: bool) -> bool:
    return msg.get("kind") == "connected" and msg["seat"] == seat and msg["connected"] is connected


async def test_a_claimed_deadline_is_leased_not_taken(stores) -> None:
    """A claim leases a deadline: unsettled (its handler failed, its claimer died) it is due
    again when the lease runs out; settled, it is gone; set anew while claimed (a new grace
    period), settling the old claim leaves the new one; `again_at` makes it due sooner."""
    a, b = stores(), stores()
    await a.add_deadline("tick|L0001", 1000)
    await a.add_deadline("tick|L0002", 1000)
    await a.add_deadline("tick|L0003", 1000)
    first = await a.claim_due(2000, lease_ms=5000)
    assert sorted(d.member for d in first) == ["tick|L0001", "tick|L0002", "tick|L0003"]
    assert await b.claim_due(6999) == []  # leased to a until 7000
    one, two, three = sorted(first)
    await a.add_deadline(two.member, 9000)  # set anew meanwhile
    assert await a.settle_deadline(two) is False and await a.deadline_at(two.member) == 9000
    assert await a.settle_deadline(three, again_at=3000)  # failed: due again at 3000
    assert [d.member for d in await b.claim_due(3000)] == [three.member]
    again = await b.claim_due(7000)  # a never settled it: b gets it
    assert [d.member for d in again] == [one.member]
    assert await b.settle_deadline(again[0]) and await a.deadline_at(one.member) is None
    assert await a.settle_deadline(one) is False  # a's stale claim settles nothing
