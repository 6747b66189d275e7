"""Arena events: members paired as they become free by the quick match's queue and matcher,
every finished race scored, the live leaderboard pushed, the end on a Redis deadline.

The rules (points, streaks, the pairing window) are server/rules/arena.py's, sans-I/O; this is
their I/O (PROTOCOL.md, Arena):

* an arena is a hash of settings and state, a hash of members (player id -> standing, JSON),
  the list of its scored races (each with its record id and what every seat scored, in the
  order scored: `rules.arena.replay` recomputes the standings from them) and the set of rooms
  already scored (applied once). Every key is on the arena's hash tag and expires KEEP_MS after
  the event's end (server/store/keys.py);
* a member is a player key's player id (a hello with `player_key`): their standing survives
  reloads and reconnections. A connection that joined is the member's presence: while it is
  here, not paused, and the member is not racing (`busy`), this process queues a ticket for it
  in the arena's quick-match queue (`arena.ID`, paired by score with the arena's rule); the
  matcher makes the room (server/race/quick.py) and marks its members busy (`made_hook`); the
  ticket's owner is told `arena_paired`, and the client takes the seat as after `matched`;
* a race's results are scored as they are stored (`finished`), and again under its record's
  reminder (`owed`, beside the standings: a process that dies after the results loses no
  race's points; the second finds it scored): the members' standings, the race appended, the
  members free again, in one compare-and-set script; this process looks at its members at
  once, others at their next look (POLL_S), and queues them again;
* the end is a deadline in Redis (`arena|ID`, fired by whichever process's janitor, as room
  clocks are); races paired before the end are played out and count (the event shows
  `running` until they are scored); nothing is paired after it;
* every process pushes the leaderboard (`arena`) to its local members and spectators when the
  arena's version moves, at most once per PUSH_S (a second; a crowd less often: one more
  second per PUSH_MEMBERS_PER_S members), one frame encoded once for all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from solrace.protocol import messages as m
from solrace.protocol.messages import ProtocolError
from solrace.protocol.names import clean_name
from solrace.server.common.codes import shown
from solrace.server.race.quick import QuickMatch
from solrace.server.race.service import RoomService
from solrace.server.rules import arena as rules
from solrace.server.rules.room import Room, addr_hash
from solrace.server.store import keys
from solrace.server.store.redis_conn import Client

log = logging.getLogger("solrace.arena")

#: an event's length bounds, minutes
MIN_MINUTES = 1
MAX_MINUTES = 240
#: members one arena holds at most (a join over it is refused `rate_limited`)
MEMBERS_CAP = 5_000
#: arenas running at once on the deployment, and arenas one address may create per hour
RUNNING_CAP = 1_000
HOST_CAP = 10
HOST_WINDOW_MS = 3_600_000
#: how long an ended arena's results are kept
KEEP_MS = 7 * 86_400_000
#: a member marked racing this long is free again even if its race was never scored
BUSY_STALE_MS = 3 * 3_600_000
#: seconds between a process's looks at its members (free ones are queued) and pushes
POLL_S = 0.25
PUSH_S = 1.0
#: members per second of push interval beyond PUSH_S: a crowd's leaderboard goes out less
#: often (1,000 members: every 4 s), as each push is one frame to every member
PUSH_MEMBERS_PER_S = 250
#: standings rows a pushed `arena` carries (the page at /api/event/ID has all)
PUSHED_ROWS = 50
#: how long the view that answers `arena_join` and `arena_watch` is reused (s): a view reads
#: every member, and a crowd joining at once must not read them once each
REPLY_VIEW_S = 0.5
#: an arena id: URL-safe, long enough not to be guessed in bulk
ID_LENGTH = 10
_ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"

# KEYS: meta members ; ARGV: pid name bot cap expire_at. Returns 1 (joined or back), -1 full
_JOIN = """
local raw = redis.call('HGET', KEYS[2], ARGV[1])
local row
if raw then
  row = cjson.decode(raw)
else
  if redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[4]) then return -1 end
  row = {score = 0, streak = 0, races = 0, wins = 0, busy = ''}
  redis.call('HINCRBY', KEYS[1], 'members', 1)
