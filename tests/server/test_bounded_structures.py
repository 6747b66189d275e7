"""Issue 10 item 8: every per-room or per-code structure of a server process is freed when no
longer used. Requests naming unknown rooms (68k bogus joins left 68k room locks behind) and
rooms that finished and emptied leave every table at its starting size (entries counted).

The server runs in the test's loop (a real Redis, a real port), so its tables can be counted.
"""

from __future__ import annotations

import asyncio
import inspect
import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.race import start_race, until
from helpers.servers import in_loop
from solrace.server.common.metrics import METRICS
from solrace.server.common.room_locks import RoomLocks
from solrace.server.net.conn import Limits
from solrace.server.net.transport import Transport
from solrace.server.solver.solving import Budgets

BOGUS = 300
ROOMS = 8


@pytest.fixture
async def server(redis_url: str, key_prefix: str) -> AsyncIterator[tuple[Transport, str]]:
    # every bucket a lookup draws on raised: the 300 bogus lookups of a connection in no room
    # would otherwise wait on the lobby rate (1/s), and nothing here is about rate limits
    limits = Limits(
        burst=100_000, rate=100_000.0, lobby_burst=100_000, lobby_rate=100_000.0, grace=0.5
    )
    async with in_loop(redis_url, key_prefix, limits) as (transport, url):
        assert transport.service.solver is not None
        # quick post-race verdicts, Klondike's too (its compiled search's own is 1,000,000)
        transport.service.solver.budgets = Budgets(verdict=2_000, verdicts={})
        yield transport, url


def sizes(t: Transport) -> dict[str, int]:
    """Entries of every table a server process keys by room, code, connection or task."""
    service, hub, rooms, store = t.service, t.hub, t.rooms, t.store
    reader: Any = store._reader
    out = {
        "conns": len(t.conns),
        "transport.tasks": len(t.tasks),
        "service.locks": len(service.locks),
        "service.cache": len(service.cache),
        "service.watched": len(service.watched),
        "service.rechecks": len(service.rechecks),
        "service.tasks": len(service.tasks),
        "hub.rooms": len(hub.rooms),
        "hub.recent": len(hub.recent),
        "hub.tops": len(hub.tops),
        "hub.windows": len(hub.windows),
        "hub.players": len(hub.players),
        "hub.spectators": len(hub.spectators),
        "hub.ticks": len(hub.ticks),
        "hub.heard": len(hub.heard),
        "hub.delayed": len(hub.delayed),
        "hub.gap_timers": len(hub.gap_timers),
        "hub.tasks": len(hub.tasks),
        "supervisor.timers": len(rooms.timers),
        "supervisor.watcher_timers": len(rooms.watcher_timers),
        "supervisor.tasks": len(rooms.tasks),
        "store.channels": len(store._channels),
        "store.lobby_pending": len(store._lobby_pending),
        "store.fences": len(store.fences),
        "pubsub.wanted": len(reader.wanted) if reader is not None else 0,
        "batcher.tasks": len(store.batcher._tasks),
        "metric label sets": sum(
            len(metric._metrics) for metric in (METRICS.redis_errors, METRICS.redis_retries)
        ),
    }
    assert service.solver is not None
    verdicts = inspect.getclosurevars(service.finished).nonlocals["verdicts"]  # build()'s
    out["verdicts.tasks"] = len(verdicts.tasks)
    out["records.tasks"] = len(t.records.tasks)
    return out


async def settled(t: Transport, start: dict[str, int]) -> None:
    """Wait until every table is back to its starting size (timers and grace periods run
    out, post-race verdicts are stored); fail naming those that are not."""

    def back() -> bool:
        now = sizes(t)
        return all(now[k] <= start.get(k, 0) for k in now)

    try:
        await until(back, "every table back at its starting size", timeout=60)
    except AssertionError:
        now = sizes(t)
        grown = {k: (start.get(k, 0), v) for k, v in now.items() if v > start.get(k, 0)}
        raise AssertionError(
            f"tables still larger than at the start (start, now): {grown}"
        ) from None


async def test_unknown_room_codes_leave_nothing_behind(server, wire) -> None:
    transport, url = server
    c = await wire(url)
    start = sizes(transport)
    for i in range(BOGUS):
        code = "".join(secrets.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(5))
        kind = ("join", "spectate", "resume")[i % 3]
        msg = {"type": kind, "room": code, "name": "x", "token": "t" * 40}
        assert (await c.request(msg))["code"] == "no_room"
    await settled(transport, start)


async def test_finished_rooms_leave_nothing_behind(server, wire) -> None:
    transport, url = server
    start = sizes(transport)
    for _ in range(ROOMS):
        clients, _, code, _ = await start_race(url, wire, 2)
        watcher = await wire(url)
        await watcher.request({"type": "spectate", "room": code})
        for c in clients:
            assert (await c.request({"type": "resign"}))["type"] == "ok"
        await watcher.wait_event("results")
        for c in [*clients, watcher]:
            await c.close()
    await settled(transport, start)
    # and a room whose racers simply went away: their grace periods finish the race
    clients, _, code, _ = await start_race(url, wire, 2)
    for c in clients:
        await c.close()
    await settled(transport, start)
    assert transport.service.cache == {}


async def test_a_lease_taken_for_a_room_no_longer_served_is_handed_back(server, wire) -> None:
    """The renewal loop runs over the rooms served as it starts; one whose last connection
    left meanwhile (its lease just released) kept an epoch here for good."""
    transport, url = server
    (host, guest), _, code, _ = await start_race(url, wire, 2)
    leases = transport.rooms.leases
    assert leases is not None and code in transport.store.fences
    await host.close()
    await guest.close()
    await until(lambda: code not in transport.hub.rooms, "the room no longer served here")
    assert await leases.acquire(code) == 0  # as a renewal that raced the release would
    assert code not in transport.store.fences
    assert await transport.store.redis.get(transport.store.key(code, "lease")) is None


async def test_a_room_lock_goes_with_its_last_user_even_a_cancelled_waiter() -> None:
    idle: list[str] = []
    locks = RoomLocks(idle.append)
    order: list[str] = []
    held = asyncio.Event()

    async def first() -> None:
        async with locks.hold("AAAAA"):
            held.set()
            await asyncio.sleep(0.05)
            order.append("first")

    async def second() -> None:
        async with locks.hold("AAAAA"):
            order.append("second")

    one = asyncio.ensure_future(first())
    await held.wait()
    waiter = asyncio.ensure_future(second())
    cancelled = asyncio.ensure_future(second())
    await asyncio.sleep(0)
    assert len(locks) == 1 and locks.busy("AAAAA")
    cancelled.cancel()
    await asyncio.gather(one, waiter, cancelled, return_exceptions=True)
    assert order == ["first", "second"]  # one at a time, in turn
    assert len(locks) == 0 and idle == ["AAAAA"]  # gone once, with its last user
