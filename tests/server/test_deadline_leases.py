"""Deadlines are at-least-once: a claimed deadline whose handler fails (the room's Redis
failing over) fires again, so a race nobody is left to finish still ends."""

from __future__ import annotations

import zlib

import pytest
import redis.asyncio as aioredis
from helpers.race import start_race, until
from helpers.servers import serving
from helpers.timing import scaled
from solrace.server.store.redis_process import RedisProcess
from solrace.server.store.store import DEADLINE_BUCKETS

#: these tests wait on real time (deadlines fire, fail and fire again): one at a time (tests/conftest.py)
pytestmark = pytest.mark.timing

GRACE = 1.0


async def test_a_grace_deadline_whose_handler_failed_fires_again(
    tmp_path, key_prefix, wire
) -> None:
    """A 2-seat race: seat 0 resigns, seat 1 drops. Its grace deadline comes due and is
    claimed, but its handler fails (Redis refuses the room's presence read, as a master
    failing over would). Once Redis answers again, the deadline fires again, seat 1 is
    resigned and the race has its results -- with no client doing anything more. The old
    claim took the deadline out before the handler ran: the race stayed `racing` for good."""
    with RedisProcess(data_dir=str(tmp_path)) as redis:
        async with serving(redis.url, key_prefix, extra_args=["--grace", str(GRACE)]) as (srv,):
            (a, b), _, code, _ = await start_race(srv.ws_url, wire, players=2)
            direct = aioredis.Redis.from_url(redis.url)
            bucket = f"{key_prefix}deadlines:{{dl{zlib.crc32(code.encode()) % DEADLINE_BUCKETS}}}"
            member = f"grace|{code}|1"
            assert (await a.request({"type": "resign"}))["type"] == "ok"
            await direct.execute_command("ACL", "LOG", "RESET")
            # of what runs while the room is idle, only the grace handler reads with HGETALL
            await direct.execute_command("ACL", "SETUSER", "default", "-hgetall")
            try:
                await b.close()
                await a.wait_event("connected", seat=1, connected=False)
                await until(lambda: _pending(direct, bucket, member), "the grace deadline", 5)
                set_at = await direct.zscore(bucket, member)

                async def failed() -> bool:
                    claimed = await direct.zscore(bucket, member) != set_at
                    log = await direct.execute_command("ACL", "LOG")
                    return claimed and any(b"hgetall" in repr(e).encode() for e in log)

                await until(failed, "the deadline claimed and its handler failed", 10)
            finally:
                await direct.execute_command("ACL", "SETUSER", "default", "+hgetall")
            results = await a.wait_event("results", timeout=scaled(10))
            by_seat = {row["seat"]: row["status"] for row in results["ranking"]}
            assert by_seat == {0: "resigned", 1: "resigned"}
            # handled: the deadline is gone
            await until(lambda: _gone(direct, bucket, member), "the deadline settled", 5)
            await direct.aclose()


async def _pending(direct: aioredis.Redis, bucket: str, member: str) -> bool:
    return await direct.zscore(bucket, member) is not None


async def _gone(direct: aioredis.Redis, bucket: str, member: str) -> bool:
    return await direct.zscore(bucket, member) is None


async def test_a_race_clock_whose_firing_failed_still_ends_the_race(
    tmp_path, key_prefix, wire
) -> None:
    """A race with a 1 s time limit; when its clock is due, Redis refuses the room's reload
    (as a master failing over would) for both the local timer's firing and the Redis
    deadline's. Once Redis answers again, the clock fires again (the local timer re-arms
    itself, the deadline was only leased) and the race ends with results."""
    with RedisProcess(data_dir=str(tmp_path)) as redis:
        async with serving(redis.url, key_prefix) as (srv,):
            (a,), _, code, _ = await start_race(srv.ws_url, wire, players=1, time_limit=1)
            direct = aioredis.Redis.from_url(redis.url)
            bucket = f"{key_prefix}deadlines:{{dl{zlib.crc32(code.encode()) % DEADLINE_BUCKETS}}}"
            member = f"tick|{code}"
            await until(lambda: _pending(direct, bucket, member), "the clock deadline", 5)
            set_at = await direct.zscore(bucket, member)
            await direct.execute_command("ACL", "LOG", "RESET")
            await direct.execute_command("ACL", "SETUSER", "default", "-hgetall")
            try:

                async def both_failed() -> bool:
                    claimed = await direct.zscore(bucket, member) != set_at
                    refused = sum(
                        int(e["count"]) for e in await direct.acl_log() if "hgetall" in str(e)
                    )
                    return claimed and refused >= 2

                await until(both_failed, "the clock fired twice and failed", 10)
            finally:
                await direct.execute_command("ACL", "SETUSER", "default", "+hgetall")
            results = await a.wait_event("results", timeout=scaled(10))
            assert [row["seat"] for row in results["ranking"]] == [0]
            await direct.aclose()