end
row.name = ARGV[2]
row.bot = ARGV[3] == '1'
row.paused = false
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(row))
redis.call('HINCRBY', KEYS[1], 'v', 1)
redis.call('PEXPIREAT', KEYS[2], ARGV[5])
return 1
"""

# KEYS: meta members ; ARGV: pid paused. Returns 1, 0 when not a member
_PAUSE = """
local raw = redis.call('HGET', KEYS[2], ARGV[1])
if not raw then return 0 end
local row = cjson.decode(raw)
row.paused = ARGV[2] == '1'
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(row))
redis.call('HINCRBY', KEYS[1], 'v', 1)
return 1
"""

# KEYS: meta members ; ARGV: room now pid... . The members of a room just made are racing.
_BUSY = """
for i = 3, #ARGV do
  local raw = redis.call('HGET', KEYS[2], ARGV[i])
  if raw then
    local row = cjson.decode(raw)
    row.busy = ARGV[1]
    row.busy_at = tonumber(ARGV[2])
    redis.call('HSET', KEYS[2], ARGV[i], cjson.encode(row))
  end
end
redis.call('HINCRBY', KEYS[1], 'running', 1)
redis.call('HINCRBY', KEYS[1], 'v', 1)
return 1
"""

# KEYS: meta members races scored ; ARGV: mark race expire_at n pid old new ... .
# Compare-and-set: every member row as read (old, '' when absent), or nothing is written
# (0: read again). 2: scored already.
_SCORE = """
if redis.call('SISMEMBER', KEYS[4], ARGV[1]) == 1 then return 2 end
local n = tonumber(ARGV[4])
for i = 0, n - 1 do
  local pid, old = ARGV[5 + 3 * i], ARGV[6 + 3 * i]
  local now = redis.call('HGET', KEYS[2], pid) or ''
  if now ~= old then return 0 end
end
for i = 0, n - 1 do
  local pid, new = ARGV[5 + 3 * i], ARGV[7 + 3 * i]
  if new ~= '' then redis.call('HSET', KEYS[2], pid, new) end
end
redis.call('SADD', KEYS[4], ARGV[1])
redis.call('RPUSH', KEYS[3], ARGV[2])
redis.call('HINCRBY', KEYS[1], 'races', 1)
if tonumber(redis.call('HGET', KEYS[1], 'running') or '0') > 0 then
  redis.call('HINCRBY', KEYS[1], 'running', -1)
end
redis.call('HINCRBY', KEYS[1], 'v', 1)
for i = 1, 4 do redis.call('PEXPIREAT', KEYS[i], ARGV[3]) end
return 1
"""

# KEYS: meta members races scored arenas ; ARGV: id expire_at. The event's end.
_END = """
redis.call('ZREM', KEYS[5], ARGV[1])
if redis.call('HGET', KEYS[1], 'state') ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'ended')
redis.call('HINCRBY', KEYS[1], 'v', 1)
for i = 1, 4 do redis.call('PEXPIREAT', KEYS[i], ARGV[2]) end
return 1
"""


@dataclass
class Member:
    """A connection here that is an arena member's presence (it is queued while free)."""

    conn: Any  # server/net/conn.py `Conn`
    arena: str
    player: str
    name: str
    bot: bool
    addr: str
    paused: bool = False
    #: when this process last told it `arena_paired` (monotonic): not queued again until its
    #: room marks it busy in Redis
    told: float = 0.0


@dataclass
class Arena:
    """What a process keeps of an arena it serves: its fixed settings, its watchers."""

    id: str
    game: str
    max_players: int
    ends_at: int
    watchers: set[Any] = field(default_factory=set)
    version: int = -1
    pushed_at: float = 0.0
    #: seconds between two pushes (PUSH_S, longer for a crowd: PUSH_MEMBERS_PER_S)
    every: float = PUSH_S


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


