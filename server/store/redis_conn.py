"""A redis-py asyncio client from a REDIS_URL: one Redis, or a Redis Cluster.

    redis://[user:pass@]host:port[/db]                 one Redis (or rediss:// for TLS)
    redis+cluster://[user:pass@]host:port[,host:port...]   a Redis Cluster, any of its nodes
    rediss+cluster://...                               the same over TLS

The cluster form lists startup nodes only: the client asks them for the slot map and
follows MOVED/ASK redirections itself, so one live node is enough to start. Nothing
here runs MULTI on the cluster: redis-py's cluster transaction pipeline runs in threads
of its own, so the store keeps every multi-key write in a Lua script on one hash tag.

Timeouts: a Redis that stops answering (frozen, a machine gone without a reset) must not hang
a move forever, so every connection has a connect and a read timeout (`CONNECT_TIMEOUT`,
`SOCKET_TIMEOUT`, or `?socket_connect_timeout=S&socket_timeout=S` in either URL form); a
command that times out fails, and the server answers `busy`. What the timeout cannot tell is
whether Redis ran the command: a Redis that was only stalled (SIGSTOP, a long fork, a
pause) still runs what it had read once it wakes, even from a connection the client has
closed (a reset does not discard bytes already queued on an accepted socket). A move answered
`busy` so may be stored after all; its retry with the same `n` then finds the seat ahead
(tests/server/test_redis_timeouts.py shows what the player sees).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, TypeAlias
from urllib.parse import parse_qs, unquote, urlsplit

import redis
import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import (
    ClusterDownError,
    ClusterError,
    MovedError,
    NoScriptError,
    ReadOnlyError,
    RedisClusterException,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from solrace.server.store.hiredis_packing import pack_with_hiredis

#: a cluster node's connections, per `max_connections` (the single Redis's bounded pool)
CLUSTER_POOL_FACTOR = 4

#: seconds to open a connection to Redis, and to wait for any reply (URL options override).
#: Every command of the server is short (the move's script runs in well under a millisecond),
#: so a reply this late means a Redis that is stuck or gone: the move is answered `busy`.
#: Set here, not left to redis-py: its default read timeout is none before 8.0 (a frozen
#: Redis hung a move for good) and 5 s since.
CONNECT_TIMEOUT = 2.0
SOCKET_TIMEOUT = 3.0

#: the client the store holds: one Redis or a cluster
Client: TypeAlias = aioredis.Redis | RedisCluster

CLUSTER_SCHEMES = {"redis+cluster": False, "rediss+cluster": True}

#: errors that mean "Redis is briefly unreachable or moving" (a failover, a resharding, a full
#: pool): the request may be retried as is, so clients get `busy`, never `internal`. Besides
#: redis-py's own: Python's ConnectionError and TimeoutError (an asyncio timeout, a socket
#: reset, the pub/sub reader's "connection closed"), NOSCRIPT (a promoted replica does not
#: have the scripts loaded on its old master; a move's batch loads them once and sends again,
#: and a load that reached another node than the one answering left the move unrun) and
#: READONLY (a write that reached a master demoted to a replica): none ran the command.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    ConnectionError,  # Python's: ConnectionResetError, BrokenPipeError, ...
    TimeoutError,  # Python's (asyncio.TimeoutError is the same class)
    NoScriptError,
    ReadOnlyError,
    RedisConnectionError,  # MaxConnectionsError is one
    RedisTimeoutError,
    ClusterDownError,
    TryAgainError,
    MovedError,  # AskError's subclass: a redirection the client could not follow in time
    ClusterError,
    RedisClusterException,  # SlotNotCoveredError: a slot with no master during a failover
)


#: where redis-py's own code lives (`transient`)
_REDIS_DIR = os.path.dirname(redis.__file__) + os.sep


def transient(exc: BaseException) -> bool:
    """Whether a command's error means only that Redis was briefly away (`TRANSIENT_ERRORS`):
    the command did not run, or `Store.outcome` can tell whether it did, and the client gets
    `busy`.

    Also an AttributeError raised inside redis-py itself: during a cluster failover one
    command's ClusterDownError closes every node's connections (`RedisCluster.aclose`), those
    in use by other commands too, whose next write or read then finds the connection's
    writer gone (`'NoneType' object has no attribute 'writelines'`): a connection lost, not
    a server bug (seen in tests/server/test_cluster.py's failover, answered `internal`). An
    AttributeError of the server's own code stays an error."""
    if isinstance(exc, TRANSIENT_ERRORS):
        return True
    if isinstance(exc, AttributeError):
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        return tb is not None and tb.tb_frame.f_code.co_filename.startswith(_REDIS_DIR)
    return False


@dataclass
class ClusterURL:
    """The parts of a redis+cluster:// URL."""

    nodes: list[tuple[str, int]]
    tls: bool = False
    username: str | None = None
    password: str | None = None
    options: dict[str, str] = field(default_factory=dict)


def is_cluster_url(url: str) -> bool:
    return urlsplit(url).scheme.lower() in CLUSTER_SCHEMES


def parse_cluster_url(url: str) -> ClusterURL:
    """`redis+cluster://[user:pass@]h1:p1,h2:p2[?opt=v]` into its nodes and credentials.

    urlsplit cannot parse a comma-separated host list as a netloc (the port part is not a
    number), so the authority is split by hand.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in CLUSTER_SCHEMES:
        raise ValueError(f"not a cluster URL (want redis+cluster://): {url!r}")
    if parts.path not in ("", "/", "/0"):
        raise ValueError("a Redis Cluster has one database: no /db in a cluster URL")
    authority = parts.netloc
    username = password = None
    if "@" in authority:
        creds, authority = authority.rsplit("@", 1)
        user, sep, pw = creds.partition(":")
        username = unquote(user) or None
        password = unquote(pw) if sep else None
    nodes = []
    for item in authority.split(","):
        item = item.strip()
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep:
            host, port = item, "6379"
        host = host.strip("[]")  # an IPv6 literal
        if not host or not port.isdigit():
            raise ValueError(f"bad cluster node {item!r} in {url!r}")
        nodes.append((host, int(port)))
    if not nodes:
        raise ValueError(f"no nodes in {url!r}")
    options = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    return ClusterURL(nodes, CLUSTER_SCHEMES[scheme], username, password, options)


def connect(
    url: str,
    *,
    max_connections: int,
    pool_timeout: float,
    client_name: str | None = "solrace",
) -> Client:
    """A client for `url`: a RedisCluster for the cluster form, else a Redis on a blocking pool.

    The single Redis's pool blocks a burst until a connection is free (redis-py's default pool
    raises at once). redis-py's cluster client has no blocking pool: each node gets
    CLUSTER_POOL_FACTOR times `max_connections`, and a burst beyond that fails with
    MaxConnectionsError, a transient error the server answers with `busy`.

    The cluster client retries nothing itself: its retries re-send a command after a
    connection error or timeout, when a script may already have run (a move stored twice
    would come back as a conflict, a join as a second seat). A failed command surfaces, the
    server answers `busy`, and the client's next command refreshes the slot map. Call
    `await client.initialize()` before concurrent use (`Store.ready`): redis-py's lazy
    first initialization races with the commands waiting on it.
    """
    if is_cluster_url(url):
        parsed = parse_cluster_url(url)
        timeouts = _timeouts(parsed.options)
        kwargs: dict[str, Any] = {
            "startup_nodes": [ClusterNode(h, p) for h, p in parsed.nodes],
            "max_connections": max_connections * CLUSTER_POOL_FACTOR,
            "retry": Retry(NoBackoff(), 0),
            "client_name": client_name,
            "username": parsed.username,
            "password": parsed.password,
            "ssl": parsed.tls,
            # A master that dies leaves its slots uncovered until a replica takes over:
            # commands on the other masters' slots go on meanwhile.
            "require_full_coverage": False,
            **timeouts,
        }
        return RedisCluster(**kwargs)
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=pool_timeout,
        client_name=client_name,
        **_timeouts(_query(url)),
    )
    pack_with_hiredis(pool)  # C packing: see batch.HiredisPacking
    return aioredis.Redis.from_pool(pool)  # closing the client closes the pool


def _query(url: str) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(url).query).items()}


def _timeouts(options: dict[str, str]) -> dict[str, float]:
    """Connect and read timeouts: the URL's own when it names them, else ours. (In the single
    form redis-py reads the URL's and they take precedence over these keyword arguments.)"""
    return {
        "socket_connect_timeout": float(options.get("socket_connect_timeout", CONNECT_TIMEOUT)),
        "socket_timeout": float(options.get("socket_timeout", SOCKET_TIMEOUT)),
    }


def is_cluster(client: Any) -> bool:
    return isinstance(client, RedisCluster)
