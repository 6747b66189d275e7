"""All Redis I/O of the race server, and nothing of the race rules.

Layout, for a key prefix P and a room code C (every key of a room shares the
hash tag `{C}` so a room lives in one Redis Cluster slot and Lua may touch it all):

    P room:{C}:meta      hash  doc (msgpack room document), ver (int, bumped on every change)
    P room:{C}:revs      hash  seat -> revision of that seat's log (bumped on every append/pop)
    P room:{C}:log:<s>   list  seat s's moves of the current race, "move at_ms" each
    P room:{C}:seq       int   number of the last room event
    P room:{C}:events    stream the last MAX_EVENTS events, entry id "<n>-0", field d = msgpack
    P room:{C}:conn      hash  seat -> live connections; "spectators" -> live spectator connections
    P room:{C}:lease     str   "<epoch>:<process>" with a TTL: the process serving the room
    P room:{C}:fence     hash  epoch (the commit and append scripts refuse an older one), owner,
                               released, sync (moved by every acquisition, every write without
                               the lease and every `outcome`; the lease holder's lean appends
                               carry the value they loaded the room with): server/store/lease.py's;
                               here (the `here` set's origins, concatenated) and watching (the
                               spectators' count), copied by the lease's acquisition and kept
                               by `_HERE` and `_PRESENCE`: the lean append's one read of the fence
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
judges moves on its copy in memory and stores each with one lean script (`_OWNED`) that
checks only the fence (its epoch, and the `sync` counter the copy was loaded under) and
appends. Any other writer uses the checked script (`_APPEND`: the document's version, the
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

import asyncio
import contextlib
import logging
import secrets
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from solrace.protocol.messages import decode_trusted, encode
from solrace.server.common.codes import shown, shown_in
from solrace.server.common.metrics import METRICS
from solrace.server.common.retry import Backoff
from solrace.server.common.room_locks import RoomLocks
from solrace.server.store import keys
from solrace.server.store.batch import Batcher
from solrace.server.store.pubsub import Reader, make_reader
from solrace.server.store.redis_conn import Client, connect, is_cluster

log = logging.getLogger("solrace.server")

MAX_EVENTS = 500
#: Redis connections one server process may hold at once (pub/sub takes one of them)
POOL_SIZE = 64
#: seconds a command waits for a free pooled connection before it fails
POOL_TIMEOUT = 20.0
ACTIVE_TTL_MS = 24 * 3600 * 1000  # a room nobody touches for a day goes away

_COMMIT = """
-- KEYS: meta seq events revs conn fence log0..logN ; ARGV: ver doc channel maxlen ttl flags origin nrev epoch (seat rev)* events*
-- flags: 'c' clears the logs (a new round), 't' trims the stream to this commit's events (finished)
-- epoch: the writer's lease epoch (server/store/lease.py), 0 = written without the lease
-- A write without the lease (epoch 0) to a room with a fence bumps the fence's `sync`: the
-- lease holder's lean appends (`_OWNED`) check it, so its copy in memory is reloaded first.
local epoch = tonumber(ARGV[9])
local fence = tonumber(redis.call('HGET', KEYS[6], 'epoch') or '0')
if epoch > 0 and fence ~= epoch then return {-5, fence} end
local ver = tonumber(redis.call('HGET', KEYS[1], 'ver') or '0')
if ver ~= tonumber(ARGV[1]) then return {-1, ver} end
local nrev = tonumber(ARGV[8])
for i = 0, nrev - 1 do
  local seat = ARGV[10 + 2 * i]
  local want = tonumber(ARGV[11 + 2 * i])
  local have = tonumber(redis.call('HGET', KEYS[4], seat) or '0')
  if have ~= want then return {-3, tonumber(seat), have} end
end
if epoch == 0 and fence > 0 then redis.call('HINCRBY', KEYS[6], 'sync', 1) end
redis.call('HSET', KEYS[1], 'doc', ARGV[2], 'ver', ver + 1)
if string.find(ARGV[6], 'c', 1, true) then
  for k = 7, #KEYS do redis.call('DEL', KEYS[k]) end
  redis.call('DEL', KEYS[4])
