"""Quick match: the queue in Redis that every server process shares, and its matcher.

A player's `quick` request puts a ticket in its game's queue (rated and casual queues apart);
one process at a time, the one holding the matcher's lease, reads every queue a few times a
second, runs the pairing rule (server/rules/matchmaking.py, sans-I/O) and makes a room for each group
it seals: the members' tickets are claimed (all or none, so a cancel and a claim never both
win), the room is created by the matcher's own service (so its code is one this process owns:
with `--workers N` the front routes the room's connections back here, server/front.py), every
member seated with a token of its own and the race started (its countdown), and each member's
process is told through its inbox, which hands the client `matched` (PROTOCOL.md, Quick match).
The seat token is made by the process that holds the ticket's connection and never leaves it:
the ticket carries only the token's hash (all a room keeps), so no seat can be taken by anyone
reading the queue or the inbox in Redis.
The client then connects with the room's code and resumes its seat, as after a reload.

Keys (server/keys.py), every one a client can make bounded and expiring:

    P quick:{QUEUE}:tickets   hash  ticket id -> the ticket (JSON)         at most QUEUE_CAP
    P quick:{QUEUE}:seen      zset  ticket id -> when its process last vouched for it (ms)
    P quickbox:{PROC}         list  what a process's tickets became (JSON), at most INBOX_CAP
    P quick:lease             str   the matcher's lease (the process id), LEASE_MS

Both queue keys expire QUEUE_TTL_MS after their last write; a ticket whose process stopped
vouching for it (died, or lost the client without a cancel) for STALE_MS is dropped by the
matcher. A ticket lives as long as its connection: closing it cancels the ticket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, cast

from solrace.protocol import messages as m
from solrace.protocol.messages import ProtocolError
from solrace.protocol.names import clean_name
from solrace.server.race.service import RoomService, new_token
from solrace.server.rules.arena import ArenaPairing
from solrace.server.rules.matchmaking import Group, Pairing, Rules, Ticket
from solrace.server.rules.room import Room, addr_hash, token_hash
from solrace.server.store import keys
from solrace.server.store.redis_conn import Client

log = logging.getLogger("solrace.quick")

#: tickets one queue holds at most (a `quick` over it is refused `busy`)
QUEUE_CAP = 100_000
#: a queue's keys expire this long after their last write
QUEUE_TTL_MS = 60_000
#: a ticket nobody vouched for this long is dropped (its process died)
STALE_MS = 10_000
#: how often a process vouches for its tickets
VOUCH_S = 2.0
#: results one process's inbox holds at most, and how long it is kept unread
INBOX_CAP = 100_000
INBOX_TTL_MS = 60_000
#: the matcher's lease, and how often its holder renews it (a third of it: two renewals may
#: fail before another process can take over)
LEASE_MS = 3_000
LEASE_RENEW_S = 1.0
#: seconds between the matcher's looks at the queues, and between inbox reads (while this
#: process has tickets waiting; else IDLE_POLL_S: a room to make may come). A matcher whose
#: last look found every queue empty looks again after IDLE_POLL_S, or at once when a ticket
#: is queued here: an idle deployment then costs a few Redis calls a second, not 200 (a
#: server with no player spent 3.5% of a core, most of it here, 2026-11-26); a ticket queued
#: on another process waits at most that long to be seen, and a match needs a second one.
TICK_S = 0.1
POLL_S = 0.05
IDLE_POLL_S = 0.5
#: a ticket claimed by the matcher whose room has not come this long is told to ask again
#: (the process making its room died)
LOST_S = 15.0
#: rooms the matcher makes at once
MAKING = 16
#: the rating (openskill's mu) of a player never rated in the game
DEFAULT_RATING = 25.0

_ENQUEUE = """
local tickets, seen = KEYS[1], KEYS[2]
if redis.call('ZCARD', seen) >= tonumber(ARGV[4]) then return 0 end
redis.call('HSET', tickets, ARGV[1], ARGV[2])
redis.call('ZADD', seen, ARGV[3], ARGV[1])
redis.call('PEXPIRE', tickets, ARGV[5])
redis.call('PEXPIRE', seen, ARGV[5])
return 1
"""

_CANCEL = """
local gone = redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
return gone
"""

# all or none: a member missing (cancelled, or dropped as stale) claims nobody; returns the
# ids missing
_CLAIM = """
local tickets, seen = KEYS[1], KEYS[2]
local missing = {}
for i = 1, #ARGV do
  if not redis.call('ZSCORE', seen, ARGV[i]) then missing[#missing + 1] = ARGV[i] end
end
if #missing > 0 then return missing end
redis.call('ZREM', seen, unpack(ARGV))
redis.call('HDEL', tickets, unpack(ARGV))
return missing
"""

_SWEEP = """
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, 1000)
if #gone > 0 then
  redis.call('ZREM', KEYS[2], unpack(gone))
  redis.call('HDEL', KEYS[1], unpack(gone))
