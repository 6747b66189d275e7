"""The room service: joins the sans-I/O rules (room.py) to the store (store.py).

Each command loads the room from Redis (or uses this process's cache), runs the
rule, and writes the result with an optimistic check; on a conflict it reloads
and runs the rule again. Moves use the cached games so the common case costs one
Redis round trip: the Lua append refuses a stale cache, and the service then
reloads the seat's log and validates again.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from solrace.protocol.messages import ProtocolError, encode
from solrace.server.common.codes import (
    CODE_LENGTH,
    PRIVATE_CODE_LENGTH,
    guessable,
    new_code,
    normalize_code,
    shown,
)
from solrace.server.common.metrics import METRICS
from solrace.server.common.redact import SECRETS
from solrace.server.common.retry import Backoff
from solrace.server.common.room_locks import Hold, RoomLocks
from solrace.server.league.deal_stock import DealStock
from solrace.server.league.records import Records, reminder
from solrace.server.race.lobby import LobbyCache, Page
from solrace.server.rules import projection
from solrace.server.rules.projection import Viewer
from solrace.server.rules.room import (
    COUNTDOWN,
    FINISHED,
    LOBBY,
    RACING,
    Entry,
    MovePlan,
    Room,
    SeatRace,
    addr_hash,
    token_hash,
)
from solrace.server.solver.solving import SolverPool, Winnable
from solrace.server.store.redis_conn import transient
from solrace.server.store.secret import server_secret
from solrace.server.store.store import Appended, Conflict, QueuedAppend, Store

log = logging.getLogger("solrace.server")

RETRIES = 8
#: seconds before a room whose end failed to be stored is tried again (doubling up to the cap)
RECHECK_S, RECHECK_CAP_S = 1.0, 30.0
#: how long a move whose append got no answer waits for Redis to say whether it is stored
OUTCOME_WAIT_S = 5.0
OUTCOME_PAUSE_CAP_S = 0.5
BACKOFF_BASE_S = 0.002
BACKOFF_CAP_S = 0.05


#: full jitter between optimistic retries: writers that collided must not collide again in step
CONFLICT_PAUSES = Backoff(BACKOFF_BASE_S, BACKOFF_CAP_S, jitter=True)
#: asking Redis again whether a move is stored
OUTCOME_PAUSES = Backoff(BACKOFF_BASE_S, OUTCOME_PAUSE_CAP_S)


def too_busy(what: str) -> ProtocolError:
    """Retries exhausted under contention: a retryable refusal, not a server failure."""
    return ProtocolError("busy", f"the {what} is too busy; try again")


def now_ms() -> int:
    return int(time.time() * 1000)


def new_token() -> str:
    return secrets.token_urlsafe(32)


def listing(room: Room) -> dict[str, Any] | None:
    """The room's lobby row while it is listed (public and not finished), else None."""
    if room.options.get("public") and room.state != FINISHED:
        return projection.lobby_row(room.doc)
    return None


@dataclass
class Cached:
    room: Room
    ver: int
    #: the room's last event number as this copy knows it (loaded, then what this process's
    #: writes were numbered): the lease holder numbers its next move's event after it
    seq: int
    #: the fence's counter when this copy was loaded (`Loaded.sync`; b"": unknown). While this
    #: process holds the room's lease, a move is stored by the lean append that carries it
    #: (`Store.append_owned`): equal counters say nobody else wrote the room since.
    sync: bytes = b""
    #: whether another process listens to the room (`Loaded.others`): the lease holder's move
    #: is then the lean script that publishes it, else one native command (`append_native`)
    others: bool = True


@dataclass
class _MoveNow:
    """A move handled without a task (`RoomService.move_now`) while its `XADD` is in Redis:
    what its answer needs to ack it, or to go on the ordinary way (`_move_on`)."""

    cached: Cached
    plan: MovePlan
    #: the room publishes boards (a spectator who came since is owed the mover's: `_stored`)
    boards: bool
    #: the move as the client sent it, for `_move` when the append was refused
    text: str
    n: int | None
    undo: bool
    reply: Callable[[dict[str, Any]], None]
    #: the room's lock, held from the move's play to its ack
    hold: Hold
    queued: QueuedAppend


