"""The plain pub/sub reader under concurrent use, on the session's real Redis.

A process subscribes to a room's channel when a connection of the room arrives, so a burst of
joins (200 connections at once in the two-process benchmark) calls `subscribe` from many tasks
at the same time. redis-py's PubSub is not safe for that: each concurrent first command took
a connection of its own from the reader's pool (4 at most), so the burst failed with
MaxConnectionsError, and the repair that followed raced the subscribes still under way
('NoneType' object has no attribute 'writelines').
"""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis
from helpers.race import until
from solrace.server.store.pubsub import PlainReader, channels_of


async def test_concurrent_subscribes_share_one_connection(redis_url: str, key_prefix: str) -> None:
    name = f"reader-{key_prefix.strip(':')}"
    client = aioredis.from_url(redis_url, client_name=name)
    got: list[tuple[bytes, bytes]] = []
    errors: list[str] = []
    gaps: list[bytes] = []
    reader = PlainReader(client, lambda c, d: got.append((c, d)), gaps.extend, errors.append)
    channels = [f"{key_prefix}room:{{R{i}}}:pub".encode() for i in range(60)]
    try:
        await asyncio.gather(*(reader.subscribe(ch) for ch in channels))
        assert channels_of(reader) == set(channels)
        ours = [c for c in await client.client_list(_type="pubsub") if c.get("name") == name]
        assert len(ours) == 1, "one connection for every channel"
        for ch in channels:
            await client.publish(ch, b"m:" + ch)
        await until(lambda: len(got) == len(channels), "a message on every channel")
        assert sorted(got) == sorted((ch, b"m:" + ch) for ch in channels)
        assert errors == [] and gaps == [], "no connection was lost on the way"
        # and the same burst unsubscribing while others subscribe
        more = [f"{key_prefix}room:{{S{i}}}:pub".encode() for i in range(30)]
        await asyncio.gather(
            *(reader.unsubscribe(ch) for ch in channels[:30]),
            *(reader.subscribe(ch) for ch in more),
        )
        assert channels_of(reader) == set(channels[30:]) | set(more)
        assert errors == []
    finally:
        await reader.aclose()
        await client.aclose()


async def test_subscribes_during_a_repair_are_not_lost(redis_url: str, key_prefix: str) -> None:
    """Subscribes that arrive while the reader's connection is being replaced end up on the
    new connection, and a failure of the old one never takes the new one down."""
    name = f"reader-{key_prefix.strip(':')}"
    client = aioredis.from_url(redis_url, client_name=name)
    got: list[tuple[bytes, bytes]] = []
    gaps: list[bytes] = []
    reader = PlainReader(client, lambda c, d: got.append((c, d)), gaps.extend)
    first = f"{key_prefix}room:{{A}}:pub".encode()
    later = [f"{key_prefix}room:{{L{i}}}:pub".encode() for i in range(40)]
    try:
        await reader.subscribe(first)
        ours = [c["id"] for c in await client.client_list(_type="pubsub") if c.get("name") == name]
        assert await client.client_kill_filter(_id=ours[0]) == 1
        await asyncio.gather(*(reader.subscribe(ch) for ch in later))
        await until(lambda: first in gaps, "the lost channel reported")
        await until(lambda: channels_of(reader) == {first, *later}, "every channel subscribed")
        for ch in (first, *later):
            await client.publish(ch, b"x")
        await until(lambda: len(got) == 1 + len(later), "a message on every channel")
        live = [c for c in await client.client_list(_type="pubsub") if c.get("name") == name]
        assert len(live) == 1
    finally:
        await reader.aclose()
        await client.aclose()
