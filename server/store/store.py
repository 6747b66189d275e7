"""All Redis I/O of the race server, and nothing of the race rules: `Store`, the room store
one client, made of one part per job (the modules named below), the rest of the server's view
of Redis.

Layout, for a key prefix P and a room code C (every key of a room shares the
hash tag `{C}` so a room lives in one Redis Cluster slot and Lua may touch it all):

    P room:{C}:meta      hash  doc (msgpack room document), ver (int, bumped on every change)
    P room:{C}:revs      hash  seat -> revision of that seat's log (bumped on every checked
                               append and every pop; with the log's length it names one state
                               of the log: the lease holder's lean push leaves it as it was)
    P room:{C}:log:<s>   list  seat s's moves of the current race, "move at_ms" each
    P room:{C}:events    stream the last MAX_EVENTS events, entry id "<n>-0", field d = msgpack;
                               its last entry's n is the room's last event number (the
                               counter: the lease holder numbers its moves' events itself)
    P room:{C}:conn      hash  seat -> live connections; "spectators" -> live spectator connections
    P room:{C}:lease     str   "<epoch>:<process>" with a TTL: the process serving the room
    P room:{C}:fence     hash  epoch (the commit and append scripts refuse an older one), owner,
                               released, sync (moved by every acquisition, every write without
                               the lease and every `outcome`; the lease holder's lean appends
                               carry the value they loaded the room with): server/store/lease.py's;
                               here (the `here` set's origins, concatenated) and watching (the
                               spectators' count), copied by the lease's acquisition and kept
                               by `_HERE` and `_PRESENCE`: the lean append's one read of the fence
    P room:{C}:tail:<sync> stream the lease holder's moves not yet folded into the logs and the
                               stream (lua/tail.lua): entry id "<n>-0" (the event's number),
                               fields s (seat), o (p push / u pop), m (the entry), d (the event);
                               it exists only while the holder loaded under that `sync` may write
    P room:{C}:pub       pub/sub channel (a shard channel on a cluster, same slot as the room):
                               b"e<origin><n>:<msgpack event>" and b"b<origin><delay>:<board frame>",
                               origin = the publishing Store's 8-byte id (its own process skips them)
    P room:{C}:here      set   origins of the processes subscribed to the room: a move is published
                               only when another process than its own is in it

Keys that are not a room's, none of them touched by a move:

    P {lobby}:rows       hash  code -> "<ver>:<at_ms>:<msgpack lobby row>" (a listed room) or
                               "<ver>:<at_ms>:" (unlisted: kept a day, so a late retry of an
                               older row cannot list it again)
    P {lobby}:codes      zset  listed codes (score 0, paged in code order)
    P {lobby}:gone       zset  unlisted codes by when (their tombstones are trimmed after a day)
    P processes          set   ids of live server processes (SREM decides who counts one out)
    P proc:{<id>}:alive  str   set on every beat with a TTL: gone = silent that long
    P proc:{<id>}:conns  hash  "<code>|<seat or spectators>" -> connections that process holds
    P deadlines:{dl<i>}  zset  DEADLINE_BUCKETS buckets (a room's in bucket crc32(code) % N, spread
                               over the cluster's slots): "grace|<code>|<seat>" and "tick|<code>"
                               scored by when they are due; a script takes the due ones out
                               and hands them to exactly one caller, so a crash loses none

The lobby is a maintained summary: a room's row is written when its public state changes
(a join, a start, the end), never by a move, and a page is one script on one slot. A
failed write of it is retried in the background and never fails the command that caused
it (the room's own commit is what counts).

Liveness: a process beats every few seconds (its `alive` key, with a TTL). Another counts
it out (its connections, so their seats get their grace periods) only after seeing it
missing on successful reads for a further window, and only while its own beats
succeed: a Redis node that fails over briefly makes nobody resign live players.

On a Redis Cluster every multi-key write is one Lua script on one hash tag (no MULTI),
and the scripts publish with SPUBLISH (the channel shares the room's hash tag).

Redis is the source of truth. The process holding a room's lease is its one writer: it
judges moves on its copy in memory and stores each with ONE native command,
`XADD <tail> NOMKSTREAM <n>-0 ...` to its tail (`Store.append_native`, lua/tail.lua), whose key
names the fence's `sync` counter the copy was loaded under: only the holder's load makes it,
every other writer folds it into the logs and the stream first, and one without the lease
deletes it, so a stale holder's append finds no key and is refused (fencing without a script).
While another process listens to the room the holder's move is instead one lean script
(`lua/owned.lua`) that checks the fence, appends and publishes. Any other writer uses the checked script (`lua/append.lua`: the document's version, the
log's length and its revision in one step) and moves the fence's counter, so two processes
(or two connections of one seat) can never both store move N.

Every event a script stores is also handed, once the script has answered, to the
store's event sink (given to its constructor; the fan-out hub): the process fans its
own events out at once instead of decoding them back from pub/sub. What arrives on
pub/sub goes through `receive`, the one reader of the published format: our own
copies (they carry our origin) are dropped by a byte comparison, the rest is handed
to the same sink.
"""

