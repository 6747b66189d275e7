"""Under a burst the store queues for a Redis connection instead of failing, and a room that
stays contended gets the retryable `busy` refusal, never `internal` (real Redis throughout)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
import redis
import redis.asyncio as aioredis
from redis.exceptions import MaxConnectionsError
from solrace.protocol.messages import ProtocolError
from solrace.server.race import service as service_mod
from solrace.server.race.service import RoomService
from solrace.server.store.store import Store


async def _burst(store: Store, n: int) -> list[int]:
    """n rooms written and read back at once: n commands want a connection at the same moment."""

    async def one(i: int) -> int:
        code = f"P{i:04d}"
        await store.commit(
            code, 0, {"code": code, "seats": [], "state": "lobby"}, [{"kind": "x"}], seats=0
        )
        loaded = await store.load(code)
        assert loaded is not None
        return loaded.ver

    return await asyncio.gather(*(one(i) for i in range(n)))


async def _clients_named(redis_url: str, name: str) -> int:
    r = aioredis.from_url(redis_url)
    try:
        return sum(1 for c in await r.client_list() if c.get("name") == name)
    finally:
        await r.aclose()


async def test_300_concurrent_requests_queue_on_a_small_pool(
    redis_url: str, key_prefix: str
) -> None:
    name = f"pooltest-{uuid.uuid4().hex[:8]}"
    store = Store.from_url(redis_url, key_prefix, max_connections=8, client_name=name)
    try:
        vers = await _burst(store, 300)
        assert vers == [1] * 300
        opened = await _clients_named(redis_url, name)
        assert 1 <= opened <= 8  # bounded: the other 292 waited for a free connection
    finally:
        keys = [k async for k in store.redis.scan_iter(match=f"{key_prefix}*")]
        if keys:
            await store.redis.delete(*keys)
        await store.close()


async def test_the_default_pool_fails_the_same_burst(redis_url: str, key_prefix: str) -> None:
    """Why the blocking pool: redis-py's plain pool refuses instead of waiting."""
    store = Store(aioredis.from_url(redis_url, max_connections=8), key_prefix)
    try:
        with pytest.raises(MaxConnectionsError):
            await _burst(store, 300)
    finally:
        # the burst's other requests may still hold the 8 connections: clean up on a client
        # of its own
        cleaner = aioredis.from_url(redis_url)
        keys = [k async for k in cleaner.scan_iter(match=f"{key_prefix}*")]
        if keys:
            await cleaner.delete(*keys)
        await cleaner.aclose()
        await store.close()


async def test_exhausted_retries_answer_busy_and_change_nothing(
    redis_url: str, key_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer bumps the room's version during every attempt: the service backs off,
    then refuses with `busy` (retryable), and the stored room is as before."""
    monkeypatch.setattr(service_mod, "RETRIES", 3)
    store = Store.from_url(redis_url, key_prefix)
    svc = RoomService(store)
    other = redis.Redis.from_url(redis_url)  # a second writer, e.g. another server process
    try:
        made = await svc.create("ann", None, True)
        code = made["room"]
        meta = store.key(code, "meta")
        attempts = []

        def contended(room, now):
            attempts.append(now)
            other.hincrby(meta, "ver", 1)  # someone else commits first, every time
            return room.set_ready(0, True, now)

        with pytest.raises(ProtocolError) as exc:
            await svc.update(code, contended)
        assert exc.value.code == "busy"
        assert len(attempts) == 3
        loaded = await store.load(code)
        assert loaded is not None and loaded.doc["seats"][0]["ready"] is False
    finally:
        other.close()
        keys = [k async for k in store.redis.scan_iter(match=f"{key_prefix}*")]
        if keys:
            await store.redis.delete(*keys)
        await store.close()
