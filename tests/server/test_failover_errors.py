"""What a Redis failover throws at a command is `busy` (retryable), never `internal`."""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from helpers.race import current_view, start_race
from helpers.servers import in_loop
from helpers.views import putt_move
from solrace.server.redis_conn import TRANSIENT_ERRORS
from solrace.server.redis_process import RedisProcess


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
            (a, _b), _, _, _ = await start_race(url, wire, players=2)
            view = current_view(a)
            batcher = transport.store.batcher
            direct = aioredis.Redis.from_url(redis.url)
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