end
return #gone
"""

# vouches for the tickets still queued; returns the ids that are not (claimed, or dropped)
_VOUCH = """
local tickets, seen, now, ttl = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
local gone = {}
for i = 3, #ARGV do
  if redis.call('ZADD', seen, 'XX', 'CH', now, ARGV[i]) == 0
     and not redis.call('ZSCORE', seen, ARGV[i]) then
    gone[#gone + 1] = ARGV[i]
  end
end
if redis.call('EXISTS', seen) == 1 then
  redis.call('PEXPIRE', tickets, ttl)
  redis.call('PEXPIRE', seen, ttl)
end
return gone
"""

_DELIVER = """
redis.call('RPUSH', KEYS[1], unpack(ARGV, 3))
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[1]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

_LEASE = """
local now = redis.call('GET', KEYS[1])
if now == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not now then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""


def queue_name(game: str, rated: bool) -> str:
    """A queue per game, rated and casual apart."""
    return f"{game}.{'rated' if rated else 'casual'}"


@dataclass(frozen=True)
class QuickConfig:
    """`solrace serve --quick-*` (docs/OPERATIONS.md): the pairing rule's knobs and the room's."""

    rules: Rules = field(default_factory=Rules)
    #: seconds between the room's start and the race (the room option `countdown`)
    countdown: int = 2


@dataclass
class Waiting:
    """A ticket of this process: where to say what became of it."""

    queue: str
    owner: Any  # the connection (server/conn.py `Conn`)
    tell: Callable[[dict[str, Any]], None]
    rated: bool
    limit_key: str | None
    #: the seat token this ticket's player gets: it never leaves this process (the ticket in
    #: Redis carries only its hash, which is what the room keeps)
    token: str = ""
    #: when this process first found the ticket claimed (its room on the way), monotonic
    claimed: float | None = None


class QuickMatch:
    """The queue (every process: its own tickets, its inbox) and the matcher (the lease
    holder's)."""

    def __init__(
        self,
        service: RoomService,
        proc_id: str,
        arm: Callable[[str, int], None],
        rating_of: Callable[[str, str], Any],
        config: QuickConfig | None = None,
        *,
        matched: Callable[[Waiting], None] | None = None,
        extra_queues: Callable[[], Awaitable[dict[str, ArenaPairing]]] | None = None,
        made: Callable[[str, str, list[dict[str, Any]]], Awaitable[None]] | None = None,
    ) -> None:
        self.service = service
        self.redis: Client = service.store.redis
        self.prefix = service.store.prefix
        self.proc_id = proc_id
        self.arm = arm  # the room supervisor's timer for a race's start
        self.rating_of = rating_of  # (game, player) -> awaitable rating row or None
        self.config = config or QuickConfig()
        self.games = list(m.GAME_NAMES)
        self.waiting: dict[str, Waiting] = {}
        self.by_owner: dict[int, str] = {}
        self.pairings: dict[str, Pairing | ArenaPairing] = {}
        self.leader = False
        #: the matcher's last look found every queue empty (it looks again less often)
        self.idle = False
        #: the matcher's rounds so far (tests wait on it)
        self.rounds = 0
        #: told when a ticket is matched (the owner's rated seat is spent): (owner, waiting)
        self.matched_hook: Callable[[Waiting], None] | None = matched
        #: queues besides the games' (an arena's, server/race/arena.py): queue -> its pairing
        #: (server/rules/arena.py), asked at every matcher round
        self.extra_queues = extra_queues
        #: told as a room is made for a group whose tickets carry `arena` (its members busy):
        #: (arena id, room code, the members' tickets)
        self.made_hook = made
        self._scripts = {
            name: self.redis.register_script(src)
            for name, src in (
                ("enqueue", _ENQUEUE),
                ("cancel", _CANCEL),
                ("claim", _CLAIM),
                ("sweep", _SWEEP),
                ("vouch", _VOUCH),
                ("deliver", _DELIVER),
                ("lease", _LEASE),
            )
        }
        self._task: asyncio.Task[None] | None = None
        self._stopped = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._making = asyncio.Semaphore(MAKING)
        self._wake = asyncio.Event()

    # --- keys ------------------------------------------------------------------------------

    def _qkeys(self, queue: str) -> list[str]:
        return [keys.quick(self.prefix, queue, "tickets"), keys.quick(self.prefix, queue, "seen")]

    # --- a process's own tickets ---------------------------------------------------------------

    def ticket_of(self, owner: Any) -> str | None:
        return self.by_owner.get(id(owner))

    async def ask(
        self,
        owner: Any,
        game: str,
        rated: bool,
        name: str,
        player: str | None,
        addr: str,
        bot: bool,
        tell: Callable[[dict[str, Any]], None],
        limit_key: str | None = None,
        *,
        queue: str | None = None,
        rating: float | None = None,
        arena: str | None = None,
    ) -> dict[str, Any]:
        """Queue `owner` (a connection) for a race of `game`; returns the `queued` reply's
        fields. `tell` gets the `matched` message (or an error) later. An arena's ticket
        names its own `queue` (paired by its rule: `extra_queues`), its `rating` (the
        member's score) and the `arena` its room belongs to."""
        if game not in self.games:
            raise ProtocolError("bad_options", f"unknown game {game!r}")
        if self.ticket_of(owner) is not None:
            raise ProtocolError("bad_state", "this connection is in the quick-match queue already")
        if rated and player is None:
            raise ProtocolError(
                "player_key_required",
                "quick match is rated: say hello with a player key (or ask with rated: false)",
            )
        name = clean_name(name)
        if rating is None and player is not None:
            rating = DEFAULT_RATING
            row = await self.rating_of(game, player)
            if row:
                rating = float(row["mu"])
        if rating is None:
            rating = DEFAULT_RATING
        queue = queue or queue_name(game, rated)
        tid = secrets.token_hex(8)
        token = new_token()
        now = self.service.clock()
        ticket = {
            "id": tid,
            "proc": self.proc_id,
            "game": game,
            "rated": rated,
            "name": name,
            "player": player,
            "bot": bot,
            "addr": addr_hash(addr),
            "rating": rating,
            "at": now,
            "seat": token_hash(token),
            **({"arena": arena} if arena else {}),
        }
        added = await self._scripts["enqueue"](
            keys=self._qkeys(queue),
            args=[tid, json.dumps(ticket, separators=(",", ":")), now, QUEUE_CAP, QUEUE_TTL_MS],
        )
        if not added:
            raise ProtocolError("busy", "the quick-match queue is full; try again soon")
        self.waiting[tid] = Waiting(queue, owner, tell, rated, limit_key, token)
        self.by_owner[id(owner)] = tid
        self._wake.set()
        return {"game": game, "rated": rated, "rating": rating}

    async def cancel(self, owner: Any) -> bool:
        """Take `owner`'s ticket out of the queue: True when it was still waiting; False when
        it had none, or its match is being made (its `matched` comes)."""
        tid = self.by_owner.pop(id(owner), None)
        if tid is None:
            return False
        w = self.waiting.get(tid)
        if w is None:
            return False
        gone = await self._scripts["cancel"](keys=self._qkeys(w.queue), args=[tid])
        if gone:
            self.waiting.pop(tid, None)
            return True
        # claimed by the matcher: its result is on the way; nobody is there to read it now
        # unless the owner is still connected, which `tell` checks
        return False

    async def dropped(self, owner: Any) -> None:
        """The connection is gone: its ticket too (a match already made leaves an empty seat,
        which the race's grace period resigns)."""
        tid = self.by_owner.get(id(owner))
        if tid is not None:
            with contextlib.suppress(Exception):
                await self.cancel(owner)
            self.waiting.pop(tid, None)

    # --- the loop --------------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="quick-match")

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        self._stopped = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=5.0)
            self._task = None
        if self.leader:
            with contextlib.suppress(Exception):
                if await self.redis.get(keys.quick_lease(self.prefix)) in (
                    self.proc_id,
                    self.proc_id.encode(),
                ):
                    await self.redis.delete(keys.quick_lease(self.prefix))

    async def _run(self) -> None:
        next_tick = next_vouch = next_lease = next_poll = 0.0
        while not self._stopped:
            now = time.monotonic()
            woken = self._wake.is_set()
            self._wake.clear()
            try:
                if self.waiting or now >= next_poll:
                    next_poll = now + IDLE_POLL_S
                    await self._read_inbox()
                if self.waiting and now >= next_vouch:
                    next_vouch = now + VOUCH_S
                    await self._vouch()
                if now >= next_lease:
                    await self._hold_lease()
                    next_lease = now + (LEASE_RENEW_S if self.leader else 0.5)
                if self.leader and (now >= next_tick or woken):
                    await self.tick()
                    next_tick = now + (IDLE_POLL_S if self.idle else TICK_S)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("quick match: a round failed", exc_info=True)
                await asyncio.sleep(0.5)
            due = [next_poll, next_lease] + [next_tick] * self.leader
            due += [now + POLL_S] * bool(self.waiting)  # the inbox, while tickets wait here
            # asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow a cancel that
            # comes as the wait ends, and this loop would then outlive `close`
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, min(due) - time.monotonic())):
                    await self._wake.wait()

    async def _hold_lease(self) -> None:
        held = bool(
            await self._scripts["lease"](
                keys=[keys.quick_lease(self.prefix)], args=[self.proc_id, LEASE_MS]
            )
        )
        if self.leader and not held:
            self.pairings.clear()  # another process matches now: its own groups
        self.leader = held

    async def _vouch(self) -> None:
        by_queue: dict[str, list[str]] = {}
        for tid, w in self.waiting.items():
            by_queue.setdefault(w.queue, []).append(tid)
        now = self.service.clock()
        mono = time.monotonic()
        for queue, tids in by_queue.items():
            gone = await self._scripts["vouch"](
                keys=self._qkeys(queue), args=[now, QUEUE_TTL_MS, *tids]
            )
            for raw in gone or ():
                tid = raw.decode() if isinstance(raw, bytes) else str(raw)
                lost = self.waiting.get(tid)
                if lost is None:
                    continue
                if lost.claimed is None:
                    lost.claimed = mono
                elif mono - lost.claimed > LOST_S:
                    # the process making its room died after the claim: ask again
                    self.waiting.pop(tid, None)
                    if self.by_owner.get(id(lost.owner)) == tid:
                        self.by_owner.pop(id(lost.owner), None)
                    lost.tell(m.error("busy", "the match found no room in time; ask again"))

    async def _read_inbox(self) -> None:
        box = keys.quick_inbox(self.prefix, self.proc_id)
        items = await self.redis.lpop(box, 1000)
        for raw in items or ():
            result = json.loads(cast(str | bytes, raw))
            if "make" in result:  # the matcher chose this process to make a group's room
                self._spawn(self._make_and_tell(result["make"]))
                continue
            w = self.waiting.pop(result.pop("ticket"), None)
            if w is None:
                continue
            if self.by_owner.get(id(w.owner)) is not None:
                self.by_owner.pop(id(w.owner), None)
            if "error" in result:
                w.tell(m.error("busy", result["error"]))
                continue
            if self.matched_hook is not None:
                self.matched_hook(w)
            # the room was made here (its code routes here): resume on this very connection
            here = result.pop("maker", None) == self.proc_id
            w.tell({"type": "matched", **result, "token": w.token, "here": here})

    # --- the matcher ---------------------------------------------------------------------------

    async def tick(self) -> int:
        """One look at every queue: drop stale tickets, pair, make the sealed groups' rooms.
        Returns the players seated."""
        self.rounds += 1
        queues = [queue_name(g, r) for g in self.games for r in (True, False)]
        extra = await self.extra_queues() if self.extra_queues is not None else {}
        queues += list(extra)
        pipe = self.redis.pipeline(transaction=False)
        for q in queues:
            pipe.zcard(self._qkeys(q)[1])
        sizes = await pipe.execute()
        self.idle = not any(sizes)
        now = self.service.clock()
        seated = 0
        for q, size in zip(queues, sizes, strict=True):
            if not size:
                self.pairings.pop(q, None)
                continue
            await self._scripts["sweep"](keys=self._qkeys(q), args=[now - STALE_MS])
            raw = await self.redis.hgetall(self._qkeys(q)[0])
            tickets: dict[str, dict[str, Any]] = {}
            for v in raw.values():
                t = json.loads(v)
                tickets[t["id"]] = t
            pairing = self.pairings.get(q)
            if pairing is None and q in extra:
                pairing = self.pairings[q] = extra[q]
            elif pairing is None:
                rules = self.config.rules
                if self.service.seats_per_address and not rules.per_address:
                    rules = Rules(
                        **{**rules.__dict__, "per_address": self.service.seats_per_address}
                    )
                pairing = self.pairings[q] = Pairing(rules)
            sealed = pairing.step(
                [
                    # an arena's bots are members as any other, never fill-ins
                    Ticket(
                        t["id"],
                        float(t["rating"]),
                        t["at"] / 1000.0,
                        t["addr"],
                        bool(t["bot"]) and q not in extra,
                    )
                    for t in tickets.values()
                ],
                now / 1000.0,
            )
            if sealed:
                made = await asyncio.gather(
                    *(self._seal(q, g, [tickets[i] for i in g.ids()]) for g in sealed)
                )
                seated += sum(made)
        return seated

    async def _seal(self, queue: str, group: Group, members: list[dict[str, Any]]) -> int:
        """Claim the group's tickets (all or none), then have its room made by the process
        holding most of its members (the earliest asker's on a tie): rooms spread over the
        processes as their players do, each made with a code its maker owns."""
        async with self._making:
            missing = await self._scripts["claim"](keys=self._qkeys(queue), args=group.ids())
            if missing:
                return 0  # a member left: the rest wait on, paired again at the next tick
            count = Counter(t["proc"] for t in members)
            maker = max(members, key=lambda t: count[t["proc"]])["proc"]
            if maker == self.proc_id:
                await self._make_and_tell(members)
            else:
                await self._deliver(maker, [{"make": members}])
            return len(members)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, proc: str, items: list[dict[str, Any]]) -> None:
        await self._scripts["deliver"](
            keys=[keys.quick_inbox(self.prefix, proc)],
            args=[INBOX_CAP, INBOX_TTL_MS, *(json.dumps(i, separators=(",", ":")) for i in items)],
        )

    async def _make_and_tell(self, members: list[dict[str, Any]]) -> None:
        """Make the room of a claimed group here, and tell each member's process."""
        try:
            results = await self._make_room(members)
        except Exception as exc:
            log.warning("quick match: a room could not be made", exc_info=True)
            message = exc.message if isinstance(exc, ProtocolError) else "the room failed"
            results = [
                {"ticket": t["id"], "error": f"no race: {message}; ask again"} for t in members
            ]
        by_proc: dict[str, list[dict[str, Any]]] = {}
        for t, r in zip(members, results, strict=True):
            by_proc.setdefault(t["proc"], []).append(r)
        for proc, items in by_proc.items():
            try:
                await self._deliver(proc, items)
            except Exception:
                log.warning("quick match: results not delivered", exc_info=True)
        self._wake.set()  # this process's own members: read them now

    async def _make_room(self, members: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A room (with a code this process owns), every member seated, the race started."""
        svc = self.service
        await svc.load_secret()
        first = members[0]
        arena = first.get("arena")
        options = {
            "game": first["game"],
            "rated": bool(first["rated"]),
            "countdown": self.config.countdown,
            "max_players": max(2, len(members)),
        }
        seed, salt = secrets.randbits(64), secrets.token_bytes(16)

        def rule(room: Room, now: int) -> list[dict[str, Any]]:
            events: list[dict[str, Any]] = []
            for t in members:
                _seat, evs = room.join(
                    t["name"], t["seat"], now, t["player"], addr=t["addr"], bot=t["bot"]
                )
                events += evs
            if arena:
                room.doc["arena"] = arena  # its results are scored (server/race/arena.py)
            return events + room.start(now, seed, salt, secret=svc.secret)

        out = await svc.create("quick", options, False, prepare=rule)
        doc = out["doc"]
        if arena and self.made_hook is not None:
            await self.made_hook(arena, out["room"], members)
        self.arm(out["room"], doc["starts_at"])
        players = [s["name"] for s in doc["seats"]]
        return [
            {
                "ticket": t["id"],
                "game": first["game"],
                "rated": bool(first["rated"]),
                "room": out["room"],
                "seat": seat,
                "starts_at": doc["starts_at"],
                "players": players,
                "maker": self.proc_id,
                **({"arena": arena} if arena else {}),
            }
            for seat, t in enumerate(members)
        ]