class RoomService:
    def __init__(
        self,
        store: Store,
        clock: Callable[[], int] = now_ms,
        *,
        seats_per_address: int = 0,
        max_race: int = 0,
        keep: Callable[[str], bool] | None = None,
        solver: SolverPool | None = None,
        stock: DealStock | None = None,
        records: Records | None = None,
        finished: Callable[[Room], None] | None = None,
        loaded: Callable[[Room], None] | None = None,
        lobby_ttl: float | None = None,
        owns: Callable[[str], bool] | None = None,
    ) -> None:
        #: which codes this process may give a new room (`--workers`: those routed to it)
        self.owns: Callable[[str], bool] = owns or (lambda code: True)
        self.store = store
        self.clock = clock
        self.cache: dict[str, Cached] = {}
        self.locks = RoomLocks(self._idle)
        #: whether this process serves the room (`app.build`: a local connection is in
        #: it); once nothing runs on a room it does not serve, its cached copy goes
        self.keep: Callable[[str], bool] = keep or (lambda code: True)
        # spectators each room had at its last stored move (the append script reports it):
        # a board is built and encoded only for a watched room. A spectator who arrives in
        # between is caught by the script's own count, and its snapshot has every board.
        self.watched: dict[str, int] = {}
        #: rooms whose move handled without a task (`move_now`) is in Redis: the moves of the
        #: room waiting for it, each called with the lock when its turn comes (None: let go)
        self._chains: dict[str, deque[Callable[[Hold | None], bool]]] = {}
        #: moves waiting on a room's lock itself (`_hold_for_move`), per room
        self._lock_moves: dict[str, int] = {}
        # the solver's pool (winnable deals, hints) and the hook told of every race this
        # process finished (post-race verdicts); both set by app.build
        self.solver: SolverPool | None = solver
        #: winnable deals drawn ahead, in Redis, for rooms of a stocked rule set
        #: (server/league/deal_stock.py; None: every winnable room draws on demand)
        self.stock: DealStock | None = stock
        self.finished: Callable[[Room], None] | None = finished
        #: the race records (set by app.build): a race's record is owed (a reminder in
        #: Redis) before its results are committed, so a process that dies before writing
        #: it loses nothing (`owed_record`)
        self.records: Records | None = records
        #: told of every room loaded from Redis (a finished race's verdicts that a dead
        #: process owed: `RaceVerdicts.owed`); set by app.build
        self.loaded: Callable[[Room], None] | None = loaded
        #: lobby pages, each kept a moment (server/race/lobby.py); app.build sets its ttl
        self.lobby_cache = LobbyCache(self.store.lobby_page)
        if lobby_ttl is not None:
            self.lobby_cache.ttl = lobby_ttl
        #: seats one client address may hold in one room (0: any number; set by app.build)
        self.seats_per_address = seats_per_address
        #: the longest race, seconds (`--max-race`; 0: none): every race ends by then
        self.max_race = max_race
        #: rooms whose unfinished business is to be settled (`recheck`), and those tasks
        self.rechecks: dict[str, asyncio.TimerHandle] = {}
        self.tasks: set[asyncio.Task[Any]] = set()
        #: the deployment's secret (server/store/secret.py): a text seed's deal and the addresses
        #: kept of seats are keyed with it (`load_secret`)
        self.secret: bytes = b""

    async def load_secret(self) -> bytes:
        """The deployment's secret, read (or made) once: the server does it at start-up, a
        service used alone at its first `start`."""
        if not self.secret:
            self.secret = await server_secret(self.store.redis, self.store.prefix)
            SECRETS.add(self.secret)
        return self.secret

    # --- loading ------------------------------------------------------------------------

    def draw_code(self, public: bool = False) -> str:
        """A fresh room code this process owns (with N workers, about N draws): short for a
        public room, long (unguessable) for a private one."""
        while True:
            code = new_code(CODE_LENGTH if public else PRIVATE_CODE_LENGTH)
            if self.owns(code):
                return code

    def lock(self, code: str) -> contextlib.AbstractAsyncContextManager[None]:
        """One operation per room at a time in this process: the cached games are shared state."""
        return self.locks.hold(normalize_code(code))

    async def load(self, code: str) -> Cached:
        async with self.lock(code):
            return await self._load(code)

    def forget(self, code: str) -> None:
        """Drop a room nobody here watches any more: the cache is only a speed-up, Redis has it all.
        An operation still running on it drops it when it ends (`_idle`)."""
        code = normalize_code(code)
        if not self.locks.busy(code):
            self._drop(code)

    def _idle(self, code: str) -> None:
        """The last operation on the room ended: keep its copy only if this process serves it
        (a join to a room served elsewhere, a timer, a verdict must not leave one behind)."""
        if not self.keep(code):
            self._drop(code)

    def _drop(self, code: str) -> None:
        self.cache.pop(code, None)
        self.watched.pop(code, None)

    async def _load(self, code: str, *, recheck: bool = True) -> Cached:
        """The room as Redis has it now; cached seat games are extended, not rebuilt. A room
        found with unfinished business gets it settled (`recheck`), unless the caller is
        about to commit the room anyway."""
        code = normalize_code(code)
        METRICS.room_loads.inc()
        loaded = await self.store.load(code)
        if loaded is None:
            self.cache.pop(code, None)
            raise ProtocolError("no_room", f"no room {code!r}")
        old = self.cache.get(code)
        room = Room(loaded.doc)
        d = room.doc
        if (
            old is not None
            and d["seed"] is not None
            and old.room.doc["round"] == d["round"]
            and old.room.doc["seed"] == d["seed"]
        ):
            room.races = old.room.races
            for s in room.seats():
                if s.get("in_race") and s["seat"] not in room.races:
                    room.races[s["seat"]] = SeatRace(
                        d["options"]["game"], d["seed"], d["options"]["game_options"]
                    )
        else:
            room.build_races()
        for seat, race in room.races.items():
            entries = [Entry.decode(raw) for raw in loaded.logs.get(seat, [])]
            race.load(entries, loaded.revs.get(seat, 0))
        cached = Cached(room, loaded.ver, loaded.seq, loaded.sync, loaded.others)
        self.cache[code] = cached
        if recheck and self.unfinished(room, self.clock()):
            self.recheck(code)  # e.g. a process died between a race's last move and its end
        if recheck and self.loaded is not None:
            self.loaded(room)
        return cached

    async def _cached(self, code: str) -> tuple[Cached, bool]:
        code = normalize_code(code)
        hit = self.cache.get(code)
        if hit is not None:
            return hit, False
        return await self._load(code), True

    async def update(
        self, code: str, rule: Callable[[Room, int], list[dict[str, Any]]]
    ) -> tuple[Room, list[int]]:
        async with self.lock(code):
            return await self._update(code, rule)

    async def _update(
        self, code: str, rule: Callable[[Room, int], list[dict[str, Any]]]
    ) -> tuple[Room, list[int]]:
        """Run a document rule on fresh state and store it; the clock's own events ride along."""
        code = normalize_code(code)
        for attempt in range(RETRIES):
            if attempt > 0:  # the first try is immediate (a conflict is usually a stale cache)
                await CONFLICT_PAUSES.sleep(attempt)
            cached = await self._load(code, recheck=False)
            room = cached.room.clone()
            now = self.clock()
            was_finished = room.state == FINISHED
            events = rule(room, now)
            events += room.tick(now)
            if room.doc == cached.room.doc and not events:
                return cached.room, []
            finishing = room.state == FINISHED and not was_finished
            clear = room.doc["round"] != cached.room.doc["round"]
            if self.records is not None and finishing:
                await self.records.owe(room)
            elif self.records is not None and clear and cached.room.state == FINISHED:
                await self.records.settle(cached.room)  # before its moves are cleared
            revs = {seat: race.rev for seat, race in room.races.items()} if finishing else None
            lengths = {seat: race.moves for seat, race in room.races.items()}
            try:
                ver, numbers = await self.store.commit(
                    code,
                    cached.ver,
                    room.doc,
                    events,
                    seats=len(room.doc["seats"]),
                    finished=room.state == FINISHED,
                    clear_logs=clear,
                    revs=revs,
                    lengths=lengths,
                    trim=finishing,
                )
            except Conflict:
                continue
            if clear:
                room.races = {}
            if room.state != cached.room.state:
                log.info(
                    "room %s (%s): %s -> %s",
                    shown(code),
                    room.options["game"],
                    cached.room.state,
                    room.state,
                )
            # the copy stays as good as the one loaded above: a write by another process
            # since then moved the fence's counter, and the next lean append reloads
            self.cache[code] = Cached(
                room, ver, numbers[-1] if numbers else cached.seq, cached.sync, cached.others
            )
            if finishing and self.finished is not None:
                self.finished(room)
            # never raises: a stored final move must not answer `busy` for a lobby write
            row, was = listing(room), listing(cached.room)
            await self.store.set_lobby(code, ver, row, was=was)
            if row != was:
                self.lobby_cache.clear()
            return room, numbers
        raise too_busy("room")

    # --- lobby commands -----------------------------------------------------------------

    async def create(
        self,
        name: str,
        options: dict[str, Any] | None,
        play: bool,
        player: str | None = None,
        addr: str = "",
        bot: bool = False,
        prepare: Callable[[Room, int], list[dict[str, Any]]] | None = None,
        code: str | None = None,
    ) -> dict[str, Any]:
        """A new room (with the creator's seat when `play`). `prepare` is a rule run on the
        new room before it is first stored (a daily attempt deals and starts it there).
        `code`: the one the client drew (and routed its connection by); else one is drawn."""
        host_token = new_token()
        token = new_token() if play else None
        public = bool((options or {}).get("public"))
        proposed = code
        for _ in range(1 if proposed else 20):
            code = proposed or self.draw_code(public)
            now = self.clock()
            room = Room.new(code, token_hash(host_token), options, now)
            events: list[dict[str, Any]] = []
            seat = None
            if play:
                assert token is not None
                seat, events = room.join(
                    name, token_hash(token), now, player, addr=addr_hash(addr), bot=bot
                )
                room.doc["host_seat"] = seat
            if prepare is not None:
                events += prepare(room, now)
            try:
                ver, numbers = await self.store.commit(
                    code, 0, room.doc, events, seats=len(room.doc["seats"])
                )
            except Conflict:
                if proposed:
                    raise ProtocolError(
                        "code_taken", "a room has that code: draw another"
                    ) from None
                continue  # the code is taken
            self.cache[code] = Cached(room, ver, numbers[-1] if numbers else 0)
            log.info(
                "room %s created (%s, %s)",
                shown(code),
                room.options["game"],
                "public" if room.options.get("public") else "private",
            )
            if prepare is None:
                self.deal_ahead(room)
            if room.options.get("public"):
                await self.store.set_lobby(code, ver, listing(room))
                self.lobby_cache.clear()
            return {
                "room": code,
                "seat": seat,
                "token": token,
                "host_token": host_token,
                "doc": room.doc,
            }
        raise ProtocolError("internal", "could not find a free room code")

    async def join(
        self, code: str, name: str, player: str | None = None, addr: str = "", bot: bool = False
    ) -> dict[str, Any]:
        """A new seat for a client at `addr` (its address: kicks and the per-address limit)."""
        token = new_token()
        seat_box: list[int] = []
        where = addr_hash(addr)

        def rule(room: Room, now: int) -> list[dict[str, Any]]:
            seat, events = room.join(
                name,
                token_hash(token),
                now,
                player,
                addr=where,
                per_address=self.seats_per_address,
                bot=bot,
            )
            seat_box.append(seat)
            return events

        room, _ = await self.update(code, rule)
        return {"room": room.code, "seat": seat_box[-1], "token": token}

    async def authenticate(self, code: str, token: str, addr: str = "") -> int:
        """The seat a token holds, judged on the room's document alone: no lock, no logs, no
        replay; a new address of the seat (`addr`, the client's) is kept (`Room.note_address`). A flood of forged tokens costs one small read each, never a load of the whole
        room under its lock (which every move of the room waits for)."""
        doc = await self.store.doc(normalize_code(code))
        if doc is None:
            raise ProtocolError("no_room", f"no room {normalize_code(code)!r}")
        seat = Room(doc).seat_by_token(token_hash(token))
        if seat is None or seat.get("kicked"):
            raise ProtocolError("bad_token", "that token holds no seat in this room")
        seat_no: int = seat["seat"]
        key = addr_hash(addr)
        if key and key not in seat.get("addrs", ()):
            await self.update(code, lambda r, now: r.note_address(seat_no, key))
        return seat_no

    def watching_own_race(self, code: str, addr: str | None) -> bool:
        """`Room.watching_own_race` on this process's copy (no I/O). No copy here: assume so."""
        cached = self.cache.get(normalize_code(code))
        return cached is None or cached.room.watching_own_race(addr)

    def racing_addresses(self, code: str) -> frozenset[str] | None:
        """`Room.racing_addresses` on this process's copy, for a board about to go out to the
        room's spectators (no I/O: a board is sent in the loop's turn); None: no copy here, so
        every spectator is taken for a racer."""
        cached = self.cache.get(normalize_code(code))
        return None if cached is None else cached.room.racing_addresses()

    async def check_spectate(self, code: str) -> Room:
        cached = await self.load(code)
        if not cached.room.options["spectators"]:
            raise ProtocolError("not_allowed", "this room does not allow spectators")
        return cached.room

    async def host_update(
        self, code: str, host_token: str, rule: Callable[[Room, int], list[dict[str, Any]]]
    ) -> Room:
        def guarded(room: Room, now: int) -> list[dict[str, Any]]:
            if not room.is_host(token_hash(host_token)):
                raise ProtocolError("not_host", "only the host may do that")
            return rule(room, now)

        room, _ = await self.update(code, guarded)
        return room

    async def configure(self, code: str, host_token: str, options: dict[str, Any]) -> Room:
        if options.get("public") is False and guessable(normalize_code(code)):
            raise ProtocolError(
                "bad_options",
                "a room created public has a short code anyone can guess: it cannot become "
                "private (create a private room: its link cannot be guessed)",
                field="public",
            )
        room = await self.host_update(code, host_token, lambda r, now: r.configure(options, now))
        self.deal_ahead(room)
        return room

    def deal_ahead(self, room: Room) -> None:
        """A winnable room will want a deal: see `ahead`."""
        if room.options.get("deal") == "winnable":
            self.ahead(room.options)

    def ahead(self, room_options: dict[str, Any]) -> None:
        """A winnable room of these options will want a deal: its stock is refilled, and
        when it has none (or its rules are not stocked) the solver starts on one now, not
        at `start` (a room set up, a race finished: its rematch)."""
        if self.solver is None:
            return
        if self.stock is not None and self.stock.stocked(room_options):
            self.stock.ahead(room_options, self.solver.prefetch)
        else:
            self.solver.prefetch(room_options)

    async def start(
        self, code: str, host_token: str, check: Callable[[int], None] | None = None
    ) -> Room:
        """The host starts the race. `check(seats)` runs on a rated room before it starts
        and may refuse (the host's address's budget of rated seats: server/net/guard.py)."""
        await self.load_secret()
        seed = secrets.randbits(64)
        salt = secrets.token_bytes(16)
        deal = await self._winnable(code, host_token)

        def rule(r: Room, now: int) -> list[dict[str, Any]]:
            if check is not None and r.options.get("rated") and r.state == LOBBY:
                check(len(r.seats()))
            if deal is None:
                return r.start(now, seed, salt, secret=self.secret, max_race=self.max_race)
            deal.check(r.options)  # the host changed the game while the solver dealt: busy
            return r.start(
                now, deal.seed, salt, deal.solution, secret=self.secret, max_race=self.max_race
            )

        return await self.host_update(code, host_token, rule)

    async def _winnable(self, code: str, host_token: str) -> Winnable | None:
        """A winnable room's seed, drawn by the solver off the event loop (None: any deal).
        The cheap refusals come first: nobody but the host may set the solver to work."""
        room = (await self.load(code)).room
        if room.options.get("deal") != "winnable" or self.solver is None:
            return None
        if not room.is_host(token_hash(host_token)):
            raise ProtocolError("not_host", "only the host may do that")
        # bad_state / bad_options before any solving
        room.clone().start(self.clock(), 0, b"", secret=self.secret)
        stocked = await self.stock.take(room.options) if self.stock is not None else None
        return stocked or await self.solver.winnable(room.options)

    async def kick(self, code: str, host_token: str, seat: int) -> Room:
        return await self.host_update(code, host_token, lambda r, now: r.kick(seat, now))

    async def rematch(self, code: str, host_token: str) -> Room:
        return await self.host_update(code, host_token, lambda r, now: r.rematch(now))

    async def end_series(self, code: str, host_token: str) -> Room:
        """The host ends the series under way; its record is written (server/records.py)."""
        room = await self.host_update(code, host_token, lambda r, now: r.end_series(now))
        if self.records is not None:
            self.records.series_ended(room)
        return room

    async def leave(self, code: str, seat: int) -> Room:
        room, _ = await self.update(code, lambda r, now: r.leave(seat, now))
        return room

    async def ready(self, code: str, seat: int, ready: bool) -> Room:
        room, _ = await self.update(code, lambda r, now: r.set_ready(seat, ready, now))
        return room

    async def resign(self, code: str, seat: int, status: str = "resigned") -> Room:
        room, _ = await self.update(code, lambda r, now: r.resign(seat, now, status))
        return room

    async def tick(self, code: str) -> Room:
        room, _ = await self.update(code, lambda r, now: [])
        return room

    # --- moves --------------------------------------------------------------------------

    def _clock_due(self, room: Room, now: int) -> bool:
        d = room.doc
        if room.state == COUNTDOWN and now >= d["starts_at"]:
            return True
        return room.state == RACING and d["ends_at"] is not None and now >= d["ends_at"]

    async def move(
        self,
        code: str,
        seat: int,
        text: str,
        n: int | None,
        *,
        undo: bool = False,
        reply: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Play (or undo) a move and return its ack.

        `reply` is called with the ack as soon as the move is stored, before anything else
        this process does for it (its fan-out runs at the end of the loop's turn, the end of
        the race after the reply): the transport writes the ack there, so the mover's answer
        never waits on the room's other connections or on finishing the race.
        """
        code = normalize_code(code)
        hold = await self._hold_for_move(code)
        # the room's moves handled without a task meanwhile (`move_now`) wait for this one
        self._chains.setdefault(code, deque())
        try:
            ack = await self._move(code, seat, text, n, undo, reply)
        except BaseException:
            self._let_chain_go(code)
            hold.release()
            raise
        self._next_now(code, hold)
        return ack

    async def _move(
        self,
        code: str,
        seat: int,
        text: str,
        n: int | None,
        undo: bool,
        reply: Callable[[dict[str, Any]], None] | None,
    ) -> dict[str, Any]:
        """Validate with the engine, store with the atomic append, and only then build the ack."""
        cached, fresh = await self._cached(code)
        if not cached.sync and not fresh and self.store.fences.get(code):
            # a copy this process made without a load (a room it created): the lease holder
            # loads it once, for the fence's counter its lean appends carry
            cached, fresh = await self._load(code), True
        for attempt in range(RETRIES):
            if attempt > 1:
                await CONFLICT_PAUSES.sleep(
                    attempt - 1
                )  # the first retry follows a reload that was just needed
            room = cached.room
            now = self.clock()
            if self._clock_due(room, now):
                await self._update(code, lambda r, now: [])
                cached, fresh = self.cache[code], True
                room = cached.room
            # no await while an exception is handled (docs/ARCHITECTURE.md, "Compiled
            # modules"): the reloads below come after their `try`s
            judged: MovePlan | None = None
            try:
                judged = room.undo(seat, n, now) if undo else room.play(seat, text, n, now)
            except ProtocolError:
                if fresh:
                    raise
            if judged is None:
                cached, fresh = await self._load(code), True  # our cache may be behind: judge again
                continue
            plan = judged
            boards = room.options["spectator_view"] == "boards" and room.options["spectators"]
            board = self._board(room, seat) if boards and self.watched.get(code, 0) > 0 else b""
            conflict = False
            try:
                stored, recovered = await self._store(code, cached, plan, board, room)
            except Conflict:
                room.rollback(plan)
                conflict = True
            except BaseException:
                # not stored: the next command reloads from Redis
                room.rollback(plan)
                self.cache.pop(code, None)
                raise
            if conflict:
                cached, fresh = await self._load(code), True
                continue
            if recovered:
                board = b""  # whether its board went out is unknown here: published below
            ack, late, settle = self._stored(code, cached, plan, stored, bool(boards and not board))
            if reply is not None:
                reply(ack)
            if late:
                await self._late_board(room, seat, answered=reply is not None)
            if settle:
                await self._settle(code, answered=reply is not None)
            return ack
        raise too_busy("seat")

    def _stored(
        self, code: str, cached: Cached, plan: MovePlan, stored: Appended, boardless: bool
    ) -> tuple[dict[str, Any], bool, bool]:
        """A stored move's effects on this copy, and its ack; whether its board must still be
        published (a spectator came since the room's last move: `boardless` said the append
        carried none) and whether the seat's race is over (the room to settle)."""
        room, seat = cached.room, plan.seat
        self.watched[code] = stored.spectators
        room.races[seat].rev = stored.rev
        cached.seq = max(cached.seq, stored.n)  # the next lean append's event follows it
        ack = self._ack(room, seat, plan, stored)
        return ack, boardless and stored.spectators > 0, ack["status"] != "racing"

    def move_now(
        self,
        code: str,
        seat: int,
        text: str,
        n: int | None,
        *,
        undo: bool = False,
        reply: Callable[[dict[str, Any]], None],
        finished: Callable[[Coroutine[Any, Any, Any] | None], None],
    ) -> asyncio.Future[Any] | None:
        """`move` without a task or a coroutine, called from the connection's `data_received`
        (server/net/transport.py) for the lease holder's plain case (its copy loaded under
        the fence's counter, no other process listening, the clock not due, no spectator's
        board to carry): the room's lock is taken at once, the room's rules play the move,
        and its `XADD` is queued (`Store.queue_native`). When Redis answers, the reply's
        callback writes the ack (`reply`) and calls `finished(None)`; anything else there is
        to do (an error to tell apart and answer, a retry on a fresh copy, the outcome of a
        lost answer, a late board, the race to settle) is handed to `finished` as a
        coroutine that does it, exactly as `move` would, and lets the lock go.

        A move of a room whose previous move handled this way is still in Redis waits in
        the room's queue (`_chains`), not on the lock: the lock passes from one to the next
        in the callback, with no task and no wake-up. Whatever else asks for the lock meanwhile
        (a timer, a join) goes next: the moves that come after it go the ordinary way.

        Returns the future that is done when `finished` is called; None: nothing was done
        (the room is busy or not in the plain case, or the rules refused the move: `move`
        judges it again, on a fresh copy if need be)."""
        code = normalize_code(code)
        chain = self._chains.get(code)
        if chain is not None:
            if not self._only_moves_wait(code):
                return None  # something else waits for the lock: the move goes behind it
            done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

            def later(hold: Hold | None) -> bool:
                def told(tail: Coroutine[Any, Any, Any] | None) -> None:
                    done.set_result(None)
                    finished(tail)

                if hold is not None:
                    try:
                        if self._play_now(code, seat, text, n, undo, reply, told, hold, lone=False):
                            return True
                    except Exception as exc:  # a bug: answered as `move` would have
                        told(_raise(exc))
                        return False
                # not the plain case any more (or the queue is let go): the ordinary way
                told(self.move(code, seat, text, n, undo=undo, reply=reply))
                return False

            chain.append(later)
            return done
        if self.locks.busy(code):
            return None
        hold = self.locks.hold_now(code)
        if hold is None:  # pragma: no cover - not busy above
            return None
        self._chains[code] = deque()
        try:
            future = self._play_now(code, seat, text, n, undo, reply, finished, hold, lone=True)
        except BaseException:
            self._chains.pop(code, None)
            hold.release()
            raise
        if future is None:
            self._chains.pop(code, None)
            hold.release()
        return future

    def _play_now(
        self,
        code: str,
        seat: int,
        text: str,
        n: int | None,
        undo: bool,
        reply: Callable[[dict[str, Any]], None],
        finished: Callable[[Coroutine[Any, Any, Any] | None], None],
        hold: Hold,
        *,
        lone: bool,
    ) -> asyncio.Future[Any] | None:
        """`move_now`'s move under the held lock: played and its `XADD` queued (the reply's
        future), or None when it is not the plain case or the rules refuse it (nothing
        changed). A `lone` move (not one that waited in its room's queue for the move before
        it) may wait a moment for other moves' company in Redis (`Batcher.spacing`); one that
        waited goes at the end of the turn: the room's moves pass from answer to answer."""
        cached = self.cache.get(code)
        if cached is None or not cached.sync or cached.others or not self.store.fences.get(code):
            return None
        room = cached.room
        now = self.clock()
        if self._clock_due(room, now):
            return None
        options = room.options
        boards = bool(options["spectator_view"] == "boards" and options["spectators"])
        if boards and self.watched.get(code, 0) > 0:
            return None  # the append carries the mover's board: `move`'s path
        try:
            plan = room.undo(seat, n, now) if undo else room.play(seat, text, n, now)
        except Exception:  # refused (or a bug): `move` judges it, on a fresh copy if need be
            return None
        entry = plan.entry.encode()

        def answered(_: asyncio.Future[Any]) -> None:
            # called by the turn that settles the XADD (`Batcher.queue`'s `on_reply`), never
            # before `move` below is set: the turn goes out after this one at the earliest
            tail: Coroutine[Any, Any, Any] | None
            try:
                tail = self._answered_now(move)
            except BaseException as exc:  # a bug: `move` would have raised it
                self._let_chain_go(code)
                hold.release()
                tail = _raise(exc)
            if tail is not None:
                self._let_chain_go(code)  # the tail holds the lock until it is done
                finished(tail)
                return
            finished(None)
            self._next_now(code, hold)

        try:
            queued = self.store.queue_native(
                code, cached.sync, seat, entry, plan.event, pop=plan.undone, last=cached.seq,
                rev=plan.expected_rev, length=plan.expected_len, spaced=lone, on_reply=answered,
            )  # fmt: skip
        except BaseException:
            room.rollback(plan)
            raise
        move = _MoveNow(cached, plan, boards, text, n, undo, reply, hold, queued)
        return queued.future

    async def _hold_for_move(self, code: str) -> Hold:
        """The room's lock for a move: in the room's queue of moves when one is being stored
        and nothing else waits for the lock (`_chains`: the lock passes from move to move),
        else from the lock itself."""
        chain = self._chains.get(code)
        if chain is not None and self._only_moves_wait(code):
            turn: asyncio.Future[Hold | None] = asyncio.get_running_loop().create_future()

            def given(hold: Hold | None) -> bool:
                if turn.done():  # the waiting move was cancelled: the next one
                    return False
                turn.set_result(hold)
                return hold is not None

            chain.append(given)
            try:
                got = await turn
            except asyncio.CancelledError:
                given_hold = turn.result() if turn.done() and not turn.cancelled() else None
                if given_hold is not None:
                    self._next_now(code, given_hold)  # given just before the cancel
                raise
            if got is not None:
                return got
        hold = self.locks.hold(code)
        self._lock_moves[code] = self._lock_moves.get(code, 0) + 1
        try:
            await hold.__aenter__()
        finally:
            left = self._lock_moves[code] - 1
            if left:
                self._lock_moves[code] = left
            else:
                del self._lock_moves[code]
        return hold

    def _only_moves_wait(self, code: str) -> bool:
        """Whether every operation that holds or waits for the room's lock is a move: the
        holder and the moves waiting on the lock itself (`_lock_moves`). Then a new move
        may wait in the room's queue (`_chains`), which the lock passes along before it is
        let go; anything else waiting for the lock stops the queue from growing, so it waits
        for the moves queued before it only."""
        return self.locks.users(code) - self._lock_moves.get(code, 0) <= 1

    def _next_now(self, code: str, hold: Hold) -> None:
        """The room's next queued move gets the lock (`move_now`), else the lock is let go."""
        chain = self._chains.get(code)
        while chain:
            if chain.popleft()(hold):
                return
        self._chains.pop(code, None)
        hold.release()

    def _let_chain_go(self, code: str) -> None:
        """The room's queued moves go the ordinary way (`move`, behind the lock)."""
        chain = self._chains.pop(code, None)
        while chain:
            chain.popleft()(None)

    def _answered_now(self, move: _MoveNow) -> Coroutine[Any, Any, Any] | None:
        """`move_now`'s answer from Redis: the ack written (None: the lock is still held, for
        the caller to pass on), or the coroutine that does the rest and lets the lock go."""
        stored = self.store.native_stored(move.queued)
        if stored is None:
            return self._move_on(move)
        plan = move.plan
        ack, late, settle = self._stored(move.queued.code, move.cached, plan, stored, move.boards)
        move.reply(ack)
        if not late and not settle:
            return None
        return self._after_ack(move.cached.room, plan.seat, late, settle, move.hold)

    async def _after_ack(self, room: Room, seat: int, late: bool, settle: bool, hold: Hold) -> None:
        """`move`'s steps after the ack, for `move_now`, under the room's lock."""
        try:
            if late:
                await self._late_board(room, seat, answered=True)
            if settle:
                await self._settle(room.code, answered=True)
        finally:
            hold.release()

    async def _move_on(self, move: _MoveNow) -> dict[str, Any]:
        """`move_now`'s append was not answered with a stored entry: `move` from its store's
        answer on (the error told apart, a lost answer's outcome asked; a refused append
        reloads the room and plays the move again), under the room's lock."""
        code, cached, plan = move.queued.code, move.cached, move.plan
        room, seat = cached.room, plan.seat
        try:
            conflict = False
            try:
                stored, _ = await self._store(code, cached, plan, b"", room, move.queued)
            except Conflict:
                room.rollback(plan)
                self.cache.pop(code, None)  # `_move` loads it again, as after a conflict
                conflict = True
            except BaseException:
                # not stored: the next command reloads from Redis
                room.rollback(plan)
                self.cache.pop(code, None)
                raise
            if conflict:  # played again after the `try`: no await while handling (`_move`)
                return await self._move(code, seat, move.text, move.n, move.undo, move.reply)
            ack, late, settle = self._stored(code, cached, plan, stored, move.boards)
            move.reply(ack)
            if late:
                await self._late_board(room, seat, answered=True)
            if settle:
                await self._settle(code, answered=True)
            return ack
        finally:
            move.hold.release()

    async def _store(
        self,
        code: str,
        cached: Cached,
        plan: MovePlan,
        board: bytes,
        room: Room,
        queued: QueuedAppend | None = None,
    ) -> tuple[Appended, bool]:
        """Store the plan: (what the append left, whether Redis's answer to it was lost).

        The lease holder (this process writes the room with an epoch) whose copy was loaded
        under the fence's current counter is the room's one writer: its move is one lean
        fenced append (`Store.append_owned`). Without the lease, or with a copy of unknown
        standing, the append checks the version, the log's length and its revision.

        A timeout or a dropped connection leaves the append's fate open: it may have run. Then
        Redis is asked (`Store.outcome`) until it answers, which also makes sure that a lost
        append that has not run never will: a stored move is acked, never answered `busy`.
        Only when Redis answers nothing for OUTCOME_WAIT_S does the error stand (`busy`; the
        same move sent again with its `n` is then `out_of_sync` if it was stored after all)."""
        entry = plan.entry.encode()
        delay = room.options["spectator_delay"]
        lost: Exception | None = None
        try:
            if queued is not None:  # `move_now`'s XADD, queued already
                stored = await self.store.native_outcome(queued, board, delay=delay)
            elif cached.sync and self.store.fences.get(code) and not cached.others:
                stored = await self.store.append_native(
                    code, cached.sync, plan.seat, entry, plan.event, board, delay=delay,
                    pop=plan.undone, last=cached.seq, rev=plan.expected_rev,
                    length=plan.expected_len,
                )  # fmt: skip
            elif cached.sync and self.store.fences.get(code):
                stored = await self.store.append_owned(
                    code, cached.sync, plan.seat, entry, plan.event, board, delay=delay,
                    pop=plan.undone, last=cached.seq, rev=plan.expected_rev,
                )  # fmt: skip
            else:
                stored = await self.store.append(
                    code,
                    cached.ver,
                    plan.seat,
                    plan.expected_len,
                    plan.expected_rev,
                    entry,
                    plan.event,
                    board,
                    delay=delay,
                    pop=plan.undone,
                )
        except Exception as exc:
            if not transient(exc):
                raise
            lost = exc  # asked about below: no await while an exception is handled (`_move`)
        if lost is None:
            return stored, False
        log.warning(
            "room %s: a move's append got no answer; asking whether it is stored", shown(code)
        )
        found = await self._outcome(code, plan, entry)
        if found is None:
            raise lost
        return found, True

    async def _outcome(self, code: str, plan: MovePlan, entry: str) -> Appended | None:
        """`Store.outcome`, asked again while Redis does not answer (up to OUTCOME_WAIT_S)."""
        give_up = time.monotonic() + OUTCOME_WAIT_S
        for attempt in itertools.count(1):
            try:
                return await self.store.outcome(
                    code,
                    plan.seat,
                    plan.expected_len,
                    plan.expected_rev,
                    entry,
                    plan.event,
                    pop=plan.undone,
                )
            except Exception as exc:
                if not transient(exc) or time.monotonic() >= give_up:
                    log.warning("room %s: Redis never said whether a move is stored", shown(code))
                    raise
            await OUTCOME_PAUSES.sleep(attempt)  # after the handler: no await while handling
        raise AssertionError("unreachable")

    async def _late_board(self, room: Room, seat: int, *, answered: bool) -> None:
        """A spectator came since the room's last move: the append carried no board."""
        try:
            board = self._board(room, seat)
            await self.store.publish_board(room.code, board, room.options["spectator_delay"])
        except Exception:
            if not answered:
                raise
            log.warning("board of %s seat %d not published", shown(room.code), seat, exc_info=True)

    @staticmethod
    def _ack(room: Room, seat: int, plan: MovePlan, stored: Appended) -> dict[str, Any]:
        """The mover's answer: what the move did to its board (`change`; the whole `view` when
        this process did not build the board before it), and its own progress event folded in
        (`event` is that event's room number), so the mover needs no separate frame for it."""
        event = plan.event
        race = room.races[seat]
        change = race.change()
        ack: dict[str, Any] = {
            "type": "ack",
            "n": stored.length,
            "status": event["status"],  # the seat's status after the move (`progress_event`)
            "event": stored.n,
            "at": event["at"],
            "home": event["home"],
            "progress": event["progress"],
            "time": event["time"],
        }
        if change is None:
            ack["view"] = race.view()
        else:
            ack["change"] = change
        if plan.undone:
            ack["undone"] = plan.entry.move
        else:
            ack["move"] = plan.entry.move
            ack["revealed"] = list(plan.revealed)
        return ack

    async def _settle(self, code: str, *, answered: bool) -> None:
        """A seat is done (won, dead): the race may be over. Once the mover has its ack, a
        failure here is not its error: the room's clock deadline in Redis tries again."""
        try:
            await self._update(code, lambda r, now: [])
            return
        except Exception:
            if not answered:
                raise
            log.warning(
                "could not settle %s after a seat ended; retrying later", shown(code), exc_info=True
            )
            self.recheck(code, RECHECK_S)
        with contextlib.suppress(Exception):  # after the handler: no await while handling
            await self.store.add_deadline(f"tick|{code}", self.clock() + 1000)

    def unfinished(self, room: Room, now: int) -> bool:
        """The room owes a commit that no command is going to make: every racer is done but
        the race has no results, or its clock is due."""
        return (room.state == RACING and not room.racing_seats()) or self._clock_due(room, now)

    def recheck(self, code: str, delay: float = 0.0) -> None:
        """Finish the room's unfinished business in the background, `delay` seconds from now,
        and again (less and less often) until it is done: a race whose end failed to be
        stored must not stay "racing" forever. One pending recheck per room."""
        if code in self.rechecks:
            return
        self.rechecks[code] = asyncio.get_running_loop().call_later(
            delay, lambda: self._spawn(self._recheck(code, delay))
        )

    async def _recheck(self, code: str, delay: float) -> None:
        self.rechecks.pop(code, None)
        try:
            await self.update(code, lambda r, now: [])
        except ProtocolError as exc:
            if exc.code == "no_room":
                return
        except Exception:
            log.warning(
                "room %s: unfinished business not settled; retrying", shown(code), exc_info=True
            )
        else:
            return
        self.recheck(code, min(RECHECK_CAP_S, max(RECHECK_S, delay * 2)))

    async def owed_record(self, code: str, round_: int) -> None:
        """A race's record reminder fired (server/league/records.py `owe`): the process that
        finished the race died before writing the record, or could not write it. Write it
        from the room, if the room is still at that finished round; if that fails, remind
        again later."""
        if self.records is None:
            return
        try:
            async with self.lock(code):
                room = (await self._load(code)).room
                if room.doc["round"] == round_ and room.state == FINISHED:
                    await self.records.write_now(room)
                    log.info("room %s: an owed record was written", shown(code))
            return
        except ProtocolError:
            return  # the room is gone, and its moves with it
        except Exception:
            log.warning("room %s: an owed record not written; later", shown(code), exc_info=True)
        with contextlib.suppress(Exception):  # after the handler: no await while handling
            await self.store.add_deadline(
                reminder(code, round_), self.clock() + int(RECHECK_CAP_S * 1000)
            )

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    @staticmethod
    def _board(room: Room, seat: int) -> bytes:
        """A move's board frame, as spectators get it (the store publishes it)."""
        return encode(projection.board_message(room, seat))

    # --- views --------------------------------------------------------------------------

    async def events_after(self, code: str, after: int) -> list[tuple[int, dict[str, Any]]] | None:
        """The room's kept events after `after`, or None when some are no longer kept."""
        return await self.store.events_after(code, after)

    async def snapshot(self, code: str, viewer: Viewer) -> dict[str, Any]:
        async with self.lock(code):
            cached = await self._load(code)
            connected = await self.store.connections(code)
            return projection.snapshot(cached.room, viewer, self.clock(), connected, cached.seq)

    async def snapshots(self, code: str, viewers: list[Viewer]) -> list[dict[str, Any]]:
        """One load, one snapshot per viewer (the start of a race sends every player its board)."""
        async with self.lock(code):
            cached = await self._load(code)
            connected = await self.store.connections(code)
            now = self.clock()
            return [
                projection.snapshot(cached.room, v, now, connected, cached.seq) for v in viewers
            ]

    async def spectator_boards(self, code: str, viewer: Viewer) -> list[dict[str, Any]]:
        """The boards a spectator may see now, from the room as Redis has it."""
        async with self.lock(code):
            cached = await self._load(code)
            return projection.spectator_board_messages(cached.room, self.clock(), viewer.addr)

    async def own_view(self, code: str, seat: int) -> dict[str, Any] | None:
        async with self.lock(code):
            cached = await self._load(code)
            return projection.own_view(cached.room, seat)

    async def lobby(self, after: str = "") -> Page:
        """A page of listed rooms in code order after the cursor `after`, and the next page's
        cursor (None at the end): the store keeps the summary, this process a short cache."""
        return await self.lobby_cache.page(normalize_code(after))

    async def lobby_frame(self, after: str, ref: int | None) -> bytes:
        """The same page as a `lobby` reply frame, its rows encoded once for every asker."""
        return await self.lobby_cache.frame(normalize_code(after), ref)


async def _raise(exc: BaseException) -> None:
    """A failure met outside a coroutine, raised where its caller awaits (`move_now`)."""
    raise exc