class ArenaService:
    """Arena events on this process: create, join, leave, watch, score, end; the queueing of
    its free members and the leaderboard pushes."""

    def __init__(
        self,
        service: RoomService,
        quick: QuickMatch,
        send: Callable[[list[Any], dict[str, Any]], None],
    ) -> None:
        self.service = service
        self.quick = quick
        self.store = service.store
        self.redis: Client = service.store.redis
        self.prefix = service.store.prefix
        #: (connections, message): written now, encoded once (server/net/fanout.py)
        self.send = send
        #: the shortest event (minutes); tests make it shorter
        self.min_minutes: float = MIN_MINUTES
        self.members: dict[int, Member] = {}
        self.arenas: dict[str, Arena] = {}
        self.watching: dict[int, str] = {}
        #: the reply view of each arena lately asked about: (when, view)
        self._replies: dict[str, tuple[float, dict[str, Any]]] = {}
        self._scripts = {
            name: self.redis.register_script(src)
            for name, src in (
                ("join", _JOIN),
                ("pause", _PAUSE),
                ("busy", _BUSY),
                ("score", _SCORE),
                ("end", _END),
            )
        }
        self._task: asyncio.Task[None] | None = None
        self._stopped = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()

    # --- keys ------------------------------------------------------------------------------

    def _keys(self, aid: str) -> list[str]:
        return [keys.arena(self.prefix, aid, p) for p in ("meta", "members", "races", "scored")]

    @staticmethod
    def queue(aid: str) -> str:
        return f"arena.{aid}"

    # --- requests --------------------------------------------------------------------------

    async def create(
        self,
        game: str,
        minutes: float,
        max_players: int,
        title: str,
        host: str | None,
        host_name: str,
        addr: str,
        exempt: bool = False,
    ) -> dict[str, Any]:
        """A new arena, running from now for `minutes`; returns its view."""
        if game not in m.GAME_NAMES:
            raise ProtocolError("bad_options", f"unknown game {game!r}")
        if not self.min_minutes <= minutes <= MAX_MINUTES:
            raise ProtocolError(
                "bad_options", f"minutes: {self.min_minutes:g} to {MAX_MINUTES}", field="minutes"
            )
        if not rules.MIN_ROOM <= max_players <= rules.MAX_ROOM:
            raise ProtocolError(
                "bad_options",
                f"max_players: {rules.MIN_ROOM} to {rules.MAX_ROOM}",
                field="max_players",
            )
        if host is None:
            raise ProtocolError(
                "player_key_required", "an arena's host and members say hello with a player key"
            )
        if not exempt:
            hk = keys.arena_host(self.prefix, addr_hash(addr))
            pipe = self.redis.pipeline(transaction=False)
            pipe.incr(hk)
            pipe.pexpire(hk, HOST_WINDOW_MS, nx=True)
            made, _ = await pipe.execute()
            if int(made) > HOST_CAP:
                raise ProtocolError(
                    "rate_limited",
                    f"this address created {HOST_CAP} arenas in the last hour",
                    limit="arenas",
                )
        if await self.redis.zcard(keys.arenas(self.prefix)) >= RUNNING_CAP:
            raise ProtocolError("busy", "too many arenas are running; try again later")
        aid = "".join(secrets.choice(_ID_ALPHABET) for _ in range(ID_LENGTH))
        now = self.service.clock()
        ends = now + int(minutes * 60_000)
        meta = {
            "id": aid,
            "game": game,
            "title": clean_name(title) if title else f"{game} arena",
            "max_players": max_players,
            "host": host,
            "host_name": clean_name(host_name),
            "starts_at": now,
            "ends_at": ends,
            "state": "running",
            "v": 0,
            "running": 0,
            "races": 0,
            "members": 0,
        }
        mk = self._keys(aid)[0]
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(mk, mapping={k: str(v) for k, v in meta.items()})
        pipe.pexpireat(mk, ends + KEEP_MS)
        await pipe.execute()
        await self.redis.zadd(keys.arenas(self.prefix), {aid: ends})
        await self.store.add_deadline(f"arena|{aid}", ends)
        return await self.view(aid)

    async def _arena(self, aid: str) -> Arena:
        a = self.arenas.get(aid)
        if a is not None:
            return a
        if not aid or len(aid) > 32:
            raise ProtocolError("no_arena", "no arena has that id")
        meta = await self.redis.hmget(self._keys(aid)[0], ["game", "max_players", "ends_at"])
        if meta[0] is None:
            raise ProtocolError("no_arena", "no arena has that id")
        a = Arena(aid, _s(meta[0]), int(_s(meta[1])), int(_s(meta[2])))
        self.arenas[aid] = a
        return a

    async def join(self, conn: Any, aid: str, name: str) -> dict[str, Any]:
        """`conn` becomes its player's presence in the arena (a member from now on, their
        standing kept): queued whenever free until it leaves, pauses or goes."""
        if conn.player is None:
            raise ProtocolError(
                "player_key_required", "an arena's members say hello with a player key"
            )
        a = await self._arena(aid)
        state = await self.redis.hget(self._keys(aid)[0], "state")
        if _s(state) != "running":
            raise ProtocolError("bad_state", "the arena is over")
        name = clean_name(name)
        joined = await self._scripts["join"](
            keys=self._keys(aid)[:2],
            args=[conn.player, name, "1" if conn.bot else "0", MEMBERS_CAP, a.ends_at + KEEP_MS],
        )
        if int(joined) < 0:
            raise ProtocolError(
                "rate_limited", f"the arena has {MEMBERS_CAP} members", limit="members"
            )
        old = self.members.get(id(conn))
        if old is not None and old.arena != aid:
            await self.leave(conn, old.arena)
        self.members[id(conn)] = Member(conn, aid, conn.player, name, conn.bot, conn.addr)
        self._watch(conn, a)
        self._start()
        return await self._reply_view(aid)

    async def leave(self, conn: Any, aid: str) -> dict[str, Any]:
        """Pause: not paired again (a race on is played out); the standing is kept, and a
        later `arena_join` comes back."""
        member = self.members.get(id(conn))
        if member is None or member.arena != aid:
            raise ProtocolError("bad_state", "this connection is not in that arena")
        del self.members[id(conn)]
        with contextlib.suppress(Exception):
            await self.quick.cancel(conn)
        await self._scripts["pause"](keys=self._keys(aid)[:2], args=[member.player, "1"])
        self._replies.pop(aid, None)
        return await self.view(aid)

    async def watch(self, conn: Any, aid: str) -> dict[str, Any]:
        """A spectator of the arena's leaderboard (its pushes)."""
        a = await self._arena(aid)
        self._watch(conn, a)
        self._start()
        return await self._reply_view(aid)

    async def _reply_view(self, aid: str) -> dict[str, Any]:
        """The view a join or a watch is answered with: at most REPLY_VIEW_S old (the pushes
        bring every change after it)."""
        mono = time.monotonic()
        cached = self._replies.get(aid)
        if cached is not None and mono - cached[0] < REPLY_VIEW_S:
            return cached[1]
        view = await self.view(aid)
        if len(self._replies) > 1000:
            self._replies.clear()
        self._replies[aid] = (mono, view)
        return view

    def _watch(self, conn: Any, a: Arena) -> None:
        was = self.watching.get(id(conn))
        if was is not None and was != a.id and was in self.arenas:
            self.arenas[was].watchers.discard(conn)
        self.watching[id(conn)] = a.id
        a.watchers.add(conn)

    def dropped(self, conn: Any) -> None:
        """The connection is gone: no longer a presence or a watcher here (its ticket goes
        with it: QuickMatch.dropped)."""
        self.members.pop(id(conn), None)
        aid = self.watching.pop(id(conn), None)
        if aid is not None and aid in self.arenas:
            self.arenas[aid].watchers.discard(conn)

    # --- views -------------------------------------------------------------------------------

    async def view(
        self, aid: str, rows: int | None = PUSHED_ROWS, races: bool = False
    ) -> dict[str, Any]:
        """The arena's settings, state and leaderboard (the first `rows`; None: all), and with
        `races` every scored race (what /api/event/ID shows)."""
        k = self._keys(aid)
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(k[0])
        pipe.hgetall(k[1])
        if races:
            pipe.lrange(k[2], 0, -1)
        got = await pipe.execute()
        meta = {_s(a): _s(b) for a, b in got[0].items()}
        if not meta:
            raise ProtocolError("no_arena", "no arena has that id")
        members = {_s(a): json.loads(b) for a, b in got[1].items()}
        table = rules.standings(
            (pid, rules.Standing.from_json(row), str(row.get("name", "")))
            for pid, row in members.items()
        )
        standings = []
        for rank, (pid, st) in enumerate(table[:rows] if rows is not None else table, 1):
            row = members[pid]
            standings.append(
                {
                    "rank": rank,
                    "player": pid,
                    "name": row.get("name", ""),
                    "bot": bool(row.get("bot")),
                    "score": st.score,
                    "streak": st.streak,
                    "fire": st.streak >= 2,
                    "races": st.races,
                    "wins": st.wins,
                    "sheet": st.sheet,
                    "paused": bool(row.get("paused")),
                    "racing": bool(row.get("busy")),
                }
            )
        out: dict[str, Any] = {
            "id": meta["id"],
            "title": meta.get("title", ""),
            "game": meta["game"],
            "max_players": int(meta["max_players"]),
            "host": meta.get("host"),
            "host_name": meta.get("host_name", ""),
            "state": meta["state"],
            "starts_at": int(meta["starts_at"]),
            "ends_at": int(meta["ends_at"]),
            "members": int(meta.get("members", 0)),
            "running": int(meta.get("running", 0)),
            "races": int(meta.get("races", 0)),
            "version": int(meta.get("v", 0)),
            "standings": standings,
        }
        if races:
            out["race_list"] = [json.loads(r) for r in got[2]]
        return out

    # --- the matcher's side ------------------------------------------------------------------

    async def queues(self) -> dict[str, rules.ArenaPairing]:
        """The running arenas' queues and their pairings (QuickMatch.extra_queues; the
        matcher keeps the one it got first for each queue)."""
        now = self.service.clock()
        ids = await self.redis.zrangebyscore(keys.arenas(self.prefix), now, "+inf")
        out: dict[str, rules.ArenaPairing] = {}
        for raw in ids:
            aid = _s(raw)
            try:
                a = await self._arena(aid)
            except ProtocolError:
                continue
            out[self.queue(aid)] = rules.ArenaPairing(a.max_players)
        return out

    async def made(self, aid: str, room: str, members: list[dict[str, Any]]) -> None:
        """A room was made for arena members (QuickMatch.made_hook): they are racing."""
        await self._scripts["busy"](
            keys=self._keys(aid)[:2],
            args=[room, self.service.clock(), *(t["player"] for t in members if t.get("player"))],
        )

    # --- scoring -------------------------------------------------------------------------------

    def finished(self, room: Room) -> None:
        """The service's hook as a race's results are stored: score it now (its members are
        paired again at once); the record's reminder scores it again if this fails (`owed`:
        applied once either way)."""
        owe = self.owed(room)
        if owe is None:
            return
        task: asyncio.Task[None] = asyncio.ensure_future(owe())
        self._tasks.add(task)
        task.add_done_callback(self._scored)

    def _scored(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning(
                "arena: a race not scored yet (its record's reminder will)",
                exc_info=task.exception(),
            )

    def owed(self, room: Room) -> Callable[[], Awaitable[None]] | None:
        """What a finished arena race owes (beside its record, under its reminder): its
        points (Records.also)."""
        aid = room.doc.get("arena")
        results = room.doc.get("results")
        if not aid or not results:
            return None
        mark = f"{room.code}|{room.doc['round']}"
        race = {
            "record": results.get("record"),
            "room": shown(room.code),
            "round": room.doc["round"],
            "finished_at": room.doc.get("finished_at"),
            "ranking": [
                {f: r.get(f) for f in ("seat", "name", "player", "place", "status")}
                for r in results["ranking"]
            ],
        }

        async def owe() -> None:
            await self.score(aid, mark, room.code, race)

        return owe

    async def score(self, aid: str, mark: str, code: str, race: dict[str, Any]) -> bool:
        """Apply a finished race's points once (compare-and-set on the members' rows)."""
        k = self._keys(aid)
        pids = [r["player"] for r in race["ranking"] if r.get("player")]
        expire_at = None
        for _ in range(50):
            raw = await self.redis.hmget(k[1], pids) if pids else []
            rows = {pid: (_s(v) if v is not None else "") for pid, v in zip(pids, raw, strict=True)}
            if expire_at is None:
                ends = await self.redis.hget(k[0], "ends_at")
                if ends is None:
                    return False  # the arena expired
                expire_at = int(_s(ends)) + KEEP_MS
            before = {pid: rules.Standing.from_json(json.loads(v)) for pid, v in rows.items() if v}
            scored = rules.score_race(race["ranking"], before)
            args: list[Any] = []
            for pid, old in rows.items():
                if pid not in scored or not old:
                    args += [pid, old, ""]  # not a member (left before joining?): nothing
                    continue
                row = json.loads(old)
                row.update(scored[pid][1].to_json())
                if row.get("busy") == code:
                    row["busy"] = ""
                args += [pid, old, json.dumps(row, separators=(",", ":"))]
            entry = {**race, "points": {pid: got for pid, (got, _st) in scored.items()}}
            done = await self._scripts["score"](
                keys=k,
                args=[
                    mark,
                    json.dumps(entry, separators=(",", ":")),
                    expire_at,
                    len(rows),
                    *args,
                ],
            )
            if int(done) != 0:
                self._wake.set()  # its members are free: queue them now
                return int(done) == 1
        raise RuntimeError(f"arena {aid}: race {mark} not scored (contention)")

    async def end(self, aid: str) -> None:
        """The event's end (its deadline): nothing is paired after it; races on count."""
        k = self._keys(aid)
        ends = await self.redis.hget(k[0], "ends_at")
        expire_at = (int(_s(ends)) if ends is not None else self.service.clock()) + KEEP_MS
        await self._scripts["end"](keys=[*k, keys.arenas(self.prefix)], args=[aid, expire_at])

    # --- the loop ------------------------------------------------------------------------------

    def _start(self) -> None:
        if self._task is None and not self._stopped:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="arena")

    async def close(self) -> None:
        self._stopped = True
        for task in list(self._tasks):
            task.cancel()
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=5.0)
            self._task = None

    async def _run(self) -> None:
        while not self._stopped:
            try:
                await self.round()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("arena: a round failed", exc_info=True)
                await asyncio.sleep(1.0)
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(POLL_S):
                    await self._wake.wait()

    async def round(self) -> None:
        """One look: queue the free members here, push changed leaderboards."""
        started = time.monotonic()
        now = self.service.clock()
        by_arena: dict[str, list[Member]] = {}
        for mem in list(self.members.values()):
            if self.quick.ticket_of(mem.conn) is None:
                if started - mem.told > 5.0:
                    by_arena.setdefault(mem.arena, []).append(mem)
            elif now >= (await self._arena(mem.arena)).ends_at:
                await self.quick.cancel(mem.conn)  # over: its queue is paired no more
        for aid, mems in by_arena.items():
            a = await self._arena(aid)
            k = self._keys(aid)
            pipe = self.redis.pipeline(transaction=False)
            pipe.hget(k[0], "state")
            pipe.hmget(k[1], [x.player for x in mems])
            state, rows = await pipe.execute()
            if _s(state) != "running" or now >= a.ends_at:
                if _s(state) == "running":
                    await self.end(aid)  # the deadline is late: end it now
                for mem in mems:  # over: watchers of its final standings from now on
                    if self.members.get(id(mem.conn)) is mem:
                        del self.members[id(mem.conn)]
                continue
            for mem, raw in zip(mems, rows, strict=True):
                if raw is None or self.members.get(id(mem.conn)) is not mem:
                    continue
                row = json.loads(raw)
                if row.get("paused"):
                    continue
                if row.get("busy") and now - int(row.get("busy_at") or 0) < BUSY_STALE_MS:
                    continue
                if self.quick.ticket_of(mem.conn) is not None or mem.told > started:
                    continue
                try:
                    await self.quick.ask(
                        mem.conn,
                        a.game,
                        False,
                        mem.name,
                        mem.player,
                        mem.addr,
                        mem.bot,
                        self._teller(mem),
                        queue=self.queue(aid),
                        rating=float(row.get("score") or 0),
                        arena=aid,
                    )
                except ProtocolError as exc:
                    log.info("arena %s: a member not queued: %s", aid, exc.message)
        await self._push()

    def _teller(self, mem: Member) -> Callable[[dict[str, Any]], None]:
        def tell(msg: dict[str, Any]) -> None:
            if msg.get("type") != "matched":
                return  # an error: the member is queued again at the next look
            mem.told = time.monotonic()
            self.send(
                [mem.conn],
                {
                    "type": "arena_paired",
                    "arena": mem.arena,
                    **{
                        f: msg[f] for f in ("room", "seat", "token", "starts_at", "players", "here")
                    },
                },
            )

        return tell

    async def _push(self) -> None:
        mono = time.monotonic()
        watched = [a for a in self.arenas.values() if a.watchers]
        for a in list(self.arenas.values()):
            if not a.watchers and not any(x.arena == a.id for x in self.members.values()):
                del self.arenas[a.id]
        due = [a for a in watched if mono - a.pushed_at >= a.every]
        if not due:
            return
        pipe = self.redis.pipeline(transaction=False)
        for a in due:
            pipe.hget(self._keys(a.id)[0], "v")
        versions = await pipe.execute()
        for a, v in zip(due, versions, strict=True):
            if v is None or int(_s(v)) == a.version:
                continue
            try:
                view = await self.view(a.id)
            except ProtocolError:
                continue
            a.version, a.pushed_at = view["version"], mono
            a.every = max(PUSH_S, view["members"] / PUSH_MEMBERS_PER_S)
            self.send(list(a.watchers), {"type": "arena", "arena": view})
