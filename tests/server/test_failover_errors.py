"""What a Redis failover throws at a command is `busy` (retryable), never `internal`."""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from helpers.race import current_view, start_race
from helpers.servers import in_loop
from helpers.views import putt_move
from redis.exceptions import ConnectionError as RedisConnectionError
from solrace.server.store.redis_conn import TRANSIENT_ERRORS, transient
from solrace.server.store.redis_process import RedisProcess
from solrace.server.store.scripts import folding


class ForgetfulNode:
    """The move path's Redis client, except that a script it loads is gone again at once: the
    load reached another node than the one that runs the move (a replica promoted between
    the two), which answers NOSCRIPT again."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis

    def __getattr__(self, name: str) -> Any:
        return getattr(self.redis, name)

    async def script_load(self, script: Any) -> Any:
        sha = await self.redis.script_load(script)
        await self.redis.script_flush()
        return sha


def test_the_errors_of_a_failover_are_transient() -> None:
    """A connection reset or a timeout raised outside redis-py (an asyncio timeout, a reader's
    own ConnectionError), a script a promoted replica does not know yet, a write that reached
    a demoted master: each is answered `busy`."""
    from redis.exceptions import NoScriptError, ReadOnlyError

    for exc in (
        ConnectionResetError(),
        ConnectionError("pub/sub connection closed"),
        TimeoutError(),
        NoScriptError(),
        ReadOnlyError(),
    ):
        assert isinstance(exc, TRANSIENT_ERRORS), exc


async def test_a_move_meeting_an_unknown_script_is_busy_not_internal(
    tmp_path, key_prefix, wire
) -> None:
    with RedisProcess(data_dir=str(tmp_path)) as redis:
        async with in_loop(redis.url, key_prefix) as (transport, url):
            (a, _b), _, code, _ = await start_race(url, wire, players=2)
            view = current_view(a)
            batcher = transport.store.batcher
            direct = aioredis.Redis.from_url(redis.url)
            # another process listens to the room: the lease holder's move is then its lean
            # script (lua/owned.lua), which publishes it (alone, it is one native command)
            room = f"{key_prefix}room:{{{code}}}:"
            here = direct.register_script(folding("here", 1000, 60_000))
            await here(keys=[room + "here", room + "fence"], args=["other000", 1, 60_000])
            await direct.script_flush()
            batcher.redis = ForgetfulNode(batcher.redis)
            try:
                move = {"type": "move", "move": putt_move(view), "n": view["moves"] + 1}
                reply = await a.request_once(move)
            finally:
                batcher.redis = batcher.redis.redis
            assert reply["type"] == "error" and reply["code"] == "busy", reply
            ack = await a.request_once(move)  # sent again, as `busy` invites: stored once
            assert ack["type"] == "ack" and ack["n"] == view["moves"] + 1, ack
            await direct.aclose()


async def _torn_connection_error() -> Exception:
    """The error redis-py raises when a command writes on a connection another command's
    failover handling has just closed (its writer is gone), raised by redis-py's own code:
    an AttributeError up to redis-py 8.1 (`'NoneType' object has no attribute
    'writelines'`), a ConnectionError since 8.2 ("closed by the server before write")."""
    try:
        await aioredis.Connection()._send_packed_command([b"PING"])
    except (AttributeError, RedisConnectionError) as exc:
        return exc
    raise AssertionError("redis-py wrote on a connection it never opened")


async def test_a_connection_torn_down_under_a_command_is_transient() -> None:
    torn = await _torn_connection_error()
    assert transient(torn)
    try:
        getattr(None, "missing")  # noqa: B009  (a bug of ours stays one: `internal`)
    except AttributeError as ours:
        assert not transient(ours)


class LostAnswers:
    """The move path's client, except that a pipeline's answer never comes (the master
    holding the room dies with the append in flight)."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis

    def __getattr__(self, name: str) -> Any:
        return getattr(self.redis, name)

    def pipeline(self, transaction: bool = True) -> Any:
        return self

    def execute_command(self, *args: Any) -> None:
        pass

    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        raise RedisConnectionError("Connection closed by server.")


async def test_a_move_whose_outcome_check_meets_a_torn_connection_is_busy(
    tmp_path, key_prefix, wire
) -> None:
    """The failover seen in tests/server/test_cluster.py: a move's append gets no answer, and
    asking Redis whether it is stored first meets a connection that redis-py tore down under
    it (an error inside redis-py, `_torn_connection_error`). The server asks again and answers `busy` (not
    stored), never `internal`; the same move sent again is acked."""
    with RedisProcess(data_dir=str(tmp_path)) as redis:
        async with in_loop(redis.url, key_prefix) as (transport, url):
            (a, _b), _, _, _ = await start_race(url, wire, players=2)
            view = current_view(a)
            store, batcher = transport.store, transport.store.batcher
            real_outcome = store._outcome
            torn = [await _torn_connection_error()]

            async def outcome(**kw: Any) -> Any:
                if torn:
                    raise torn.pop()
                return await real_outcome(**kw)

            batcher.redis = LostAnswers(batcher.redis)
            store._outcome = outcome
            try:
                move = {"type": "move", "move": putt_move(view), "n": view["moves"] + 1}
                reply = await a.request_once(move)
            finally:
                batcher.redis = batcher.redis.redis
                store._outcome = real_outcome
            assert not torn  # the outcome check did meet the torn connection
            assert reply["type"] == "error" and reply["code"] == "busy", reply
            ack = await a.request_once(move)
            assert ack["type"] == "ack" and ack["n"] == view["moves"] + 1, ack
