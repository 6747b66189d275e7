"""Retention (`--record-days`) on a real Redis: a player's history keeps the newest
HISTORY_MAX record ids and none older than the retention; records and entries expire."""

from __future__ import annotations

import time
from typing import Any

import redis.asyncio as aioredis
from solrace.server.league.records import HISTORY_MAX, Records

PID = "mfrggzdfmztwq2lk"
DAY = 86_400_000


def line(i: int, at: int) -> dict[str, Any]:
    """What `save_packed` reads of a record: its id, when it finished, its players."""
    return {"id": f"{i:016x}", "finished_at": at, "players": [{"player": PID, "name": "ann"}]}


async def test_history_is_trimmed_by_count_and_by_age(redis_url, key_prefix) -> None:
    redis = aioredis.Redis.from_url(redis_url)
    records = Records(redis, key_prefix, days=30)
    now = int(time.time() * 1000)
    try:
        old = [line(i, now - 40 * DAY + i) for i in range(3)]  # older than the retention
        for rec in old:
            await records.save_packed(rec, b"x")
        for i in range(HISTORY_MAX + 5):
            await records.save_packed(line(100 + i, now - 20 * DAY + i), b"x")
        history = records.history_key(PID)
        ids = [m.decode() for m in await redis.zrange(history, 0, -1)]
        assert len(ids) == HISTORY_MAX  # by count: the 5 oldest of the recent went too
        assert ids[0] == f"{105:016x}" and ids[-1] == f"{100 + HISTORY_MAX + 4:016x}"
        assert not {r["id"] for r in old} & set(ids)  # by age (they were also the oldest)

        # by age alone: a history well under the count cap
        records2 = Records(redis, key_prefix + "b:", days=30)
        for rec in old:
            await records2.save_packed(rec, b"x")
        assert await redis.zcard(records2.history_key(PID)) == 3
        await records2.save_packed(line(999, now), b"x")
        kept = [m.decode() for m in await redis.zrange(records2.history_key(PID), 0, -1)]
        assert kept == [f"{999:016x}"]
        for key in (
            records2.record_key(f"{999:016x}"),
            records2.player_key(PID),
            records2.history_key(PID),
        ):
            assert 29 * DAY < await redis.pttl(key) <= 30 * DAY
    finally:
        keys = [k async for k in redis.scan_iter(match=f"{key_prefix}*")]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()


async def test_zero_days_keeps_for_good_but_still_caps_the_count(redis_url, key_prefix) -> None:
    redis = aioredis.Redis.from_url(redis_url)
    records = Records(redis, key_prefix, days=0)
    try:
        for i in range(HISTORY_MAX + 2):
            await records.save_packed(line(i, 1_000 + i), b"x")  # 1970: old, kept
        assert await redis.zcard(records.history_key(PID)) == HISTORY_MAX
        assert await redis.pttl(records.record_key(f"{0:016x}")) == -1
        assert await redis.pttl(records.history_key(PID)) == -1
    finally:
        keys = [k async for k in redis.scan_iter(match=f"{key_prefix}*")]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()
