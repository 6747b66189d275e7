"""server/common/shared.py: one fetch for everyone asking at once, a kept value for `ttl`, a bounded
table, and a failed fetch's error for every waiter with nothing kept."""

from __future__ import annotations

import asyncio

import pytest
from solrace.server.common.shared import Shared


async def test_askers_at_once_share_one_fetch_and_the_value_is_kept() -> None:
    shared: Shared[int] = Shared(ttl=3600)
    gate = asyncio.Event()

    async def fetch() -> int:
        await gate.wait()
        return 42

    askers = [asyncio.create_task(shared.get("k", fetch)) for _ in range(20)]
    await asyncio.sleep(0)
    gate.set()
    assert await asyncio.gather(*askers) == [42] * 20
    assert await shared.get("k", fetch) == 42
    assert shared.fetches == 1 and not shared.pending


async def test_a_failed_fetch_reaches_every_waiter_and_keeps_nothing() -> None:
    shared: Shared[int] = Shared(ttl=3600)
    gate = asyncio.Event()

    async def broken() -> int:
        await gate.wait()
        raise ConnectionError("redis away")

    askers = [asyncio.create_task(shared.get("k", broken)) for _ in range(3)]
    await asyncio.sleep(0)
    gate.set()
    for result in await asyncio.gather(*askers, return_exceptions=True):
        assert isinstance(result, ConnectionError)
    assert not shared.kept and not shared.pending

    async def ok() -> int:
        return 7

    assert await shared.get("k", ok) == 7  # the next asker fetches again


async def test_ttl_zero_keeps_nothing_and_the_table_is_bounded() -> None:
    counter = {"n": 0}

    async def fetch() -> int:
        counter["n"] += 1
        return counter["n"]

    none_kept: Shared[int] = Shared(ttl=0)
    assert [await none_kept.get("k", fetch) for _ in range(3)] == [1, 2, 3]
    bounded: Shared[int] = Shared(ttl=3600, size=4)
    for i in range(50):
        await bounded.get(f"key{i}", fetch)
    assert len(bounded.kept) == 4 and "key49" in bounded.kept
    bounded.clear()
    assert not bounded.kept


async def test_an_asker_that_gives_up_does_not_cancel_the_others_fetch() -> None:
    shared: Shared[str] = Shared(ttl=3600)
    gate = asyncio.Event()

    async def fetch() -> str:
        await gate.wait()
        return "page"

    first = asyncio.create_task(shared.get("k", fetch))
    await asyncio.sleep(0)
    second = asyncio.create_task(shared.get("k", fetch))
    await asyncio.sleep(0)
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    gate.set()
    assert await first == "page"
