"""Room leases and fencing against a real Redis: two stores stand for two server processes.

A takeover is forced the way a dead or paused owner's lease ends: its lease key expires
(deleted here, as a PX expiry would), and the other process acquires the room."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from helpers.race import play, reached, sent_to, start_race, until
from helpers.servers import serving
from solrace.server.common.metrics import METRICS
from solrace.server.store.lease import Leases
from solrace.server.store.store import Conflict

DOC = {"code": "FENCE", "seats": [{"seat": 0}], "state": "racing"}
CODE = "FENCE"


async def test_first_acquirer_owns_the_room_and_the_other_waits(pair) -> None:
    a, b = pair
    la, lb = Leases(a, "proc-a", 30), Leases(b, "proc-b", 30)
    assert await la.acquire(CODE) == 1
    assert await lb.acquire(CODE) == 0  # held: b serves without the lease
    assert await la.acquire(CODE) == 1  # a renewal keeps the epoch
    assert a.fences == {CODE: 1} and b.fences == {}
    lease = await a.redis.get(a.key(CODE, "lease"))
    assert lease == b"1:proc-a" and 0 < await a.redis.pttl(a.key(CODE, "lease")) <= 30_000


async def test_a_stale_owner_is_fenced_after_a_takeover(pair) -> None:
    a, b = pair
    la, lb = Leases(a, "proc-a", 30), Leases(b, "proc-b", 30)
    await la.acquire(CODE)
    ver, _ = await a.commit(CODE, 0, DOC, [{"kind": "x"}], seats=1)
    stored = await a.append(CODE, ver, 0, 0, 0, "m1", {"kind": "progress"})
    assert stored.length == 1
    # a pauses past its lease; b serves the room and takes it over
    await a.redis.delete(a.key(CODE, "lease"))
    before = METRICS.rooms_taken_over._value.get()
    assert await lb.acquire(CODE) == 2
    assert METRICS.rooms_taken_over._value.get() == before + 1
    # a wakes up and writes what it judged from its cache: both writes are refused
    with pytest.raises(Conflict) as exc:
        await a.append(CODE, ver, 0, 1, 1, "m2", {"kind": "progress"})
    assert exc.value.what == "fence" and exc.value.have == 2
    assert a.fences == {}  # a forgot its lease: it reloads and judges again without it
    a.fences[CODE] = 1
    with pytest.raises(Conflict) as exc:
        await a.commit(CODE, ver, {**DOC, "state": "finished"}, [], seats=1)
    assert exc.value.what == "fence"
    loaded = await b.load(CODE)
    assert loaded.logs[0] == [b"m1"] and loaded.doc["state"] == "racing"
    # the new owner writes on; a's renewal finds the lease taken and keeps writing without it
    await b.append(CODE, ver, 0, 1, 1, "m2", {"kind": "progress"})
    assert await la.acquire(CODE) == 0 and a.fences == {}


async def test_a_released_lease_is_not_a_takeover(pair) -> None:
    a, b = pair
    la, lb = Leases(a, "proc-a", 30), Leases(b, "proc-b", 30)
    await la.acquire(CODE)
    await la.release(CODE)
    before = METRICS.rooms_taken_over._value.get()
    assert await lb.acquire(CODE) == 2
    assert METRICS.rooms_taken_over._value.get() == before
    await lb.release(CODE)
    await la.release(CODE)  # not a's any more: b's release stands, nothing happens
    assert await a.redis.get(a.key(CODE, "lease")) is None


async def test_writes_without_a_lease_are_not_fenced(pair) -> None:
    """The slow path: a connection that reached a process that does not own its room."""
    a, b = pair
    await Leases(a, "proc-a", 30).acquire(CODE)
    ver, _ = await b.commit(CODE, 0, DOC, [], seats=1)
    assert (await b.append(CODE, ver, 0, 0, 0, "m1", {"kind": "progress"})).length == 1


async def test_two_processes_a_stale_owners_move_is_fenced_then_judged_again(
    redis_url: str, key_prefix: str, wire
) -> None:
    """Two servers: A serves a race (it holds the lease) and renews it only every 30 s; B has a
    spectator of the room and renews every 0.2 s. A's lease is made to end (as if A had stalled
    past it), B takes the room over, and A's next move, judged on A's cached room, is refused
    by the fence (or, when a renewal of A's finds the lease gone first, judged without it);
    A reloads, judges again without the lease, and acks it once."""
    a_args = ["--heartbeat", "30"]
    b_args = ["--heartbeat", "0.2"]
    redis = aioredis.from_url(redis_url)
    async with (
        serving(redis_url, key_prefix, extra_args=a_args) as (sa,),
        serving(redis_url, key_prefix, extra_args=b_args) as (sb,),
    ):
        (host, _guest), _, code, _ = await start_race(sa.ws_url, wire)
        lease = f"{key_prefix}room:{{{code}}}:lease"
        assert (await redis.get(lease)).startswith(b"1:")
        await play(host, 2)
        eve = await wire(sb.ws_url)
        await eve.request({"type": "spectate", "room": code})
        await redis.delete(lease)  # A's lease ends while A is unaware
        for _ in range(200):
            held = await redis.get(lease)
            if held and held.startswith(b"2:"):
                break
            await asyncio.sleep(0.05)
        assert held and held.startswith(b"2:"), held  # B took the room over
        acks = await play(host, 1)
        assert acks and acks[0]["n"] == 3
        # A's move met the fence (judged on its stale cache), or a renewal of A's found the
        # lease gone first (a connection arriving renews it); either way A never wrote as owner
        # (the log line may reach the pipe's reader after the ack reached us: poll for it)
        try:
            await until(
                lambda: (
                    "write refused by the fence" in sa.log()
                    or "lease lost to another process" in sa.log()
                ),
                "A's log names the fence or the lost lease",
            )
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{sa.log()[-6000:]}") from None
        await sent_to(eve, lambda x: reached(x, None, 3))  # an event, or a coalesced frame
        assert (await redis.get(lease)).startswith(b"2:")  # A did not take it back
        snap = await (await wire(sb.ws_url)).request({"type": "spectate", "room": code})
        assert snap["snapshot"]["players"][0]["moves"] == 3
    await redis.aclose()
