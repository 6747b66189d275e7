"""Leaderboards on a real Redis: what each keep rule does, pages in board order with their
rows, the cap and the expiry, exact packed scores, and one round trip per page."""

from __future__ import annotations

import pytest
from solrace.server.league.boards import PAGE_MAX, Boards
from solrace.server.store.redis_conn import connect


@pytest.fixture
async def boards(redis_url: str, key_prefix: str):
    redis = connect(redis_url, max_connections=4, pool_timeout=5)
    yield Boards(redis, key_prefix)
    keys = [k async for k in redis.scan_iter(match=f"{key_prefix}*")]
    if keys:
        await redis.delete(*keys)
    await redis.aclose()


async def test_best_keeps_the_lower_score_and_its_row(boards: Boards) -> None:
    first = await boards.submit("b", "p1", 500, {"name": "ann", "time": 500})
    worse = await boards.submit("b", "p1", 900, {"name": "ann2", "time": 900})
    better = await boards.submit("b", "p1", 300, {"name": "ann3", "time": 300})
    assert (first.placed, worse.placed, better.placed) == (True, False, True)
    assert worse.score == 500 and better.score == 300
    assert await boards.entry("b", "p1") == {
        "name": "ann3",
        "time": 300,
        "rank": 1,
        "player": "p1",
        "score": 300.0,
    }


async def test_first_last_and_add(boards: Boards) -> None:
    await boards.submit("f", "p", 5, {"n": 1}, keep="first")
    assert not (await boards.submit("f", "p", 1, {"n": 2}, keep="first")).placed
    assert (await boards.entry("f", "p") or {})["n"] == 1
    await boards.submit("l", "p", 1, {"n": 1}, keep="last")
    assert (await boards.submit("l", "p", 9, {"n": 2}, keep="last")).score == 9
    for _ in range(3):
        added = await boards.submit("w", "p", -1, {"name": "ann"}, keep="add")
    assert added.placed and added.score == -3


async def test_pages_in_order_with_ranks_and_next(boards: Boards) -> None:
    for i in range(7):
        await boards.submit("p", f"p{i}", 100 - i, {"name": f"n{i}"})
    one = await boards.page("p", 0, 3)
    assert [e["player"] for e in one["entries"]] == ["p6", "p5", "p4"]
    assert [e["rank"] for e in one["entries"]] == [1, 2, 3]
    assert one["total"] == 7 and one["next"] == 3
    last = await boards.page("p", 6, 3)
    assert [e["name"] for e in last["entries"]] == ["n0"] and last["next"] is None
    assert await boards.page("nothing", 0, 10) == {"total": 0, "entries": [], "next": None}
    with pytest.raises(ValueError):
        await boards.page("p", 0, PAGE_MAX + 1)


async def test_cap_drops_the_worst_entries_and_their_rows(boards: Boards) -> None:
    for i in range(10):
        await boards.submit("c", f"p{i}", i, {"i": i}, cap=4)
    assert await boards.size("c") == 4
    assert [e["i"] for e in (await boards.page("c", 0, 10))["entries"]] == [0, 1, 2, 3]
    assert await boards.redis.hlen(boards.keys("c")[1]) == 4
    late = await boards.submit("c", "late", 99, {"i": 99}, cap=4)
    assert not late.placed and await boards.entry("c", "late") is None


async def test_ttl_and_exact_packed_scores(boards: Boards) -> None:
    packed = 4_000_000_000_123_457  # below 2**53: a double holds it exactly
    await boards.submit("t", "p", packed, {}, ttl_ms=60_000)
    assert (await boards.entry("t", "p") or {})["score"] == packed
    for key in boards.keys("t"):
        assert 0 < await boards.redis.pttl(key) <= 60_000


async def test_keys_share_one_hash_tag(boards: Boards) -> None:
    zset, rows = boards.keys("daily:2026-11-23:klondike")
    tag = zset[zset.index("{") : zset.index("}") + 1]
    assert tag == "{daily:2026-11-23:klondike}" and tag in rows