from __future__ import annotations

from typing import Any

from solrace.server.store.base import ACTIVE_TTL_MS, ORIGIN_LEN, EventSink, ScriptArg
from solrace.server.store.channels import Channels
from solrace.server.store.deadlines import DEADLINE_BUCKETS, DEADLINE_LEASE_MS, Deadlines, Due
from solrace.server.store.liveness import Liveness
from solrace.server.store.lobby_rows import LOBBY_KEEP_MS, LobbyRows
from solrace.server.store.presence import Presence
from solrace.server.store.redis_conn import Client, connect
from solrace.server.store.room_log import Appended, Conflict, Loaded, QueuedAppend, RoomLog

__all__ = [
    "ACTIVE_TTL_MS",
    "DEADLINE_BUCKETS",
    "DEADLINE_LEASE_MS",
    "LOBBY_KEEP_MS",
    "MAX_EVENTS",
    "ORIGIN_LEN",
    "POOL_SIZE",
    "POOL_TIMEOUT",
    "Appended",
    "Conflict",
    "Due",
    "EventSink",
    "Loaded",
    "QueuedAppend",
    "ScriptArg",
    "Store",
]

MAX_EVENTS = 500
#: Redis connections one server process may hold at once (pub/sub takes one of them)
POOL_SIZE = 64
#: seconds a command waits for a free pooled connection before it fails
POOL_TIMEOUT = 20.0


class Store(RoomLog, Channels, Presence, LobbyRows, Liveness, Deadlines):
    """The room store: every part (room_log, channels, presence, lobby_rows, liveness,
    deadlines) on one client, one origin and one event sink; what the rest of the server
    holds and calls."""

    def __init__(
        self,
        redis: Client,
        prefix: str = "",
        *,
        finished_ttl: int = 3600,
        max_events: int = MAX_EVENTS,
        sink: EventSink | None = None,
        liveness_ms: int = 10_000,
    ) -> None:
        super().__init__(redis, prefix, max_events=max_events, sink=sink)
        self._init_room_log(finished_ttl)
        self._init_channels()
        self._init_presence()
        self._init_lobby()
        self._init_liveness(liveness_ms)
        self._init_deadlines()

    @classmethod
    def from_url(
        cls,
        url: str,
        prefix: str = "",
        *,
        max_connections: int = POOL_SIZE,
        pool_timeout: float = POOL_TIMEOUT,
        client_name: str | None = "solrace",
        **kw: Any,
    ) -> Store:
        """A store for a REDIS_URL: `redis://` (one Redis) or `redis+cluster://` (a cluster).

        On one Redis the pool is bounded and its callers queue for a connection: redis-py's
        default pool raises MaxConnectionsError the moment every connection is in use, so a
        burst (rooms starting together, a backlog of moves) became `internal` errors.
        """
        client = connect(
            url, max_connections=max_connections, pool_timeout=pool_timeout, client_name=client_name
        )
        return cls(client, prefix, **kw)  # closing the store closes the client and its pool

    async def ready(self) -> None:
        """Connect before the first burst of commands: on a cluster, fetch the slot map now
        (redis-py's lazy first fetch races with the commands that wait for it); and load the
        scripts (on every master), so that the first burst does not start with a NOSCRIPT
        and a SCRIPT LOAD per command."""
        if self.cluster:
            await self.redis.initialize()
        for script in self._scripts:
            await self.redis.script_load(script.script)

    async def close(self) -> None:
        await self._close_lobby()
        await self._close_channels()
        await self.batcher.close()
        await self.redis.aclose()
