"""A frozen Redis never hangs a move: connect and read timeouts on every connection.

Each test starts a Redis of its own and freezes it with SIGSTOP (never the session's Redis:
other tests share it). A frozen Redis still accepts connections and bytes (the kernel does),
it just never answers, which is what a stuck or unreachable Redis looks like to a client.
The bounds on waits below only keep a regression from hanging the suite; they are not speed
checks (the timeouts used are a fraction of them).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid
from collections.abc import Iterator

import pytest
import redis.asyncio as aioredis
from helpers.race import current_view, play, start_race
from helpers.views import putt_move
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import TimeoutError as RedisTimeoutError
from solrace.bench.server_process import ServerProcess
from solrace.server.store.redis_conn import (
    CONNECT_TIMEOUT,
    SOCKET_TIMEOUT,
    TRANSIENT_ERRORS,
    connect,
)
from solrace.server.store.redis_process import RedisProcess

#: these tests wait on real time (a frozen Redis answers nothing until the client's timeouts): one at a time (tests/conftest.py)
pytestmark = pytest.mark.timing

#: a regression (no timeout) must fail the test, not hang it
HANG = 60.0


@pytest.fixture
def own_redis(tmp_path) -> Iterator[RedisProcess]:
    proc = RedisProcess(data_dir=str(tmp_path)).start()
    try:
        yield proc
    finally:
        assert proc.proc is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.proc.pid, signal.SIGCONT)
        proc.stop()


@contextlib.contextmanager
def frozen(proc: RedisProcess) -> Iterator[None]:
    assert proc.proc is not None
    os.kill(proc.proc.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(proc.proc.pid, signal.SIGCONT)


def test_both_url_forms_get_timeouts() -> None:
    single = connect("redis://127.0.0.1:1/0", max_connections=2, pool_timeout=1)
    kw = single.connection_pool.connection_kwargs
    assert (kw["socket_connect_timeout"], kw["socket_timeout"]) == (CONNECT_TIMEOUT, SOCKET_TIMEOUT)
    tuned = connect(
        "redis://127.0.0.1:1/0?socket_timeout=0.5&socket_connect_timeout=0.25",
        max_connections=2,
        pool_timeout=1,
    )
    kw = tuned.connection_pool.connection_kwargs
    assert (kw["socket_connect_timeout"], kw["socket_timeout"]) == (0.25, 0.5)
    cluster = connect("redis+cluster://127.0.0.1:1?socket_timeout=0.5", max_connections=2,
                      pool_timeout=1)  # fmt: skip
    assert isinstance(cluster, RedisCluster)
    ckw = cluster.connection_kwargs
    assert (ckw["socket_connect_timeout"], ckw["socket_timeout"]) == (CONNECT_TIMEOUT, 0.5)


async def test_a_command_to_a_frozen_redis_times_out(own_redis: RedisProcess) -> None:
    """It fails with a transient error (the server answers `busy`), and the client works
    again once Redis does. What the timeout cannot tell: Redis, woken up, still runs the
    command it had read before it froze (so a `busy` after a timeout means "not known")."""
    client = connect(own_redis.url + "?socket_timeout=0.5", max_connections=4, pool_timeout=1)
    key = f"timeout-test-{uuid.uuid4().hex[:8]}"
    try:
        assert await client.ping()
        with frozen(own_redis):
            with pytest.raises(RedisTimeoutError) as caught:
                await asyncio.wait_for(client.set(key, "late"), HANG)
            assert isinstance(caught.value, TRANSIENT_ERRORS)
        assert await asyncio.wait_for(client.get(key), HANG) == b"late"  # run after all
        assert await client.set(key, "now") and await client.get(key) == b"now"
    finally:
        await client.aclose()


async def test_a_move_to_a_frozen_redis_answers_busy_and_loses_nothing(
    own_redis: RedisProcess, wire
) -> None:
    """The move answers `busy` instead of hanging; every move acked before is kept, the
    room stays consistent, and the player goes on. (The `busy` move itself may be stored once
    Redis wakes: a timeout cannot tell, see server/store/redis_conn.py.)"""
    prefix = f"solrace-test-{uuid.uuid4().hex[:12]}:"
    server = ServerProcess(own_redis.url + "?socket_timeout=1", prefix)
    await asyncio.to_thread(server.start)
    try:
        (player,), (token,), code, _ = await start_race(server.ws_url, wire, players=1)
        acked = await play(player, 3)
        assert len(acked) == 3
        view = current_view(player)
        move = {"type": "move", "move": putt_move(view), "n": view["moves"] + 1}
        with frozen(own_redis):
            reply = await player.request(move, timeout=HANG)
        assert (reply["type"], reply.get("code")) == ("error", "busy"), reply
        # Its retry as is (what a client does with `busy`): when Redis, woken, ran the script
        # it had read before it froze, the move was stored after all and the retry finds the
        # seat ahead; when the script's bytes went with the connection the client closed on
        # its timeout, the retry stores it now. Either way it is stored once, nothing acked is
        # lost.
        again = await player.request(move, timeout=HANG)
        if again["type"] == "ack":
            assert again["n"] == view["moves"] + 1, again
        else:
            assert (again["type"], again.get("code")) == ("error", "out_of_sync"), again
            assert again["expected"] == view["moves"] + 2
        other = await wire(server.ws_url)
        joined = await other.request({"type": "resume", "room": code, "token": token})
        assert joined["type"] == "joined", joined
        assert joined["snapshot"]["you"]["view"]["moves"] == view["moves"] + 1
        # and the race goes on from there
        more = await play(other, 1)
        assert more and more[0]["view"]["moves"] == view["moves"] + 2
    finally:
        await asyncio.to_thread(server.stop)


async def test_the_pubsub_reader_outlives_a_frozen_redis(own_redis: RedisProcess) -> None:
    """The reader's blocking read has its own wait (it is idle, not failing), and after a
    freeze it still delivers messages."""
    from solrace.server.store.pubsub import PlainReader

    client = connect(own_redis.url + "?socket_timeout=0.3", max_connections=4, pool_timeout=1)
    assert isinstance(client, aioredis.Redis)
    got: list[bytes] = []
    reader = PlainReader(client, lambda c, d: got.append(d))
    channel = b"timeout-test:pub"
    try:
        await reader.subscribe(channel)
        with frozen(own_redis):
            await asyncio.sleep(1.0)
        for _ in range(100):
            await client.publish(channel, b"after")
            if got:
                break
            await asyncio.sleep(0.1)
        assert b"after" in got
    finally:
        await reader.aclose()
        await client.aclose()
