"""All Redis I/O of the race server, and nothing of the race rules.

Layout, for a key prefix P and a room code C (every key of a room shares the
hash tag `{C}` so a room lives in one Redis Cluster slot and Lua may touch it all):

    P room:{C}:meta      hash  doc (msgpack room document), ver (int, bumped on every change)
    P room:{C}:revs      hash  seat -> revision of that seat's log (bumped on every append/pop)
    P room:{C}:log:<s>   list  seat s's moves of the current race, "move at_ms" each
    P room:{C}:seq       int   number of the last room event
    P room:{C}:events    stream the last MAX_EVENTS events, entry id "<n>-0", field d = msgpack
    P room:{C}:conn      hash  seat -> live connections; "spectators" -> live spectator connections
    P room:{C}:pub       pub/sub channel: b"e<origin><n>:<msgpack event>" and b"b<origin><delay>:<board frame>",
                               origin = the publishing Store's 8-byte id (its own process skips them)
    P lobby              set   codes of public rooms (listing only; stale codes are dropped on read)
    P procs              hash  server process id -> last heartbeat (ms)
    P proc:<id>:conns    hash  "<code>|<seat or spectators>" -> connections that process holds
    P deadlines          zset  "grace|<code>|<seat>" and "tick|<code>" scored by when they are due;
                               any process may claim one (ZREM decides who), so a crash loses none

Redis is the source of truth: a move is stored by a Lua script that checks the
document's version, the log's length and its revision in one step, so two
processes (or two connections of one seat) can never both store move N.

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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, cast

import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from solrace.protocol.messages import decode_trusted, encode
from solrace.server import ServerError

log = logging.getLogger("solrace.server")

MAX_EVENTS = 500
#: Redis connections one server process may hold at once (pub/sub takes one of them)
POOL_SIZE = 64
#: seconds a command waits for a free pooled connection before it fails
POOL_TIMEOUT = 20.0
ACTIVE_TTL_MS = 24 * 3600 * 1000  # a room nobody touches for a day goes away

_COMMIT = """
-- KEYS: meta seq events revs conn log0..logN ; ARGV: ver doc channel maxlen ttl flags origin nrev (seat rev)* events*
-- flags: 'c' clears the logs (a new round), 't' trims the stream to this commit's events (finished)
local ver = tonumber(redis.call('HGET', KEYS[1], 'ver') or '0')
if ver ~= tonumber(ARGV[1]) then return {-1, ver} end
local nrev = tonumber(ARGV[8])
for i = 0, nrev - 1 do
  local seat = ARGV[9 + 2 * i]
  local want = tonumber(ARGV[10 + 2 * i])
  local have = tonumber(redis.call('HGET', KEYS[4], seat) or '0')
  if have ~= want then return {-3, tonumber(seat), have} end
end
redis.call('HSET', KEYS[1], 'doc', ARGV[2], 'ver', ver + 1)
if string.find(ARGV[6], 'c', 1, true) then
  for k = 6, #KEYS do redis.call('DEL', KEYS[k]) end
  redis.call('DEL', KEYS[4])