end
local out = {ver + 1}
for i = 10 + 2 * nrev, #ARGV do
  local n = redis.call('INCR', KEYS[2])
  redis.call('XADD', KEYS[3], 'MAXLEN', ARGV[4], n .. '-0', 'd', ARGV[i])
  redis.call('PUBLISH', ARGV[3], 'e' .. ARGV[7] .. n .. ':' .. ARGV[i])
  out[#out + 1] = n
end
if string.find(ARGV[6], 't', 1, true) then
  redis.call('XTRIM', KEYS[3], 'MAXLEN', math.max(1, #ARGV - 9 - 2 * nrev))
end
local ttl = tonumber(ARGV[5])
if ttl > 0 then
  for k = 1, #KEYS do redis.call('PEXPIRE', KEYS[k], ttl) end
end
return out
"""

_APPEND = """
-- KEYS: meta log revs seq events conn fence here ; ARGV: ver len rev seat op entry event board origin epoch
-- MAXLEN and TTL are the store's own, written in when the script is registered (`append_script`);
-- the room's channel is its meta key with 'pub' for 'meta' (fewer arguments to send per move).
-- The move is published only when another process listens to the room (`here`: the origins of
-- the processes subscribed to it): no process reads back and drops its own copies.
-- op 'push' appends entry; op 'pop' removes the last entry, which must equal entry.
-- The board is published only while the room has spectators; the reply carries their count.
-- epoch: the writer's lease epoch (server/store/lease.py), 0 = written without the lease
local epoch = tonumber(ARGV[10])
local fence = tonumber(redis.call('HGET', KEYS[7], 'epoch') or '0')
if epoch > 0 and fence ~= epoch then return {-5, fence} end
local ver = tonumber(redis.call('HGET', KEYS[1], 'ver') or '0')
if ver ~= tonumber(ARGV[1]) then return {-1, ver} end
local len = redis.call('LLEN', KEYS[2])
if len ~= tonumber(ARGV[2]) then return {-2, len} end
local rev = tonumber(redis.call('HGET', KEYS[3], ARGV[4]) or '0')
if rev ~= tonumber(ARGV[3]) then return {-3, rev} end
if ARGV[5] == 'push' then
  redis.call('RPUSH', KEYS[2], ARGV[6])
  len = len + 1
else
  if redis.call('LINDEX', KEYS[2], -1) ~= ARGV[6] then return {-4, len} end
  redis.call('RPOP', KEYS[2])
  len = len - 1
end
if epoch == 0 and fence > 0 then redis.call('HINCRBY', KEYS[7], 'sync', 1) end
rev = redis.call('HINCRBY', KEYS[3], ARGV[4], 1)
local n = redis.call('INCR', KEYS[4])
redis.call('XADD', KEYS[5], 'MAXLEN', MAXLEN, n .. '-0', 'd', ARGV[7])
local channel = string.sub(KEYS[1], 1, -5) .. 'pub'
local others = redis.call('SCARD', KEYS[8]) - redis.call('SISMEMBER', KEYS[8], ARGV[9])
if others > 0 then redis.call('PUBLISH', channel, 'e' .. ARGV[9] .. n .. ':' .. ARGV[7]) end
local watching = tonumber(redis.call('HGET', KEYS[6], 'spectators') or '0')
if ARGV[8] ~= '' and watching > 0 and others > 0 then
  redis.call('PUBLISH', channel, 'b' .. ARGV[9] .. ARGV[8])
end
-- a seat's log and the revisions get the room's lifetime with the seat's first store of the
-- round; every commit of the room renews it (a move does not: the document would expire first)
if rev == 1 and TTL > 0 then
  redis.call('PEXPIRE', KEYS[2], TTL)
  redis.call('PEXPIRE', KEYS[3], TTL)
end
return {len, rev, n, watching}
"""


_OWNED = """
-- The lease holder's append: the room's one writer, judging moves on its copy in memory.
-- KEYS: fence log revs seq events here conn ; ARGV: sync seat op entry event board origin epoch
-- epoch: the writer's lease epoch (fencing: refused once another process took the room over).
-- sync: the fence's counter as the holder loaded the room with it (`Store.load`): every
-- acquisition of the lease and every write without it bumps it, so an equal `sync` says that
-- nobody else wrote the room since the copy was loaded.
-- No version, length or revision check is needed: the holder's copy is the room.
-- Refused: {-5, epoch} (the caller's lease or copy is stale: it reloads).
-- Who else listens (`here`: the origins of the processes subscribed, concatenated) and how
-- many spectators watch (`watching`) are kept in the fence itself by the scripts that change
-- them (`_HERE`, `_PRESENCE`, and the lease's acquisition: lease.py), so the one read of the
-- fence answers all four; a fence from before those fields reads the set and the count.
-- MAXLEN and TTL as in _APPEND (`owned_script`).
local fence = redis.call('HMGET', KEYS[1], 'sync', 'epoch', 'here', 'watching')
if fence[1] ~= ARGV[1] or fence[2] ~= ARGV[8] then
  return {-5, tonumber(fence[2] or '0')}
end
local len
if ARGV[3] == 'push' then
  len = redis.call('RPUSH', KEYS[2], ARGV[4])
else
  redis.call('RPOP', KEYS[2])
  len = redis.call('LLEN', KEYS[2])
end
local rev = redis.call('HINCRBY', KEYS[3], ARGV[2], 1)
local n = redis.call('INCR', KEYS[4])
redis.call('XADD', KEYS[5], 'MAXLEN', MAXLEN, n .. '-0', 'd', ARGV[5])
local others, watching
if fence[3] and fence[4] then
  others = fence[3] ~= '' and fence[3] ~= ARGV[7]
  watching = tonumber(fence[4])
else
  -- another process listens when `here` holds an origin other than ours (one read of two members)
  local here = redis.call('SRANDMEMBER', KEYS[6], 2)
  others = #here > 1 or (#here == 1 and here[1] ~= ARGV[7])
  watching = tonumber(redis.call('HGET', KEYS[7], 'spectators') or '0')
end
if others then
  local channel = string.sub(KEYS[1], 1, -6) .. 'pub'
  redis.call('PUBLISH', channel, 'e' .. ARGV[7] .. n .. ':' .. ARGV[5])
  if ARGV[6] ~= '' and watching > 0 then redis.call('PUBLISH', channel, 'b' .. ARGV[7] .. ARGV[6]) end
end
if rev == 1 and TTL > 0 then
  redis.call('PEXPIRE', KEYS[2], TTL)
  redis.call('PEXPIRE', KEYS[3], TTL)
end
return {len, rev, n, watching}
"""

_HERE = """
-- KEYS: here fence ; ARGV: origin on ttl
-- List (on = '1') or unlist this process among those listening to the room, and keep the
-- list, concatenated, in the room's fence when it has one (`_OWNED` reads it there).
if ARGV[2] == '1' then
  redis.call('SADD', KEYS[1], ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
else
  redis.call('SREM', KEYS[1], ARGV[1])
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('HSET', KEYS[2], 'here', table.concat(redis.call('SMEMBERS', KEYS[1])))
end
return 1
"""


def append_script(max_events: int, ttl_ms: int) -> str:
    """The append script with this store's stream length and key lifetime written in."""
    return f"local MAXLEN, TTL = {int(max_events)}, {int(ttl_ms)}\n" + _APPEND


def owned_script(max_events: int, ttl_ms: int) -> str:
    """The lease holder's append script, the same way."""
    return f"local MAXLEN, TTL = {int(max_events)}, {int(ttl_ms)}\n" + _OWNED


_OUTCOME = """
-- KEYS: log revs events conn fence ; ARGV: seat len rev op entry event
-- Whether an append whose answer was lost (a timeout, a dropped connection) is stored. When it
-- is not, it never will be: the seat's revision moves on, so that append, if it is still on its
-- way or queued behind a busy Redis, is refused when it runs; and the fence's `sync` moves on,
-- which refuses a lease holder's lean append (`_OWNED`) the same way. Returns {0} (not stored)
-- or {1, n, watching}: n is its event's number (0 if the stream no longer has it).
if redis.call('EXISTS', KEYS[5]) == 1 then redis.call('HINCRBY', KEYS[5], 'sync', 1) end
local want = tonumber(ARGV[3])
local rev = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if rev == want then
  redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
  return {0}
end
local len = redis.call('LLEN', KEYS[1])
local at = tonumber(ARGV[2])
local stored
if ARGV[4] == 'push' then
  stored = len > at and redis.call('LINDEX', KEYS[1], at) == ARGV[5]
else
  -- an undo: stored when it is the one change to the seat's log since
  stored = rev == want + 1 and len == at - 1
end
if not stored then return {0} end
local n = 0
for _, row in ipairs(redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 200)) do
  if row[2][2] == ARGV[6] then
    n = tonumber(string.match(row[1], '^(%d+)'))
    break
  end
end
return {1, n, tonumber(redis.call('HGET', KEYS[4], 'spectators') or '0')}
"""

_PRESENCE = """
-- KEYS: conn seq events fence ; ARGV: field delta channel maxlen on_event off_event ttl origin always
-- always = '1': emit the payload even when the count did not cross zero (the watchers count)
-- The spectators' count is also kept in the room's fence when it has one (`_OWNED` reads it).
local before = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local after = redis.call('HINCRBY', KEYS[1], ARGV[1], tonumber(ARGV[2]))
if after < 0 then redis.call('HSET', KEYS[1], ARGV[1], 0); after = 0 end
if ARGV[1] == 'spectators' and redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('HSET', KEYS[4], 'watching', after)
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[7]))
local changed = (before > 0) ~= (after > 0)
local payload = ARGV[5]
if after == 0 then payload = ARGV[6] end
if (changed or ARGV[9] == '1') and payload ~= '' then
  local n = redis.call('INCR', KEYS[2])
  redis.call('XADD', KEYS[3], 'MAXLEN', ARGV[4], n .. '-0', 'd', payload)
  redis.call('PUBLISH', ARGV[3], 'e' .. ARGV[8] .. n .. ':' .. payload)
  return {after, n}
end
return {after, 0}
"""


_LOAD = """
-- KEYS: meta revs seq fence log0..logN ; ARGV: ver (as the caller read it with the document)
-- One consistent cut of a room without MULTI (which redis-py runs in threads on a cluster),
-- with the fence's `sync` as of that cut (the lease holder's appends carry it: `_OWNED`).
local ver = tonumber(redis.call('HGET', KEYS[1], 'ver') or '0')
if ver ~= tonumber(ARGV[1]) then return {-1} end
local out = {1, redis.call('HGETALL', KEYS[2]), redis.call('GET', KEYS[3]) or '0',
  redis.call('HGET', KEYS[4], 'sync') or ''}
for k = 5, #KEYS do out[#out + 1] = redis.call('LRANGE', KEYS[k], 0, -1) end
return out
"""

_LOBBY_PUT = """
-- KEYS: rows codes gone ; ARGV: code ver row now keep_ms
-- Writes the room's row (or, with an empty row, unlists it) unless a newer version is there.
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local have = tonumber(string.match(cur, '^(%d+):'))
  if have and have >= tonumber(ARGV[2]) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ':' .. ARGV[4] .. ':' .. ARGV[3])
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
else
  redis.call('ZADD', KEYS[2], 0, ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
end
local old = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', tonumber(ARGV[4]) - tonumber(ARGV[5]), 'LIMIT', 0, 20)
for _, c in ipairs(old) do
  redis.call('ZREM', KEYS[3], c)
  redis.call('HDEL', KEYS[1], c)
end
return 1
"""

_LOBBY_PAGE = """
-- KEYS: rows codes ; ARGV: after limit now keep_ms
-- Returns {next, code, row, code, row, ...}: next is the cursor of the following page ('' at
-- the end). A row not written for keep_ms belongs to a room that has expired: dropped.
local start = '-'
if ARGV[1] ~= '' then start = '(' .. ARGV[1] end
local limit = tonumber(ARGV[2])
local codes = redis.call('ZRANGEBYLEX', KEYS[2], start, '+', 'LIMIT', 0, limit + 1)
local nxt = ''
if #codes > limit then
  codes[#codes] = nil
  nxt = codes[#codes]
end
local out = {nxt}
local oldest = tonumber(ARGV[3]) - tonumber(ARGV[4])
for _, code in ipairs(codes) do
  local v = redis.call('HGET', KEYS[1], code)
  local at, row = 0, ''
  if v then
    local a = string.find(v, ':', 1, true)
    local b = a and string.find(v, ':', a + 1, true)
    if b then
      at = tonumber(string.sub(v, a + 1, b - 1)) or 0
      row = string.sub(v, b + 1)
    end
  end
  if row == '' or at < oldest then
    redis.call('ZREM', KEYS[2], code)
    if v and row ~= '' then redis.call('HDEL', KEYS[1], code) end
  else
    out[#out + 1] = code
    out[#out + 1] = row
  end
end
return out
"""

_KEEP = """
-- KEYS: conn meta other room keys... ; ARGV: idle_ms active_ms
-- A room in its lobby: with nobody connected (every count in `conn` 0) its keys get the short
-- idle lifetime (never lengthened by this); with someone, the active one again.
local total = 0
for _, v in ipairs(redis.call('HVALS', KEYS[1])) do total = total + (tonumber(v) or 0) end
local left = redis.call('PTTL', KEYS[2])
if left == -2 then return -2 end
local ttl = tonumber(ARGV[2])
if total == 0 then
  ttl = tonumber(ARGV[1])
  if left >= 0 and left <= ttl then return 0 end
elseif left > tonumber(ARGV[1]) then
  return 0
end
for k = 1, #KEYS do redis.call('PEXPIRE', KEYS[k], ttl) end
return ttl
"""

_SHORTEN = """
-- KEYS: conn meta other room keys... ; ARGV: idle_ms
-- A room nobody is connected to (every count in `conn` 0): each of its keys that would live
-- longer than idle_ms gets idle_ms (never lengthened). -1: someone is connected; -2: no room.
local total = 0
for _, v in ipairs(redis.call('HVALS', KEYS[1])) do total = total + (tonumber(v) or 0) end
if total > 0 then return -1 end
if redis.call('EXISTS', KEYS[2]) == 0 then return -2 end
local ttl, n = tonumber(ARGV[1]), 0
for k = 1, #KEYS do
  local left = redis.call('PTTL', KEYS[k])
  if left == -1 or left > ttl then
    redis.call('PEXPIRE', KEYS[k], ttl)
    n = n + 1
  end
end
return n
"""

_CLAIM_DUE = """
-- KEYS: one deadline bucket ; ARGV: now limit lease_until. The due members, leased: each stays
-- in the bucket with its score moved to lease_until, so one caller gets it now and, should its
-- handler fail or its process die, whoever claims after lease_until gets it again.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], 'XX', ARGV[3], member) end
return due
"""

_SETTLE_DEADLINE = """
-- KEYS: one deadline bucket ; ARGV: member lease_until [again_at]. A claimed deadline whose
-- handler ran: removed (or, with again_at, due again then), unless it was set anew meanwhile
-- (its score is no longer the lease: a new grace period, a re-armed clock) -- that one stays.
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not at or tonumber(at) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] then redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[1])
else redis.call('ZREM', KEYS[1], ARGV[1]) end
return 1
"""

#: deadline buckets: a few, so that no one slot is every process's poll target
DEADLINE_BUCKETS = 8
#: how long a claimed deadline is its claimer's: if the claimer has neither settled it by then
#: (its handler still running, or failed with Redis away, or its process dead), it is due again
DEADLINE_LEASE_MS = 5000


class Due(NamedTuple):
    """A claimed deadline: its member, and the score its lease holds it at (`settle_deadline`)."""

    member: str
    lease: int


#: a lobby row or tombstone not rewritten for this long is dropped (its room expired)
LOBBY_KEEP_MS = ACTIVE_TTL_MS
#: seconds between retries of failed lobby writes (doubling up to the cap)
LOBBY_RETRY_S, LOBBY_RETRY_CAP_S = 0.2, 5.0
_UNKNOWN: Any = object()

ORIGIN_LEN = 8
#: what a Lua script's ARGV may hold
ScriptArg = bytes | str | int


class EventSink(Protocol):
    """Who fans out room events and boards to this process's connections (the hub)."""

    def local_event(self, code: str, n: int, event: dict[str, Any]) -> None:
        """An event this store just stored (not read back from pub/sub)."""

    def remote_event(self, code: str, n: int, payload: bytes) -> None:
        """Another process's event off pub/sub, still encoded."""

    def board(self, code: str, delay: int, frame: bytes) -> None:
        """A spectator board frame, to send `delay` seconds from now."""

    def lost(self, code: str) -> None:
        """Pub/sub messages of this room may have been lost: catch up from the stream."""


class Conflict(Exception):
    """The store refused a write made against an old version; reload and try again.

    Handled inside the server (the caller reloads and retries), never sent to a client: what
    a client is told is a `solrace.protocol.messages.ProtocolError`."""

    def __init__(self, what: str, have: int) -> None:
        super().__init__(f"{what} changed (now {have})")
        self.what = what
        self.have = have
        METRICS.redis_retries.labels("conflict").inc()  # the caller reloads and tries again


class Appended(NamedTuple):
    """What a stored move left behind: the log's length and revision, the event's number, and
    how many spectators the room had then (the board went out only if there were some)."""

    length: int
    rev: int
    n: int
    spectators: int


@dataclass
class Loaded:
    """A room as stored: its document and version, and each seat's log with its revision."""

    doc: dict[str, Any]
    ver: int
    logs: dict[int, list[bytes]]
    revs: dict[int, int]
    seq: int
    #: the fence's `sync` as of this cut (b"": the room has no fence yet): what the lease
    #: holder's lean appends carry (`Store.append_owned`)
    sync: bytes = b""


def _text(value: bytes | str) -> str:
    """A Redis reply as text (this client does not decode replies: they come as bytes)."""
    return value.decode() if isinstance(value, bytes) else value


def _raw(value: bytes | str) -> bytes:
    return value.encode() if isinstance(value, str) else value


def _code_of(channel: bytes | str) -> str:
    """The room code in a room's key or channel: what its hash tag holds."""
    return _text(channel).rsplit("{", 1)[1].split("}", 1)[0]


class Store:
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
        self.redis = redis
        self.prefix = prefix
        self.finished_ttl_ms = finished_ttl * 1000
        self.max_events = max_events
        #: a cluster: shard channels (SPUBLISH/SSUBSCRIBE), one reader per master
        self.cluster = is_cluster(redis)
        self._scripts: list[Any] = []
        self._commit = self._script(_COMMIT)
        self._append = self._script(append_script(max_events, ACTIVE_TTL_MS))
        self._owned = self._script(owned_script(max_events, ACTIVE_TTL_MS))
        self._presence = self._script(_PRESENCE)
        self._here_script = self._script(_HERE)
        self._outcome = self._script(_OUTCOME)
        self._load = self._script(_LOAD)
        self._lobby_put = self._script(_LOBBY_PUT)
        self._lobby_page = self._script(_LOBBY_PAGE)
        self._claim_due = self._script(_CLAIM_DUE)
        self._settle_deadline = self._script(_SETTLE_DEADLINE)
        self._keep = self._script(_KEEP)
        self._shorten = self._script(_SHORTEN)
        #: tags what this store publishes, so its own process can skip it on pub/sub
        self.origin: bytes = secrets.token_hex(ORIGIN_LEN // 2).encode()
        #: None: nobody in this process watches rooms (tools, tests of the store alone)
        self.sink = sink
        self._reader: Reader | None = None
        self._channels: set[str] = set()
        #: one subscribe/unsubscribe per room at a time: an unsubscribe's SREM landing after a
        #: subscribe's SADD would unlist a process that listens again
        self._membership = RoomLocks()
        #: how long a process's `alive` key outlives its last beat
        self.liveness_ms = liveness_ms
        self._proc: str | None = None
        self._beat_ok = float("-inf")  # time.monotonic() of this process's last good beat
        self._suspects: dict[str, float] = {}  # process -> since when seen missing (monotonic)
        #: the move path's writes, one pipeline per turn of the loop (`batch.Batcher`)
        self.batcher = Batcher(redis)
        self._lobby_pending: dict[str, tuple[int, bytes]] = {}
        #: room code -> the lease epoch this process writes it with (server/store/lease.py)
        self.fences: dict[str, int] = {}
        self._lobby_retry: asyncio.Task[None] | None = None

    def _script(self, source: str) -> Any:
        """A registered Lua script; on a cluster its PUBLISH calls are SPUBLISH (the room's
        channel is a shard channel in the room's slot, so the script stays on one node)."""
        if self.cluster:
            source = source.replace("'PUBLISH'", "'SPUBLISH'")
        script = self.redis.register_script(source)
        self._scripts.append(script)
        return script

    async def _publish(self, channel: str, data: bytes) -> None:
        if self.cluster:
            await self.redis.spublish(channel, data)
        else:
            await self.redis.publish(channel, data)

    def _fan_event(self, code: str, n: int, event: dict[str, Any]) -> None:
        """Hand a stored event to this process's own connections; a failure here must not
        make a stored write look failed (the listener-side catch-up still repairs gaps)."""
        if self.sink is not None:
            try:
                self.sink.local_event(code, n, event)
            except Exception:
                log.exception("local fan-out of event %d in %s", n, shown(code))

    def _fan_board(self, code: str, delay: int, frame: bytes) -> None:
        if self.sink is not None:
            try:
                self.sink.board(code, delay, frame)
            except Exception:
                log.exception("local fan-out of a board in %s", shown(code))

    # --- pub/sub: the one place that knows the published format ---------------------------

    async def subscribe(self, code: str) -> None:
        """Hear the room's events from other processes (until `unsubscribe`)."""
        channel = self.channel(code)
        async with self._membership.hold(code):
            if channel in self._channels:
                return
            self._channels.add(channel)
            # listed before listening: other processes publish this room's moves from now on,
            # and what they stored before is in what this process reads after subscribing
            await self._here(code, True)
            if self._reader is None:
                self._reader = make_reader(self.redis, self.receive, self._lost, self._error)
            await self._reader.subscribe(channel)

    async def unsubscribe(self, code: str) -> None:
        channel = self.channel(code)
        async with self._membership.hold(code):
            if channel in self._channels and self._reader is not None:
                self._channels.discard(channel)
                await self._reader.unsubscribe(channel)
                await self._here(code, False)

    async def _here(self, code: str, here: bool) -> None:
        """List (or unlist) this process among those listening to the room: the append script
        publishes a move only when another process is listed."""
        keys = [self.key(code, "here"), self.key(code, "fence")]
        await self._here_script(keys=keys, args=[self.origin, 1 if here else 0, ACTIVE_TTL_MS])

    def _lost(self, channels: list[bytes]) -> None:
        """A pub/sub connection came back: what it missed meanwhile is only in the streams."""
        METRICS.redis_retries.labels("pubsub").inc(len(channels))
        if self.sink is None:
            return
        for channel in channels:
            try:
                self.sink.lost(_code_of(channel))
            except Exception:
                log.exception("catch-up after a pub/sub gap on %s", shown_in(channel))

    @staticmethod
    def _error(where: str) -> None:
        METRICS.redis_errors.labels(where).inc()

    def receive(self, channel: bytes | str, data: bytes) -> None:
        """One published message: b"e<origin><n>:<event>" or b"b<origin><delay>:<frame>".

        Our own (same origin) were handed to the sink when they were stored: dropped here
        without decoding them."""
        if self.sink is None or data[1 : 1 + ORIGIN_LEN] == self.origin:
            return
        code = _code_of(channel)
        head, body = data[1 + ORIGIN_LEN :].split(b":", 1)
        if data[:1] == b"e":
            self.sink.remote_event(code, int(head), body)
        elif data[:1] == b"b":
            self.sink.board(code, int(head), body)

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
        if self._lobby_retry is not None:
            self._lobby_retry.cancel()
            with contextlib.suppress(BaseException):
                await self._lobby_retry
        if self._lobby_pending:
            log.warning("%d lobby updates not written at shutdown", len(self._lobby_pending))
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await self._reader.aclose()
        await self.batcher.close()
        await self.redis.aclose()

    # --- keys ---------------------------------------------------------------------------

    def key(self, code: str, part: str) -> str:
        return keys.room(self.prefix, code, part)

    def log_key(self, code: str, seat: int) -> str:
        return self.key(code, f"log:{seat}")

    def channel(self, code: str) -> str:
        return self.key(code, "pub")

    def room_keys(self, code: str, seats: int) -> list[str]:
        return [self.key(code, p) for p in ("meta", "seq", "events", "revs", "conn", "fence")] + [
            self.log_key(code, s) for s in range(seats)
        ]

    # --- room document ------------------------------------------------------------------

    async def commit(
        self,
        code: str,
        ver: int,
        doc: dict[str, Any],
        events: Sequence[dict[str, Any]],
        *,
        seats: int,
        finished: bool = False,
        clear_logs: bool = False,
        revs: dict[int, int] | None = None,
        trim: bool = False,
    ) -> tuple[int, list[int]]:
        """Write the document if it is still at `ver` (and the logs at `revs`), append the events.

        Returns (new version, the events' numbers). A finished room's keys expire after
        the configured time; any other room's after a day without a change. `trim` keeps
        only this commit's events in the stream: once a race has its results, its
        progress events are dead weight (three quarters of a finished room's memory),
        and a client resuming from before them gets a snapshot instead.
        """
        ttl = self.finished_ttl_ms if finished else ACTIVE_TTL_MS
        rev_args: list[int] = []
        for seat, rev in sorted((revs or {}).items()):
            rev_args += [seat, rev]
        flags = ("c" if clear_logs else "") + ("t" if trim else "")
        args: list[ScriptArg] = [
            ver,
            encode(doc),
            self.channel(code),
            self.max_events,
            ttl,
            flags,
            self.origin,
            len(revs or {}),
            self.fences.get(code, 0),
            *rev_args,
            *(encode(e) for e in events),
        ]
        out = await self._commit(keys=self.room_keys(code, seats), args=args)
        if out[0] == -5:
            raise self._fenced(code, int(out[1]))
        if out[0] == -1:
            raise Conflict("version", int(out[1]))
        if out[0] == -3:
            raise Conflict("log", int(out[2]))
        numbers = [int(n) for n in out[1:]]
        for n, event in zip(numbers, events, strict=False):
            self._fan_event(code, n, event)
        return int(out[0]), numbers

    async def load(self, code: str) -> Loaded | None:
        """Document, version, logs and revisions as one consistent cut: the document first
        (it says how many logs there are), then a script that reads the rest only if the
        version is still the one read with it."""
        while True:
            meta = await self.redis.hgetall(self.key(code, "meta"))
            if not meta:
                return None
            doc = decode_trusted(_raw(meta[b"doc"]))
            ver = int(meta[b"ver"])
            seats = len(doc["seats"])
            keys = [
                self.key(code, "meta"),
                self.key(code, "revs"),
                self.key(code, "seq"),
                self.key(code, "fence"),
            ]
            got = await self._load(
                keys=keys + [self.log_key(code, s) for s in range(seats)], args=[ver]
            )
            if int(got[0]) == -1:
                continue  # changed between the two reads: read again
            flat = got[1]
            revs = {int(flat[i]): int(flat[i + 1]) for i in range(0, len(flat), 2)}
            logs = {s: list(got[4 + s]) for s in range(seats)}
            return Loaded(doc, ver, logs, revs, int(got[2] or 0), _raw(got[3]))

    async def doc(self, code: str) -> dict[str, Any] | None:
        """The room's document alone (no logs): enough to check a token, one small read."""
        raw = await self.redis.hget(self.key(code, "meta"), "doc")
        return None if raw is None else decode_trusted(_raw(raw))

    # --- move logs ----------------------------------------------------------------------

    async def append(
        self,
        code: str,
        ver: int,
        seat: int,
        length: int,
        rev: int,
        entry: str,
        event: dict[str, Any],
        board: bytes = b"",
        *,
        delay: int = 0,
        pop: bool = False,
    ) -> Appended:
        """Append (or pop) one move if the log is exactly as the caller saw it.

        `board` (an encoded frame, for spectators `delay` seconds from now) is published only
        when the room has spectators. Raises Conflict when the log, its revision or the
        document changed.
        """
        keys = [
            self.key(code, "meta"),
            self.log_key(code, seat),
            self.key(code, "revs"),
            self.key(code, "seq"),
            self.key(code, "events"),
            self.key(code, "conn"),
            self.key(code, "fence"),
            self.key(code, "here"),
        ]
        args: list[ScriptArg] = [
            ver,
            length,
            rev,
            seat,
            b"pop" if pop else b"push",
            entry,
            encode(event),
            b"%d:%s" % (delay, board) if board else b"",
            self.origin,
            self.fences.get(code, 0),
        ]
        out = await self.batcher.evalsha(self._append, keys, args)
        code_ = int(out[0])
        if code_ == -5:
            raise self._fenced(code, int(out[1]))
        if code_ < 0:
            raise Conflict(
                {-1: "version", -2: "length", -3: "revision", -4: "entry"}[code_], int(out[1])
            )
        return self._appended(code, out, event, board, delay)

    async def append_owned(
        self,
        code: str,
        sync: bytes,
        seat: int,
        entry: str,
        event: dict[str, Any],
        board: bytes = b"",
        *,
        delay: int = 0,
        pop: bool = False,
    ) -> Appended:
        """The lease holder's append (or pop) of one move it judged on its copy in memory,
        loaded when the fence's counter was `sync` (`Loaded.sync`): one lean script that
        checks that counter and stores the move, nothing else (`_OWNED`).

        Raises Conflict("fence") when another process has taken the room over (the lease is
        forgotten, as `append`'s fencing does), Conflict("sync") when the copy is stale (a
        write without the lease since, a lost answer's `outcome`): the caller reloads."""
        keys = [
            self.key(code, "fence"),
            self.log_key(code, seat),
            self.key(code, "revs"),
            self.key(code, "seq"),
            self.key(code, "events"),
            self.key(code, "here"),
            self.key(code, "conn"),
        ]
        args: list[ScriptArg] = [
            sync,
            seat,
            b"pop" if pop else b"push",
            entry,
            encode(event),
            b"%d:%s" % (delay, board) if board else b"",
            self.origin,
            self.fences.get(code, 0),
        ]
        out = await self.batcher.evalsha(self._owned, keys, args)
        if int(out[0]) == -5:
            epoch = int(out[1])
            if epoch != self.fences.get(code, 0):
                raise self._fenced(code, epoch)
            raise Conflict("sync", epoch)
        return self._appended(code, out, event, board, delay)

    def _appended(
        self, code: str, out: list[Any], event: dict[str, Any], board: bytes, delay: int
    ) -> Appended:
        stored = Appended(int(out[0]), int(out[1]), int(out[2]), int(out[3]))
        self._fan_event(code, stored.n, event)
        if board and stored.spectators > 0:
            self._fan_board(code, delay, board)
        return stored

    async def outcome(
        self,
        code: str,
        seat: int,
        length: int,
        rev: int,
        entry: str,
        event: dict[str, Any],
        *,
        pop: bool = False,
    ) -> Appended | None:
        """Whether an `append` (same arguments) whose answer never came is stored: its result
        as the append would have given it, or None when it is not stored, and then never will
        be (the seat's revision moved on). Its event goes to this process's connections here."""
        METRICS.redis_retries.labels("outcome").inc()
        keys = [
            self.log_key(code, seat),
            self.key(code, "revs"),
            self.key(code, "events"),
            self.key(code, "conn"),
            self.key(code, "fence"),
        ]
        args: list[ScriptArg] = [
            seat,
            length,
            rev,
            b"pop" if pop else b"push",
            entry,
            encode(event),
        ]
        out = await self._outcome(keys=keys, args=args)
        if int(out[0]) == 0:
            return None
        n, spectators = int(out[1]), int(out[2])
        if n:
            self._fan_event(code, n, event)
        elif self.sink is not None:
            self.sink.lost(code)  # its event is gone from the stream: connections check it
        return Appended(length - 1 if pop else length + 1, rev + 1, n, spectators)

    def _fenced(self, code: str, fence: int) -> Conflict:
        """Another process took the room over (its fence is past our lease): forget the lease;
        the caller reloads and judges again without it."""
        self.fences.pop(code, None)
        log.warning("room %s: write refused by the fence (now epoch %d)", shown(code), fence)
        return Conflict("fence", fence)

    async def publish_board(self, code: str, board: bytes, delay: int = 0) -> None:
        """A board the append did not carry (this process thought nobody was watching)."""
        await self._publish(self.channel(code), b"b%s%d:%s" % (self.origin, delay, board))
        self._fan_board(code, delay, board)

    # --- events -------------------------------------------------------------------------

    async def last_event(self, code: str) -> int:
        return int(await self.redis.get(self.key(code, "seq")) or 0)

    async def events_after(self, code: str, after: int) -> list[tuple[int, dict[str, Any]]] | None:
        """Events numbered after `after`, or None when some of them are no longer kept, or
        when `after` is a number the room never reached (negative, or ahead of its count: a
        client from before a Redis restart, or a forged number): a full resync, never a replay
        that would leave the client waiting for events it believes it has.

        The count is read before the stream: events stored between the two reads only add
        rows (read the other way round, they looked like a gap and cost a snapshot)."""
        last = await self.last_event(code)
        if not 0 <= after <= last:
            return None
        rows = await self.redis.xrange(self.key(code, "events"), min=f"{after + 1}-0", max="+")
        out = [
            (int(_text(rid).split("-")[0]), decode_trusted(_raw(fields[b"d"])))
            for rid, fields in rows or ()
            if rid is not None and fields is not None
        ]
        if last > after and (not out or out[0][0] != after + 1):
            return None
        return out

    # --- presence -----------------------------------------------------------------------

    async def presence(
        self,
        code: str,
        field: str,
        delta: int,
        on_event: dict[str, Any] | None = None,
        off_event: dict[str, Any] | None = None,
        *,
        always: bool = False,
    ) -> tuple[int, int]:
        """Count a connection in or out; emit on_event/off_event when the count crosses zero
        (or, with `always`, on every call: a delta of 0 then announces the count as it is)."""
        keys = [
            self.key(code, "conn"),
            self.key(code, "seq"),
            self.key(code, "events"),
            self.key(code, "fence"),
        ]
        args: list[ScriptArg] = [
            field,
            delta,
            self.channel(code),
            self.max_events,
            encode(on_event) if on_event else "",
            encode(off_event) if off_event else "",
            ACTIVE_TTL_MS,
            self.origin,
            "1" if always else "0",
        ]
        out = await self._presence(keys=keys, args=args)
        after, n = int(out[0]), int(out[1])
        event = off_event if after == 0 else on_event
        if n and event is not None:
            self._fan_event(code, n, event)
        return after, n

    async def keep_lobby(self, code: str, seats: int, idle_ms: int) -> int:
        """A room in its lobby: its keys last `idle_ms` while nobody is connected to it, a day
        again once someone is (a room made and left costs Redis minutes, not a day).
        Returns the lifetime set (0: left as it was, -2: the room is gone)."""
        return int(
            await self._keep(keys=self._idle_keys(code, seats), args=[idle_ms, ACTIVE_TTL_MS])
        )

    async def shorten_idle(self, code: str, seats: int, idle_ms: int) -> int:
        """A room nobody is connected to: none of its keys lives longer than `idle_ms` (a
        room whose process died keeps no day's lifetime that no unbind shortened). Returns
        the number of keys shortened, -1 when someone is connected, -2 when the room is gone."""
        return int(await self._shorten(keys=self._idle_keys(code, seats), args=[idle_ms]))

    def _idle_keys(self, code: str, seats: int) -> list[str]:
        """The room's keys whose lifetime follows its idleness: `conn` first, `meta` second."""
        keys = [self.key(code, "conn"), *self.room_keys(code, seats)[:4], self.key(code, "fence")]
        return [*keys, self.key(code, "here"), *(self.log_key(code, s) for s in range(seats))]

    async def connections(self, code: str) -> dict[str, int]:
        raw = await self.redis.hgetall(self.key(code, "conn"))
        return {_text(k): int(v) for k, v in raw.items()}

    # --- lobby: a maintained summary, one slot, never touched by a move -----------------

    @property
    def lobby_keys(self) -> list[str]:
        return [keys.lobby(self.prefix, part) for part in ("rows", "codes", "gone")]

    async def set_lobby(
        self, code: str, ver: int, row: dict[str, Any] | None, *, was: Any = _UNKNOWN
    ) -> None:
        """List the room with `row` as of room version `ver` (None: unlist it).

        Nothing is written when the row is `was` (the row before the change): most commits
        (a ready flag, a seat's end) leave the public row as it was. Never raises: the room's
        commit is what counts, so a failed write is logged and retried in the background, and
        a late retry can never overwrite a newer version's row.
        """
        if was is not _UNKNOWN and was == row and code not in self._lobby_pending:
            return
        payload = encode(row) if row is not None else b""
        self._lobby_pending[code] = (ver, payload)
        try:
            await self._write_lobby(code, ver, payload)
        except Exception as exc:
            METRICS.redis_errors.labels("lobby").inc()
            log.warning(
                "lobby update of %s failed (%r); retrying in the background", shown(code), exc
            )
            if self._lobby_retry is None:
                self._lobby_retry = asyncio.create_task(self._retry_lobby())
            return
        if self._lobby_pending.get(code) == (ver, payload):
            del self._lobby_pending[code]

    async def _write_lobby(self, code: str, ver: int, payload: bytes) -> None:
        now = int(time.time() * 1000)
        await self._lobby_put(keys=self.lobby_keys, args=[code, ver, payload, now, LOBBY_KEEP_MS])

    async def _retry_lobby(self) -> None:
        pauses = Backoff(LOBBY_RETRY_S, LOBBY_RETRY_CAP_S)
        try:
            while self._lobby_pending:
                await pauses.pause()
                for code, (ver, payload) in list(self._lobby_pending.items()):
                    METRICS.redis_retries.labels("lobby").inc()
                    try:
                        await self._write_lobby(code, ver, payload)
                    except Exception:
                        METRICS.redis_errors.labels("lobby").inc()
                        break
                    if self._lobby_pending.get(code) == (ver, payload):
                        del self._lobby_pending[code]
                else:
                    pauses.reset()
        finally:
            self._lobby_retry = None

    async def lobby_page(
        self, after: str = "", limit: int = 100
    ) -> tuple[list[dict[str, Any]], str | None]:
        """Listed rooms in code order after `after`, and the cursor of the next page (None at
        the end): one script on the lobby's slot, then each row's spectators in one pipeline
        (per node, in parallel, on a cluster)."""
        now = int(time.time() * 1000)
        out = await self._lobby_page(
            keys=self.lobby_keys[:2], args=[after, limit, now, LOBBY_KEEP_MS]
        )
        nxt = _text(out[0]) or None
        codes = [_text(c) for c in out[1::2]]
        rows = [decode_trusted(_raw(r)) for r in out[2::2]]
        if rows:
            pipe = self.redis.pipeline(transaction=False)
            for code in codes:
                pipe.hget(self.key(code, "conn"), "spectators")
            for row, watching in zip(rows, await pipe.execute(), strict=True):
                row["spectators"] = int(watching or 0)
        return rows, nxt

    # --- server processes: liveness, their connections --------------------------------

    @property
    def procs_key(self) -> str:
        return keys.processes(self.prefix)

    def proc_alive_key(self, proc: str) -> str:
        return keys.proc(self.prefix, proc, "alive")

    def proc_conns_key(self, proc: str) -> str:
        return keys.proc(self.prefix, proc, "conns")

    def proc_out_key(self, proc: str) -> str:
        """Set by whoever counts the process out, taken by the process's next beat."""
        return keys.proc(self.prefix, proc, "out")

    async def heartbeat(self, proc: str, now: int) -> bool:
        """This process is alive: its `alive` key for `liveness_ms`, its name in the registry.

        Returns True when another process counted this one out since its last beat (it
        could not beat for a while: a long pause, a partition): its connections, still open,
        must count in again (`reset_connections`, presence). Never raises: a beat that
        fails only stops this process from counting others out until one succeeds.
        """
        self._proc = proc
        try:
            pipe = self.redis.pipeline(transaction=False)
            pipe.set(self.proc_alive_key(proc), now, px=self.liveness_ms)
            pipe.pexpire(self.proc_conns_key(proc), ACTIVE_TTL_MS)
            pipe.getdel(self.proc_out_key(proc))
            pipe.sadd(self.procs_key, proc)
            got = await pipe.execute()
        except Exception as exc:
            METRICS.redis_errors.labels("heartbeat").inc()
            log.warning("heartbeat failed (%r): counting nobody out until one succeeds", exc)
            return False
        self._beat_ok = time.monotonic()
        return got[2] is not None

    async def reset_connections(self, proc: str, held: dict[str, int]) -> None:
        """Record what this process holds from scratch (after it was counted out)."""
        key = self.proc_conns_key(proc)
        pipe = self.redis.pipeline(transaction=False)  # one key: one node on a cluster
        pipe.delete(key)
        if held:
            pipe.hset(key, mapping=held)  # type: ignore[arg-type]
            pipe.pexpire(key, ACTIVE_TTL_MS)
        await pipe.execute()

    async def note_connection(self, proc: str, code: str, field: str, delta: int) -> None:
        """What this process holds, so that another can undo its presence if it dies."""
        await self.redis.hincrby(self.proc_conns_key(proc), f"{code}|{field}", delta)

    async def claim_dead(self, now: int, max_silence_ms: int) -> list[tuple[str, dict[str, int]]]:
        """Processes gone silent, each claimed by exactly one caller, with what they held.

        A process is gone when its `alive` key (kept `liveness_ms` after each beat) has been
        missing on every read for a further `max_silence_ms` by this process's clock; a
        read that fails starts that over (its node may be failing over, and the process may
        be beating again the moment it is back). And nobody is counted out unless this
        process's own last beat succeeded within that window: a process that cannot reach
        Redis cannot tell a dead peer from its own trouble.
        """
        window = max_silence_ms / 1000
        mono = time.monotonic()
        if mono - self._beat_ok > window:
            self._suspects.clear()
            return []
        try:
            members = [_text(p) for p in await self.redis.smembers(self.procs_key)]
        except Exception:
            METRICS.redis_errors.labels("liveness").inc()
            return []
        others = [p for p in members if p != self._proc]
        seen = await asyncio.gather(
            *(self.redis.exists(self.proc_alive_key(p)) for p in others), return_exceptions=True
        )
        out = []
        for pid, alive in zip(others, seen, strict=True):
            if isinstance(alive, BaseException) or alive:
                self._suspects.pop(pid, None)
                continue
            since = self._suspects.setdefault(pid, mono)
            if mono - since < window:
                continue
            del self._suspects[pid]
            if await self.redis.srem(self.procs_key, pid) != 1:
                continue  # another process claimed it first
            key = self.proc_conns_key(pid)
            held = {_text(k): int(v) for k, v in (await self.redis.hgetall(key)).items()}
            await self.redis.delete(key)
            # if it was only paused, its next beat learns it was counted out
            await self.redis.set(self.proc_out_key(pid), 1, px=ACTIVE_TTL_MS)
            METRICS.rooms_taken_over.inc(len({k.partition("|")[0] for k in held}))
            out.append((pid, held))
        for pid in set(self._suspects) - set(others):
            del self._suspects[pid]
        return out

    async def retire(self, proc: str) -> None:
        await self.redis.srem(self.procs_key, proc)
        await self.redis.delete(
            self.proc_alive_key(proc), self.proc_conns_key(proc), self.proc_out_key(proc)
        )

    # --- deadlines, bucketed over the cluster's slots ------------------------------------

    def deadline_key(self, bucket: int) -> str:
        return keys.deadlines(self.prefix, bucket)

    def deadline_bucket(self, member: str) -> int:
        """A room's deadlines share a bucket: "grace|<code>|<seat>", "tick|<code>"."""
        code = member.split("|")[1] if "|" in member else member
        return zlib.crc32(code.encode()) % DEADLINE_BUCKETS

    async def add_deadline(self, member: str, at_ms: int, *, keep: bool = False) -> None:
        """Set a deadline; with `keep`, one already pending stays as it is (ZADD NX)."""
        await self.redis.zadd(
            self.deadline_key(self.deadline_bucket(member)), {member: at_ms}, nx=keep
        )

    async def remove_deadline(self, member: str) -> None:
        await self.redis.zrem(self.deadline_key(self.deadline_bucket(member)), member)

    async def deadline_at(self, member: str) -> int | None:
        """When a deadline is due (ms), None if none is pending."""
        at = await self.redis.zscore(self.deadline_key(self.deadline_bucket(member)), member)
        return None if at is None else int(at)

    async def claim_due(
        self, now: int, limit: int = 100, lease_ms: int = DEADLINE_LEASE_MS
    ) -> list[Due]:
        """Deadlines that are due, each leased to exactly one caller until `now + lease_ms`: it
        is not taken out, so a handler that fails (the room's Redis failing over) or a claimer
        that dies leaves it to fire again then; the caller settles it once its handler ran
        (`settle_deadline`). The buckets are read in parallel; one whose node is away is
        skipped this round (its deadlines wait)."""
        lease = now + lease_ms
        got = await asyncio.gather(
            *(
                self._claim_due(keys=[self.deadline_key(b)], args=[now, limit, lease])
                for b in range(DEADLINE_BUCKETS)
            ),
            return_exceptions=True,
        )
        claimed: list[Due] = []
        for due in got:
            if isinstance(due, BaseException):
                METRICS.redis_errors.labels("deadlines").inc()
                continue
            claimed.extend(Due(_text(m), lease) for m in due)
        return claimed

    async def settle_deadline(self, due: Due, again_at: int | None = None) -> bool:
        """A claimed deadline's handler ran: remove it (or, with `again_at`, make it due again
        then: a handler that failed retries sooner than its lease). A deadline set anew since
        the claim (another score) is left as it is. True when this one was settled."""
        args: list[ScriptArg] = [due.member, due.lease]
        if again_at is not None:
            args.append(again_at)
        key = self.deadline_key(self.deadline_bucket(due.member))
        return bool(await self._settle_deadline(keys=[key], args=args))
