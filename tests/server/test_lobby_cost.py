"""What the lobby costs Redis (issue 10, item 6: 100 connections asking once a second each, with
113 public rooms, stalled a move elsewhere for 20 s). Counted with INFO commandstats on a Redis
of the test's own, so no other test's commands are in the figures."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from solrace.server.race.service import RoomService
from solrace.server.store.redis_process import RedisProcess
from solrace.server.store.store import Store


@pytest.fixture
async def own_store(tmp_path: Path) -> AsyncIterator[Store]:
    with RedisProcess(data_dir=str(tmp_path)) as proc:
        store = Store.from_url(proc.url, "lobbycost:")
        await store.ready()
        yield store
        await store.close()


def row(code: str) -> dict:
    return {"room": code, "game": "golf", "state": "lobby", "players": 1, "max_players": 8}


async def calls(store: Store) -> dict[str, int]:
    """Commands Redis has run so far, by name (INFO itself left out)."""
    stats = await store.redis.info("commandstats")
    return {
        name.removeprefix("cmdstat_"): int(v["calls"])
        for name, v in stats.items()
        if name != "cmdstat_info"
    }


async def spent(store: Store, before: dict[str, int]) -> dict[str, int]:
    after = await calls(store)
    return {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}


async def test_many_askers_cost_one_page_read(own_store: Store) -> None:
    for i in range(113):
        await own_store.set_lobby(f"R{i:04d}", 1, row(f"R{i:04d}"))
    svc = RoomService(own_store)
    svc.lobby_cache.ttl = 3600  # the test must not depend on how fast it runs
    before = await calls(own_store)
    together = await asyncio.gather(*(svc.lobby() for _ in range(100)))
    after_each = [await svc.lobby() for _ in range(50)]
    cost = await spent(own_store, before)
    # one page: one script (the summary's page: commandstats counts the commands it runs too,
    # a ZRANGEBYLEX and a HGET per row) and one pipeline of its rows' spectator counts
    assert cost == {"evalsha": 1, "zrangebylex": 1, "hget": 100 + 100}
    assert svc.lobby_cache.fetches == 1
    first, cursor = together[0]
    assert all(page == (first, cursor) for page in together + after_each)
    assert len(first) == 100 and cursor == "R0099"
    rest, end = await svc.lobby(cursor)
    assert [r["room"] for r in rest] == [f"R{i:04d}" for i in range(100, 113)] and end is None


async def test_a_page_costs_the_same_script_however_many_rooms(own_store: Store) -> None:
    """The summary is paged: reading a page is one script whatever the number of rooms listed
    (and never a read of every room)."""
    svc = RoomService(own_store)
    svc.lobby_cache.ttl = 0  # every ask reads the store
    costs = []
    for total in (10, 500):
        for i in range(total):
            await own_store.set_lobby(f"N{i:04d}", 1, row(f"N{i:04d}"))
        before = await calls(own_store)
        rows, _ = await svc.lobby()
        costs.append(await spent(own_store, before))
        assert len(rows) == min(total, 100)
    # bounded by the page (100 rows), not by the rooms listed
    assert costs == [
        {"evalsha": 1, "zrangebylex": 1, "hget": 10 + 10},
        {"evalsha": 1, "zrangebylex": 1, "hget": 100 + 100},
    ]


async def test_a_change_made_here_shows_at_once(own_store: Store) -> None:
    """The cache never hides this process's own changes: a room it lists is there at the next ask."""
    svc = RoomService(own_store)
    svc.lobby_cache.ttl = 3600
    assert (await svc.lobby())[0] == []
    made = await svc.create("host", {"public": True}, True)
    assert [r["room"] for r in (await svc.lobby())[0]] == [made["room"]]


async def test_the_reply_frame_is_encoded_once_per_page(own_store: Store) -> None:
    """Every asker gets the page's rows as they were encoded once, with its own ref."""
    from solrace.protocol import messages as m

    await own_store.set_lobby("F0001", 1, row("F0001"))
    svc = RoomService(own_store)
    svc.lobby_cache.ttl = 3600
    first = m.decode(await svc.lobby_frame("", 7), max_size=1 << 20)
    again = m.decode(await svc.lobby_frame("", None), max_size=1 << 20)
    assert m.validate_server(first) is first
    rows = [{**row("F0001"), "spectators": 0}]
    assert first == {"type": "lobby", "rooms": rows, "next": None, "ref": 7}
    assert again == {"type": "lobby", "rooms": rows, "next": None}
    assert len(svc.lobby_cache.frames) == 1 and svc.lobby_cache.fetches == 1
