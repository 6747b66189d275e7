"""The pieces of Redis Cluster support that need no cluster: REDIS_URL parsing, which client a
URL gives, and the plain pub/sub reader coming back after its connection is killed (on the
session's real Redis) and saying which channels may have lost messages."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from helpers.race import until
from redis.asyncio.cluster import RedisCluster
from solrace.server.store.pubsub import PlainReader, channels_of
from solrace.server.store.redis_conn import (
    TRANSIENT_ERRORS,
    ClusterURL,
    connect,
    is_cluster_url,
    parse_cluster_url,
)


def test_a_cluster_url_lists_its_nodes() -> None:
    assert parse_cluster_url("redis+cluster://10.0.0.1:7000,10.0.0.2:7001,r3:7002") == ClusterURL(
        [("10.0.0.1", 7000), ("10.0.0.2", 7001), ("r3", 7002)]
    )


def test_a_cluster_url_carries_credentials_tls_and_defaults() -> None:
    parsed = parse_cluster_url("rediss+cluster://app:s%40cret@a:7000,b?foo=1")
    assert parsed.nodes == [("a", 7000), ("b", 6379)]  # no port: Redis's own
    assert (parsed.tls, parsed.username, parsed.password) == (True, "app", "s@cret")
    assert parsed.options == {"foo": "1"}
    assert parse_cluster_url("redis+cluster://[::1]:7000").nodes == [("::1", 7000)]


@pytest.mark.parametrize(
    "url",
    [
        "redis://a:7000",  # not the cluster form
        "redis+cluster://",  # no node
        "redis+cluster://a:port",  # a port must be a number
        "redis+cluster://a:7000/3",  # a cluster has one database
    ],
)
def test_bad_cluster_urls_are_refused(url: str) -> None:
    with pytest.raises(ValueError):
        parse_cluster_url(url)


def test_the_url_picks_the_client() -> None:
    assert is_cluster_url("redis+cluster://a:1") and is_cluster_url("REDISS+CLUSTER://a:1")
    assert not is_cluster_url("redis://a:1/0")
    cluster = connect("redis+cluster://127.0.0.1:7000,127.0.0.1:7001", max_connections=8,
                      pool_timeout=1)  # fmt: skip
    assert isinstance(cluster, RedisCluster)
    assert sorted(n.port for n in cluster.nodes_manager.startup_nodes.values()) == [7000, 7001]
    single = connect("redis://127.0.0.1:7000/2", max_connections=8, pool_timeout=1)
    assert isinstance(single, aioredis.Redis) and not isinstance(single, RedisCluster)
    assert single.connection_pool.connection_kwargs["db"] == 2


def test_cluster_trouble_is_transient() -> None:
    """What a failover throws at a command must answer `busy` (retryable), not `internal`."""
    from redis.exceptions import (
        ClusterDownError,
        ConnectionError,
        MaxConnectionsError,
        MovedError,
        SlotNotCoveredError,
        TryAgainError,
    )

    for exc in (
        ConnectionError("x"),
        MaxConnectionsError("x"),
        ClusterDownError("x"),
        TryAgainError("x"),
        MovedError("1 127.0.0.1:7000"),
        SlotNotCoveredError("x"),
    ):
        assert isinstance(exc, TRANSIENT_ERRORS)


async def test_plain_reader_resubscribes_after_its_connection_is_killed(
    redis_url: str, key_prefix: str
) -> None:
    name = f"reader-{key_prefix.strip(':')}"
    client = aioredis.from_url(redis_url, client_name=name)
    got: list[tuple[bytes, bytes]] = []
    gaps: list[bytes] = []
    reader = PlainReader(client, lambda c, d: got.append((c, d)), gaps.extend)
    channels = [f"{key_prefix}room:{{{c}}}:pub".encode() for c in ("A", "B")]
    try:
        for ch in channels:
            await reader.subscribe(ch)
        await client.publish(channels[0], b"one")
        await until(lambda: got == [(channels[0], b"one")], "the first message")
        # the server drops the reader's connection, as a restart or a network cut would
        ours = [c["id"] for c in await client.client_list(_type="pubsub") if c.get("name") == name]
        assert len(ours) == 1
        assert await client.client_kill_filter(_id=ours[0]) == 1
        await until(lambda: sorted(gaps) == sorted(channels), "both channels reported lost")
        assert channels_of(reader) == set(channels)
        await client.publish(channels[1], b"two")
        await until(lambda: (channels[1], b"two") in got, "a message after the reconnect")
        await reader.unsubscribe(channels[0])
        await client.publish(channels[0], b"three")
        await client.publish(channels[1], b"four")
        await until(lambda: (channels[1], b"four") in got, "the channel still subscribed")
        await asyncio.sleep(0.05)
        assert (channels[0], b"three") not in got
    finally:
        await reader.aclose()
        await client.aclose()
