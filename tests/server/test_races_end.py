"""Races always end: a seat gone since the lobby is counted out, and a stored move whose
follow-up failed still finishes its race."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from helpers.race import current_view, play, seated_room, start_race, until, until_refused
from helpers.servers import serving
from helpers.tcp_proxy import AnswerLosingProxy
from helpers.timing import scaled
from helpers.views import putt_move
from solrace.server.store.redis_process import RedisProcess

#: these tests wait on real time (grace periods and retried ends): one at a time (tests/conftest.py)
pytestmark = pytest.mark.timing

GRACE = 1.0


async def test_seat_gone_since_the_lobby_is_counted_out_after_the_start(
    redis_url, key_prefix, wire
) -> None:
    async with serving(redis_url, key_prefix, extra_args=["--grace", str(GRACE)]) as (srv,):
        host = await wire(srv.ws_url)
        created = await host.request(
            {"type": "create", "name": "host", "options": {"game": "puttputt", "countdown": 0}}
        )
        b = await wire(srv.ws_url)
        assert (await b.request({"type": "join", "room": created["room"], "name": "b"}))[
            "seat"
        ] == 1
        await b.close()
        await host.wait_event("connected", seat=1, connected=False)
        # the grace deadline set at the disconnect comes and goes while the room is a lobby
        await asyncio.sleep(GRACE * 3)
        started = await host.request({"type": "start", "host_token": created["host_token"]})
        assert started["type"] == "ok", started
        await host.wait_event("start")
        assert (await host.request({"type": "resign"}))["type"] == "ok"
        results = await host.wait_event("results", timeout=20)
        by_seat = {row["seat"]: row["status"] for row in results["ranking"]}
        assert by_seat == {0: "resigned", 1: "resigned"}


async def test_a_stored_move_whose_answer_was_lost_is_acked(tmp_path, key_prefix, wire) -> None:
    """Redis runs the append but its answer never reaches the server (lost on the way: the
    server's socket timeout fires): the server finds the move stored and acks it, rather than
    answering `busy` or `internal`."""
    with RedisProcess(data_dir=str(tmp_path)) as redis:
        proxy = AnswerLosingProxy(redis.port)
        # the lost answer is found by the socket timeout: a bound on a round trip through
        # the proxy, so scaled like every other (a busy machine's round trip can pass 0.5 s)
        timeout = f"?socket_timeout={scaled(0.5)}"
        async with proxy, serving(proxy.url(timeout), key_prefix) as (srv,):
            (a,), _, code, _ = await start_race(srv.ws_url, wire, players=1)
            await play(a, 1)
            view = current_view(a)
            # of this room's commands, only a move's append is an XADD ... NOMKSTREAM (the
            # lease holder's native append to its tail: Store.append_native)
            proxy.lose_answers_to(b"NOMKSTREAM")
            ack = await a.request({"type": "move", "move": putt_move(view), "n": 2}, timeout=60)
            proxy.lose_answers_to(None)
            assert proxy.lost == 1  # the append's answer was lost
            assert ack["type"] == "ack" and ack["n"] == 2, ack
            direct = aioredis.Redis.from_url(redis.url)
            assert await direct.llen(f"{key_prefix}room:{{{code}}}:log:0") == 2
            await direct.aclose()
            assert (await play(a, 1))[0]["n"] == 3  # and the seat plays on


async def test_a_race_whose_end_failed_to_be_stored_ends_later(tmp_path, key_prefix, wire) -> None:
    """The last racer's last move is stored and acked, but the commit that ends the race fails
    (Redis refuses the room's reload for a while): the server tries again until the results
    are out, with no client doing anything more."""
    with RedisProcess(data_dir=str(tmp_path)) as redis:
        async with serving(redis.url, key_prefix) as (srv,):
            (a,), _, _, _ = await start_race(srv.ws_url, wire, players=1)
            direct = aioredis.Redis.from_url(redis.url)
            await direct.execute_command("ACL", "SETUSER", "default", "-hgetall")
            try:
                acks = await play(a, 1000)  # moves use the cached game: no reload needed
                assert acks[-1]["status"] != "racing"
                # the end fails, and so does the retry it scheduled: two refused reloads
                await until_refused(direct, "hgetall", 2)
            finally:
                await direct.execute_command("ACL", "SETUSER", "default", "+hgetall")
            results = await a.wait_event("results", timeout=60)
            assert results["ranking"][0]["status"] == acks[-1]["status"]
            await direct.aclose()


async def test_a_race_left_unfinished_by_a_dead_server_ends_when_its_room_is_loaded(
    tmp_path, key_prefix, wire
) -> None:
    """As above, and the server dies before it could try again (SIGKILL), with no deadline in
    Redis to remind anyone: the next process that loads the room finishes the race. (With no
    longest race, `--max-race 0`: else the race's clock at its end is a deadline in Redis.)"""
    with RedisProcess(data_dir=str(tmp_path)) as redis:
        direct = aioredis.Redis.from_url(redis.url)
        async with serving(redis.url, key_prefix, extra_args=["--max-race", "0"]) as (srv,):
            (a,), (token,), code, _ = await start_race(srv.ws_url, wire, players=1)
            deadlines = f"{key_prefix}deadlines:*"

            async def no_deadline() -> bool:
                return not [
                    k async for k in direct.scan_iter(match=deadlines) if await direct.zcard(k)
                ]

            await until(no_deadline, "the start's own clock deadline has fired")
            await direct.execute_command("ACL", "SETUSER", "default", "-hgetall", "-zadd")
            try:
                acks = await play(a, 1000)
                assert acks[-1]["status"] != "racing"
                srv.kill()
            finally:
                await direct.execute_command("ACL", "SETUSER", "default", "+hgetall", "+zadd")
        async with serving(redis.url, key_prefix) as (srv2,):
            b = await wire(srv2.ws_url)
            joined = await b.request({"type": "resume", "room": code, "token": token})
            assert joined["type"] == "joined", joined
            if joined["snapshot"]["state"] != "finished":
                await b.wait_event("results", timeout=60)
        await direct.aclose()


async def test_every_race_ends_by_the_servers_longest_race(redis_url, key_prefix, wire) -> None:
    """`--max-race` (issue 22): a race with no time limit, whose racers stay connected and do
    nothing, ends when the server's longest race is over (every seat `timeout`), and a time
    limit longer than that is cut to it: no race can stay racing for good."""
    async with serving(redis_url, key_prefix, extra_args=["--max-race", "1"]) as (srv,):
        for limit in (0, 600):
            clients, _, _, host_token = await seated_room(
                srv.ws_url, wire, players=2, time_limit=limit
            )
            started = await clients[0].request({"type": "start", "host_token": host_token})
            assert started["type"] == "ok", started
            start = await clients[0].wait_event("start")
            assert start["ends_at"] == start["starts_at"] + 1000, (limit, start)
            results = await clients[0].wait_event("results", timeout=20)
            assert [row["status"] for row in results["ranking"]] == ["timeout", "timeout"]
            for c in clients:
                await c.close()