end
local out = {ver + 1}
for i = 9 + 2 * nrev, #ARGV do
  local n = redis.call('INCR', KEYS[2])
  redis.call('XADD', KEYS[3], 'MAXLEN', ARGV[4], n .. '-0', 'd', ARGV[i])
  redis.call('PUBLISH', ARGV[3], 'e' .. ARGV[7] .. n .. ':' .. ARGV[i])
  out[#out + 1] = n
end
if string.find(ARGV[6], 't', 1, true) then
  redis.call('XTRIM', KEYS[3], 'MAXLEN', math.max(1, #ARGV - 8 - 2 * nrev))
end
local ttl = tonumber(ARGV[5])
if ttl > 0 then
  for k = 1, #KEYS do redis.call('PEXPIRE', KEYS[k], ttl) end
end
return out
"""

_APPEND = """
-- KEYS: meta log revs seq events conn ; ARGV: ver len rev seat op entry channel maxlen ttl event board origin
-- op 'push' appends entry; op 'pop' removes the last entry, which must equal entry.
-- The board is published only while the room has spectators; the reply carries their count.
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
rev = redis.call('HINCRBY', KEYS[3], ARGV[4], 1)
local n = redis.call('INCR', KEYS[4])
redis.call('XADD', KEYS[5], 'MAXLEN', ARGV[8], n .. '-0', 'd', ARGV[10])
redis.call('PUBLISH', ARGV[7], 'e' .. ARGV[12] .. n .. ':' .. ARGV[10])
local watching = tonumber(redis.call('HGET', KEYS[6], 'spectators') or '0')
if ARGV[11] ~= '' and watching > 0 then redis.call('PUBLISH', ARGV[7], 'b' .. ARGV[12] .. ARGV[11]) end
local ttl = tonumber(ARGV[9])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('PEXPIRE', KEYS[3], ttl)
end
return {len, rev, n, watching}
"""

_PRESENCE = """
-- KEYS: conn seq events ; ARGV: field delta channel maxlen on_event off_event ttl origin
local before = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local after = redis.call('HINCRBY', KEYS[1], ARGV[1], tonumber(ARGV[2]))
if after < 0 then redis.call('HSET', KEYS[1], ARGV[1], 0); after = 0 end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[7]))
local changed = (before > 0) ~= (after > 0)
local payload = ARGV[5]
if after == 0 then payload = ARGV[6] end
if changed and payload ~= '' then
  local n = redis.call('INCR', KEYS[2])
  redis.call('XADD', KEYS[3], 'MAXLEN', ARGV[4], n .. '-0', 'd', payload)
  redis.call('PUBLISH', ARGV[3], 'e' .. ARGV[8] .. n .. ':' .. payload)
  return {after, n}
end
return {after, 0}
"""


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


class Conflict(ServerError):
    """The store refused a write made against an old version; reload and try again."""

    def __init__(self, what: str, have: int) -> None:
        super().__init__(f"{what} changed (now {have})")
        self.what = what
        self.have = have


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


def _text(value: bytes | str) -> str:
    """A Redis reply as text (this client does not decode replies: they come as bytes)."""
    return value.decode() if isinstance(value, bytes) else value


def _raw(value: bytes | str) -> bytes:
    return value.encode() if isinstance(value, str) else value


class Store:
    def __init__(
        self,
        redis: aioredis.Redis,
        prefix: str = "",
        *,
        finished_ttl: int = 3600,
        max_events: int = MAX_EVENTS,
        sink: EventSink | None = None,
    ) -> None:
        self.redis = redis
        self.prefix = prefix
        self.finished_ttl_ms = finished_ttl * 1000
        self.max_events = max_events
        self._commit = redis.register_script(_COMMIT)
        self._append = redis.register_script(_APPEND)
        self._presence = redis.register_script(_PRESENCE)
        #: tags what this store publishes, so its own process can skip it on pub/sub
        self.origin: bytes = secrets.token_hex(ORIGIN_LEN // 2).encode()
        #: None: nobody in this process watches rooms (tools, tests of the store alone)
        self.sink = sink
        self._pubsub: PubSub | None = None
        self._listener: asyncio.Task[None] | None = None
        self._channels: set[str] = set()

    def _fan_event(self, code: str, n: int, event: dict[str, Any]) -> None:
        """Hand a stored event to this process's own connections; a failure here must not
        make a stored write look failed (the listener-side catch-up still repairs gaps)."""
        if self.sink is not None:
            try:
                self.sink.local_event(code, n, event)
            except Exception:
                log.exception("local fan-out of event %d in %s", n, code)

    def _fan_board(self, code: str, delay: int, frame: bytes) -> None:
        if self.sink is not None:
            try:
                self.sink.board(code, delay, frame)
            except Exception:
                log.exception("local fan-out of a board in %s", code)

    # --- pub/sub: the one place that knows the published format ---------------------------

    async def subscribe(self, code: str) -> None:
        """Hear the room's events from other processes (until `unsubscribe`)."""
        channel = self.channel(code)
        if channel in self._channels:
            return
        self._channels.add(channel)
        if self._pubsub is None:
            self._pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        await self._pubsub.subscribe(channel)
        if self._listener is None:
            self._listener = asyncio.create_task(self._listen())

    async def unsubscribe(self, code: str) -> None:
        channel = self.channel(code)
        if channel in self._channels and self._pubsub is not None:
            self._channels.discard(channel)
            await self._pubsub.unsubscribe(channel)

    async def _listen(self) -> None:
        assert self._pubsub is not None
        while True:
            try:
                if not self._channels:
                    await asyncio.sleep(0.05)
                    continue
                msg = await self._pubsub.get_message(timeout=1.0)
                if msg is not None and msg.get("type") == "message":
                    self.receive(msg["channel"], msg["data"])
            except asyncio.CancelledError:
                raise
            except Exception:  # a bad message must not stop the fan-out
                log.exception("pub/sub listener")
                await asyncio.sleep(0.1)

    def receive(self, channel: bytes | str, data: bytes) -> None:
        """One published message: b"e<origin><n>:<event>" or b"b<origin><delay>:<frame>".

        Our own (same origin) were handed to the sink when they were stored: dropped here
        without decoding them."""
        if self.sink is None or data[1 : 1 + ORIGIN_LEN] == self.origin:
            return
        code = _text(channel).rsplit("{", 1)[1].split("}", 1)[0]
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
        """A store on a bounded pool whose callers queue for a connection.

        redis-py's default pool raises MaxConnectionsError the moment every connection is
        in use, so a burst (rooms starting together, a backlog of moves) became `internal`
        errors; a blocking pool makes the burst wait its turn instead.
        """
        pool = aioredis.BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=pool_timeout, client_name=client_name
        )
        return cls(
            aioredis.Redis.from_pool(pool), prefix, **kw
        )  # closing the store closes the pool

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(BaseException):
                await self._listener
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
        await self.redis.aclose()

    # --- keys ---------------------------------------------------------------------------

    def key(self, code: str, part: str) -> str:
        return f"{self.prefix}room:{{{code}}}:{part}"

    def log_key(self, code: str, seat: int) -> str:
        return self.key(code, f"log:{seat}")

    def channel(self, code: str) -> str:
        return self.key(code, "pub")

    @property
    def lobby_key(self) -> str:
        return f"{self.prefix}lobby"

    def room_keys(self, code: str, seats: int) -> list[str]:
        return [self.key(code, p) for p in ("meta", "seq", "events", "revs", "conn")] + [
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
            *rev_args,
            *(encode(e) for e in events),
        ]
        out = await self._commit(keys=self.room_keys(code, seats), args=args)
        if out[0] == -1:
            raise Conflict("version", int(out[1]))
        if out[0] == -3:
            raise Conflict("log", int(out[2]))
        numbers = [int(n) for n in out[1:]]
        for n, event in zip(numbers, events, strict=False):
            self._fan_event(code, n, event)
        return int(out[0]), numbers

    async def load(self, code: str) -> Loaded | None:
        """Document, version, logs and revisions read in one transaction (one consistent cut)."""
        meta = await self.redis.hgetall(self.key(code, "meta"))
        if not meta:
            return None
        doc = decode_trusted(_raw(meta[b"doc"]))
        seats = len(doc["seats"])
        pipe = self.redis.pipeline(transaction=True)
        pipe.hget(self.key(code, "meta"), "ver")
        pipe.hgetall(self.key(code, "revs"))
        pipe.get(self.key(code, "seq"))
        for s in range(seats):
            pipe.lrange(self.log_key(code, s), 0, -1)
        got = await pipe.execute()
        ver = int(got[0] or 0)
        if ver != int(meta[b"ver"]):
            return await self.load(code)  # changed between the two reads: read again
        revs = {int(k): int(v) for k, v in got[1].items()}
        logs = {s: list(got[3 + s]) for s in range(seats)}
        return Loaded(doc, ver, logs, revs, int(got[2] or 0))

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
        ]
        args: list[ScriptArg] = [
            ver,
            length,
            rev,
            seat,
            "pop" if pop else "push",
            entry,
            self.channel(code),
            self.max_events,
            ACTIVE_TTL_MS,
            encode(event),
            b"%d:%s" % (delay, board) if board else b"",
            self.origin,
        ]
        out = await self._append(keys=keys, args=args)
        code_ = int(out[0])
        if code_ < 0:
            raise Conflict(
                {-1: "version", -2: "length", -3: "revision", -4: "entry"}[code_], int(out[1])
            )
        stored = Appended(int(out[0]), int(out[1]), int(out[2]), int(out[3]))
        self._fan_event(code, stored.n, event)
        if board and stored.spectators > 0:
            self._fan_board(code, delay, board)
        return stored

    async def publish_board(self, code: str, board: bytes, delay: int = 0) -> None:
        """A board the append did not carry (this process thought nobody was watching)."""
        await self.redis.publish(self.channel(code), b"b%s%d:%s" % (self.origin, delay, board))
        self._fan_board(code, delay, board)

    # --- events -------------------------------------------------------------------------

    async def last_event(self, code: str) -> int:
        return int(await self.redis.get(self.key(code, "seq")) or 0)

    async def events_after(self, code: str, after: int) -> list[tuple[int, dict[str, Any]]] | None:
        """Events numbered after `after`, or None when some of them are no longer kept."""
        rows = await self.redis.xrange(self.key(code, "events"), min=f"{after + 1}-0", max="+")
        last = await self.last_event(code)
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
    ) -> tuple[int, int]:
        """Count a connection in or out; emit on_event/off_event when the count crosses zero."""
        keys = [self.key(code, "conn"), self.key(code, "seq"), self.key(code, "events")]
        args: list[ScriptArg] = [
            field,
            delta,
            self.channel(code),
            self.max_events,
            encode(on_event) if on_event else "",
            encode(off_event) if off_event else "",
            ACTIVE_TTL_MS,
            self.origin,
        ]
        out = await self._presence(keys=keys, args=args)
        after, n = int(out[0]), int(out[1])
        event = off_event if after == 0 else on_event
        if n and event is not None:
            self._fan_event(code, n, event)
        return after, n

    async def connections(self, code: str) -> dict[str, int]:
        raw = await self.redis.hgetall(self.key(code, "conn"))
        return {_text(k): int(v) for k, v in raw.items()}

    # --- lobby --------------------------------------------------------------------------

    async def list_public(self, codes_limit: int = 100) -> list[dict[str, Any]]:
        picked = await self.redis.srandmember(self.lobby_key, codes_limit)  # with a count: a list
        codes = [_text(c) for c in cast(list[bytes], picked or [])]
        out = []
        for code in codes:
            meta = await self.redis.hget(self.key(code, "meta"), "doc")
            if not meta:
                await self.redis.srem(self.lobby_key, code)
                continue
            out.append(decode_trusted(_raw(meta)))
        return out

    async def set_public(self, code: str, public: bool) -> None:
        if public:
            await self.redis.sadd(self.lobby_key, code)
        else:
            await self.redis.srem(self.lobby_key, code)

    # --- server processes, their connections, and deadlines -----------------------------

    @property
    def procs_key(self) -> str:
        return f"{self.prefix}procs"

    def proc_conns_key(self, proc: str) -> str:
        return f"{self.prefix}proc:{proc}:conns"

    @property
    def deadlines_key(self) -> str:
        return f"{self.prefix}deadlines"

    async def heartbeat(self, proc: str, now: int) -> None:
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(self.procs_key, proc, now)
        pipe.pexpire(self.proc_conns_key(proc), ACTIVE_TTL_MS)
        await pipe.execute()

    async def note_connection(self, proc: str, code: str, field: str, delta: int) -> None:
        """What this process holds, so that another can undo its presence if it dies."""
        await self.redis.hincrby(self.proc_conns_key(proc), f"{code}|{field}", delta)

    async def claim_dead(self, now: int, max_silence_ms: int) -> list[tuple[str, dict[str, int]]]:
        """Processes silent too long, each claimed by exactly one caller, with what they held."""
        out = []
        for proc, beat in (await self.redis.hgetall(self.procs_key)).items():
            if int(beat) >= now - max_silence_ms:
                continue
            if await self.redis.hdel(self.procs_key, proc) != 1:
                continue  # another process claimed it first
            pid = _text(proc)
            key = self.proc_conns_key(pid)
            held = {_text(k): int(v) for k, v in (await self.redis.hgetall(key)).items()}
            await self.redis.delete(key)
            out.append((pid, held))
        return out

    async def retire(self, proc: str) -> None:
        await self.redis.hdel(self.procs_key, proc)
        await self.redis.delete(self.proc_conns_key(proc))

    async def add_deadline(self, member: str, at_ms: int) -> None:
        await self.redis.zadd(self.deadlines_key, {member: at_ms})

    async def claim_due(self, now: int, limit: int = 100) -> list[str]:
        """Deadlines that are due, each handed to exactly one caller."""
        due = await self.redis.zrangebyscore(self.deadlines_key, "-inf", now, start=0, num=limit)
        claimed = []
        for member in cast(list[bytes], due):  # members only: no scores were asked for
            if await self.redis.zrem(self.deadlines_key, member) == 1:
                claimed.append(member.decode())
        return claimed
