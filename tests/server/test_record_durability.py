"""A race's record outlives the process that finished the race: a reminder in Redis, set
before the results are committed, is fired by whichever process is alive and writes the
record from the room (server/league/records.py `owe`, server/race/service.py `owed_record`)."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis
from helpers.race import play, start_race, until, until_refused
from helpers.servers import serving
from solrace.protocol import messages as m
from solrace.protocol.records import unpack
from solrace.server.common.codes import shown
from solrace.server.league.records import RECORD_DUE_MS
from solrace.server.store.redis_process import RedisProcess

#: these tests wait on real time (record reminders come due): one at a time (tests/conftest.py)
pytestmark = pytest.mark.timing

#: the first process's record reminders are due 3 s after the results, not 15 s: the tests
#: wait for a new process to fire them (the rematch test keeps 15 s: it acts before they are due)
DUE_SOON = ["--record-due", "3"]


async def test_a_record_is_written_after_its_writer_was_killed(tmp_path, key_prefix, wire) -> None:
    """The results are committed, the record write fails (Redis refuses SET for a while) and
    the server is SIGKILLed before it could try again: a new process, with no client doing
    anything, writes the record once its reminder is due."""
    with RedisProcess(data_dir=str(tmp_path)) as redis:
        direct = aioredis.Redis.from_url(redis.url)
        async with serving(redis.url, key_prefix, extra_args=DUE_SOON) as (srv,):
            (a,), _, code, _ = await start_race(srv.ws_url, wire, players=1)
            await play(a, 3)
            await direct.execute_command("ACL", "SETUSER", "default", "-set")
            try:
                assert (await a.request({"type": "resign"}))["type"] == "ok"
                results = await a.wait_event("results")
                await until_refused(direct, "set", 2)  # the first write and its first retry
                srv.kill()
            finally:
                await direct.execute_command("ACL", "SETUSER", "default", "+set")
        key = f"{key_prefix}record:{{{results['record']}}}"
        assert not await direct.exists(key)  # lost, as it was before the reminder
        async with serving(redis.url, key_prefix) as _:
            await until(
                lambda: direct.exists(key), "the owed record written", RECORD_DUE_MS / 1000 + 30
            )
        record = unpack(await direct.get(key))
        # the room as logs show it (a private code is the room's key; records are public)
        assert record["room"] == shown(code) and record["moves"] == results["moves"]
        assert [p["status"] for p in record["players"]] == ["resigned"]
        deadlines = [k async for k in direct.scan_iter(match=f"{key_prefix}deadlines:*")]
        for k in deadlines:  # the reminder is gone once paid
            assert not [m for m in await direct.zrange(k, 0, -1) if m.startswith(b"record|")]
        await direct.aclose()


async def test_a_rematch_writes_the_owed_record_before_clearing_its_moves(
    tmp_path, key_prefix, wire
) -> None:
    """As above, and the host asks for a rematch on a new process before the reminder is
    due: the rematch would clear the race's moves, so the record is written first."""
    with RedisProcess(data_dir=str(tmp_path)) as redis:
        direct = aioredis.Redis.from_url(redis.url)
        async with serving(redis.url, key_prefix) as (srv,):
            (a,), (token,), code, host_token = await start_race(srv.ws_url, wire, players=1)
            await play(a, 2)
            await direct.execute_command("ACL", "SETUSER", "default", "-set")
            try:
                assert (await a.request({"type": "resign"}))["type"] == "ok"
                results = await a.wait_event("results")
                await until_refused(direct, "set", 2)
                srv.kill()
            finally:
                await direct.execute_command("ACL", "SETUSER", "default", "+set")
        key = f"{key_prefix}record:{{{results['record']}}}"
        async with serving(redis.url, key_prefix) as (srv2,):
            b = await wire(srv2.ws_url)
            assert (await b.request({"type": "resume", "room": code, "token": token}))[
                "type"
            ] == "joined"
            assert not await direct.exists(key)
            rematch = await b.request({"type": "rematch", "host_token": host_token})
            assert rematch["type"] == "ok", rematch
            assert await direct.exists(key)  # written before the rematch was committed
            assert not await direct.exists(f"{key_prefix}room:{{{code}}}:log:0")
        assert unpack(await direct.get(key))["moves"] == results["moves"]
        await direct.aclose()


async def test_a_race_counts_in_its_players_figures_after_its_writer_was_killed(
    tmp_path, key_prefix, wire
) -> None:
    """The standings are owed under the record's reminder, after the record: a keyed
    player's race whose finishing process could not write the record (Redis refuses SET), so
    applied no standings either, and was SIGKILLed, counts in the player's figures once
    another process fires the reminder. (Before, the standings were applied on their own by
    the finishing process only: a crash before them lost them for good.)"""
    with RedisProcess(data_dir=str(tmp_path)) as redis:
        direct = aioredis.Redis.from_url(redis.url)
        async with serving(redis.url, key_prefix, extra_args=DUE_SOON) as (srv,):
            a, pid = await hello(wire, srv.ws_url, "D" * 20 + "-durable-player-key-0123456789")
            opts = {"game": "puttputt", "countdown": 0}
            created = await a.request({"type": "create", "name": "ann", "options": opts})
            assert created["type"] == "joined", created
            started = await a.request({"type": "start", "host_token": created["host_token"]})
            assert started["type"] == "ok", started
            await a.wait_for(lambda x: x["type"] == "snapshot")
            await play(a, 3)
            await direct.execute_command("ACL", "SETUSER", "default", "-set")
            try:
                assert (await a.request({"type": "resign"}))["type"] == "ok"
                results = await a.wait_event("results")
                await until_refused(direct, "set", 2)  # the first writes and their first retries
                srv.kill()
            finally:
                await direct.execute_command(
                    "ACL", "SETUSER", "default", "+set", "+zremrangebyscore"
                )
        assert pid is not None and [r["player"] for r in results["ranking"]] == [pid]
        stats = f"{key_prefix}player:{{{pid}}}:games"
        assert not await direct.hget(stats, "puttputt:races")  # not counted by the dead process
        async with serving(redis.url, key_prefix) as _:
            await until(
                lambda: direct.hget(stats, "puttputt:races"),
                "the owed standings applied",
                RECORD_DUE_MS / 1000 + 30,
            )
        assert int(await direct.hget(stats, "puttputt:races")) == 1
        assert await direct.exists(f"{key_prefix}record:{{{results['record']}}}")
        await direct.aclose()


async def hello(wire, url: str, key: str):  # type: ignore[no-untyped-def]
    client = await wire(url, hello=False)
    welcome = await client.request(
        {"type": "hello", "version": m.VERSION, "client": "solrace-tests", "player_key": key}
    )
    assert welcome["type"] == "welcome", welcome
    return client, welcome["player"]
