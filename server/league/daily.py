"""Daily races: one deal per game and UTC day, raced alone against everyone who played it.

A daily is `DATE/GAME` (e.g. `2026-11-23/klondike`), always with the game's default rules:
one deal each per game and day keeps the solver's work and Redis's keys bounded by the number
of games, whatever clients ask for (PROTOCOL.md, Daily races).

The deal: the first n = 0, 1, ... whose seed, derived from the secret under the daily key
from the fields DATE, GAME, OPTIONS, n (`candidate_seed`, server/common/derive.py: no room's text
seed can be dealt it), the solver wins within its daily budget (`daily_seed`), so every
process of a deployment finds the same one, and nobody without the server's secret can
compute it. The budget is large (server/solver/solving.py, `Budgets.for_daily`: with the
compiled searches Klondike 10,000,000 positions and Leap Year 30,000,000, past a room's
on-demand draw; the shipped pools' budgets), so the daily is any winnable deal, not one of
those the solver wins soonest. It is drawn once, off the event
loop, and kept in Redis (SET NX: the first process to finish writes it, every process reads
that one) and in this process; Redis keeps it `--daily-days` after its day: the archive
that practice plays. `predraw` draws the next days' deals ahead.

A shipped pool of winnable deals (server/solver/deal_pool.py: seeds decided offline at a
large budget) deals a day instead, as `solrace serve --deal-pool` says: by default (`cold`)
only a daily asked before it was drawn, which a new deployment's first player would
otherwise wait for (34 s for a Klondike daily); with `always`, every day of a rule set with
a pool. A pooled day's deal is `deal_pool.daily_pick` (the secret, the date and the pool:
every process finds the same), stored as a searched one is, with n = -1. A pool is public:
its deals can be recognised from their first cards, so the default keeps it to cold starts.

An attempt is a private solo room (a fresh salt and commitment as any room; no spectators,
so no board of the day's deal reaches anyone) whose race starts at once. Only the *scored*
attempt is dealt today's deal: the player said hello with a key and has no entry on the
daily's board yet; the entry is written at the start (`Boards.submit(keep="first")`:
quitting counts) and replaced with the outcome when the race ends. Practice (anyone, any
time) is dealt a past day's deal: yesterday's, or the archived day the request names
(`date`); practising today's deal first would show the scored attempt's hidden cards. No
hint is given on a deal that one of today's dailies uses (`used_today`).

Keys (prefix P; one hash tag per daily):

    P daily:{DATE/GAME}:deal   str   the day's deal, JSON {seed, solution, n} (the archive)
    P daily:{DATE/GAME}:live   zset  scored attempt's room -> when it is over at the latest (ms)
    P daily:{DATE/GAME}:done   str   scored attempts finished
    P board:{daily:DATE/GAME}  the board (server/league/boards.py)

Everything expires a few days (the board and the deal: `--daily-days`) after its day.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import secrets
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from solrace.protocol import messages as m
from solrace.protocol.messages import ProtocolError
from solrace.protocol.names import clean_name
from solrace.protocol.records import commitment, day_end_ms, record_id
from solrace.server.common.derive import DAILY_CANDIDATE, derive_seed
from solrace.server.common.shared import Shared
from solrace.server.league.boards import Boards
from solrace.server.rules.room import Room, check_game_options
from solrace.server.solver.deal_pool import daily_pick
from solrace.server.solver.solver_jobs import DRAW, STOCK
from solrace.server.solver.solving import WON, SolverPool
from solrace.server.solver.work import draw_solve
from solrace.server.store import keys
from solrace.server.store.redis_conn import Client

log = logging.getLogger("solrace.server")

DAY_MS = 86_400_000
#: days a daily's board is kept after its day (`--daily-days`)
DEFAULT_BOARD_DAYS = 30
#: entries a daily's board keeps at most (the worst go first)
BOARD_CAP = 100_000
#: a daily attempt's time limit (s): every attempt ends, and its live entry with it; a server
#: whose longest race (`--max-race`) is shorter cuts it to that, as it cuts every race's
TIME_LIMIT = 3600
#: the room options of every attempt (the game and its rules are the daily's)
ROOM_OPTIONS: dict[str, Any] = {
    "max_players": 1,
    "time_limit": TIME_LIMIT,
    "undo": "none",
    "spectators": False,
    "public": False,
    "countdown": 0,
    "deal": "winnable",
    "hints": False,
}
#: days after today whose deals `predraw` keeps drawn in Redis (a small pool: a day's first
#: player never waits for the solver, which takes seconds on a Klondike daily)
PREDRAW_DAYS = 2
#: a live entry outlives its race's limit by this much (grace periods, a late end)
LIVE_SLACK_MS = 300_000

# the packed board order (`board_score`): lowest first, exact below 2**53
_TIME_BITS, _MOVE_BITS = 22, 12  # 2**22 ms > 1 h (the time limit); 4095 moves
_PROGRESS_STEPS = 1_000_000
_NOT_WON = 1 << 40


def utc_date(ms: int) -> str:
    """The UTC day (YYYY-MM-DD) of a Unix time in ms."""
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).date().isoformat()


def next_date(date: str) -> str:
    return (datetime.date.fromisoformat(date) + datetime.timedelta(days=1)).isoformat()


def previous_date(date: str) -> str:
    return (datetime.date.fromisoformat(date) - datetime.timedelta(days=1)).isoformat()


def daily_id(date: str, game: str) -> str:
    return f"{date}/{game}"


def board_name(date: str, game: str) -> str:
    return f"daily:{daily_id(date, game)}"


def canonical_options(game_options: dict[str, Any]) -> str:
    return json.dumps(game_options, sort_keys=True, separators=(",", ":"))


def candidate_fields(date: str, game: str, game_options: dict[str, Any], n: int) -> tuple[str, ...]:
    """What names a daily's candidate n: its day, game, rules and number, each its own field."""
    return (date, game, canonical_options(game_options), str(n))


def candidate_seed(
    secret: bytes, date: str, game: str, game_options: dict[str, Any], n: int
) -> int:
    """A candidate's deal seed, under the daily key of the secret (server/common/derive.py): no text
    seed, no other purpose's input, and no other candidate shares it."""
    return derive_seed(secret, DAILY_CANDIDATE, *candidate_fields(date, game, game_options, n))


def default_options(game: str) -> dict[str, Any]:
    """The game's rule options with every default filled in, as a room holds them."""
    opts: dict[str, Any] = {"game": game, "game_options": {}}
    check_game_options(opts)
    return dict(opts["game_options"])


def board_score(row: dict[str, Any]) -> float:
    """One number for the daily's order, lowest first: finishers by time, then moves; then
    everyone else by progress (more first), then by when they reached it (earlier first)."""
    time_ms = row.get("time")
    t = min(time_ms if time_ms is not None else (1 << _TIME_BITS) - 1, (1 << _TIME_BITS) - 1)
    if row.get("status") == "won":
        return float((t << _MOVE_BITS) + min(int(row.get("moves") or 0), (1 << _MOVE_BITS) - 1))
    behind = _PROGRESS_STEPS - round(float(row.get("progress") or 0.0) * _PROGRESS_STEPS)
    return float(_NOT_WON + (behind << _TIME_BITS) + t)


#: a DailyDeal's `n` when the deal came from a shipped pool, not candidate n
POOLED = -1


@dataclass(frozen=True)
class DailyDeal:
    seed: int
    solution: int
    #: the candidate taken (POOLED: a pool's deal)
    n: int


def _parse_deal(kept: str | bytes) -> DailyDeal:
    data = json.loads(kept)
    return DailyDeal(int(data["seed"]), int(data["solution"]), int(data["n"]))


async def daily_seed(
    solver: SolverPool,
    secret: bytes,
    date: str,
    game: str,
    game_options: dict[str, Any],
    kind: str = DRAW,
) -> DailyDeal:
    """The first candidate (n = 0, 1, ...) the solver wins within its daily budget; the
    candidates are tried a batch (one per worker) at a time, and the lowest n won is taken,
    so every process finds the same deal. `kind`: the solver's job kind of the candidates
    (`STOCK` for a deal drawn ahead: in the stock's worker, never a shared one, so a hint or
    a room's draw finds one free; a candidate at the daily budget runs up to ~25 s)."""
    budget = solver.budgets.for_daily(game)
    for first in range(0, solver.budgets.max_draws, solver.workers):
        batch = range(first, first + solver.workers)
        seeds = [candidate_seed(secret, date, game, game_options, n) for n in batch]
        tries = [
            asyncio.ensure_future(
                solver.draw(draw_solve, game, s, dict(game_options), budget, kind=kind)
            )
            for s in seeds
        ]
        try:
            verdicts = await asyncio.gather(*tries)
        finally:
            for t in tries:  # one refused (`busy`): the others leave the solver's queue
                t.cancel()
        for n, seed, (verdict, length) in zip(batch, seeds, verdicts, strict=True):
            if verdict == WON:
                return DailyDeal(seed, length, n)
    raise ProtocolError("busy", f"no winnable {game} daily found; try again")


class Dailies:
    """The dailies of a deployment: their deals, attempts, boards and live figures."""

    def __init__(
        self,
        redis: Client,
        prefix: str,
        boards: Boards,
        *,
        board_days: int = DEFAULT_BOARD_DAYS,
        clock: Callable[[], int] | None = None,
        solver: SolverPool | None = None,
        secret: Callable[[], bytes] | None = None,
        max_race: int = 0,
    ) -> None:
        self.redis, self.prefix, self.boards = redis, prefix, boards
        #: the server's longest race (`--max-race`, s; 0: none): an attempt's hour is cut to it,
        #: as every other race's limit is (Room.start)
        self.max_race = max_race
        self.board_ttl_ms = (board_days + 1) * DAY_MS
        #: past days whose deal may be practised (`date`): as long as their boards are kept
        self.archive_days = max(1, board_days)
        #: now in ms: which day it is (tests move it; the rooms keep the service's clock)
        self.clock: Callable[[], int] = clock or (lambda: int(time.time() * 1000))
        self.solver: SolverPool | None = solver
        #: the deployment's secret (the service loads it): a daily's candidates are keyed with it
        self.secret: Callable[[], bytes] = secret or (lambda: b"")
        self.deals: Shared[DailyDeal] = Shared(ttl=DAY_MS / 1000, size=64)
        #: the ends of attempts being written, and the next days' deals being drawn ahead
        self.tasks: set[asyncio.Task[None]] = set()
        self.drawing: set[asyncio.Task[None]] = set()

    def key(self, date: str, game: str, part: str) -> str:
        return keys.daily(self.prefix, daily_id(date, game), part)

    def today(self) -> str:
        return utc_date(self.clock())

    # --- the deal -----------------------------------------------------------------------

    async def deal(self, date: str, game: str) -> DailyDeal:
        """The daily's deal: this process's copy, else Redis's, else drawn now (and kept).
        The next day's deal of a game played today is drawn ahead, in the background: a
        Klondike daily takes the solver tens of candidates (20-50 s on two busy workers),
        which its day's first player should not wait for."""
        name = daily_id(date, game)
        if name in self.deals.pending and self._pool_pick(date, game, asked=True) is not None:
            # being drawn (the pre-draw) and someone waits: the pool answers now, and the
            # draw, finding the day dealt in Redis, gives that deal too
            found = await self._deal(date, game, asked=True)
        else:
            found = await self.deals.get(name, lambda: self._deal(date, game, asked=True))
        following = next_date(date)
        if date == self.today() and daily_id(following, game) not in self.deals.kept:
            self._spawn(self._ahead(following, game), self.drawing)
        return found

    def predraw(self, games: list[str] | None = None) -> None:
        """Draw the deals of today and the next `PREDRAW_DAYS` days of every game in the
        background, one at a time (today's first, Klondike's, the slowest to draw, first of
        each day), and again as each UTC day begins (`solrace serve --predraw-daily`).

        A deal is drawn at the solver's large daily budget (server/solver/solving.py: any
        winnable deal, not the quickest won), which takes a Klondike daily tens of CPU
        seconds; kept in Redis days ahead, it is ready before anyone asks, even for a process
        that has just started (a restart, a new worker) or a day nobody played before. Its
        candidates are `STOCK` jobs, in the stock's solver worker of its own, so they never
        hold a shared worker: a hint, a room's draw or a race's verdicts do not wait out a
        candidate (up to ~25 s for Leap Year's).
        `games`: these only (tests; default every game)."""
        order = sorted(games or m.GAME_NAMES, key=lambda g: g != "klondike")
        self._spawn(self._predraw_days(order), self.drawing)

    async def _predraw_days(self, games: list[str]) -> None:
        while True:
            date = self.today()
            for _ in range(PREDRAW_DAYS + 1):
                for game in games:
                    await self._ahead(date, game)
                date = next_date(date)
            wait_ms = day_end_ms(self.today()) - self.clock()
            await asyncio.sleep(max(1.0, wait_ms / 1000 + 1))

    async def _ahead(self, date: str, game: str) -> None:
        try:
            await self.deals.get(daily_id(date, game), lambda: self._deal(date, game, asked=False))
        except Exception as exc:  # the server is closing, or Redis is away: drawn when asked
            log.info("daily %s not drawn ahead: %r", daily_id(date, game), exc)

    def _spawn(
        self, coro: Coroutine[Any, Any, None], into: set[asyncio.Task[None]] | None = None
    ) -> None:
        tasks = self.tasks if into is None else into
        task = asyncio.ensure_future(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def _pool_pick(self, date: str, game: str, asked: bool) -> DailyDeal | None:
        """The day's deal from its game's pool, when `--deal-pool` has a pool deal it: every
        day (`always`), or only a day someone is waiting for (`cold`, `asked`)."""
        if self.solver is None or self.solver.pool_mode == "off":
            return None
        if self.solver.pool_mode == "cold" and not asked:
            return None
        pool = self.solver.pool(game, default_options(game))
        if pool is None:
            return None
        pick = daily_pick(pool, self.secret(), date)
        return DailyDeal(pick.seed, pick.length, POOLED)

    async def _deal(self, date: str, game: str, asked: bool) -> DailyDeal:
        """The day's deal from Redis, else dealt now (from a pool or by the solver's search)
        and kept, the first process to keep it winning. `asked`: somebody waits for it
        (not the pre-draw)."""
        key = self.key(date, game, "deal")
        kept = await self.redis.get(key)
        if kept is None:
            found = self._pool_pick(date, game, asked)
            if found is None:
                if self.solver is None:
                    raise ProtocolError("not_allowed", "this server has no solver to deal dailies")
                opts = default_options(game)
                kind = DRAW if asked else STOCK  # nobody waits for a pre-draw
                found = await daily_seed(self.solver, self.secret(), date, game, opts, kind)
            how = "from the pool" if found.n == POOLED else f"candidate {found.n}"
            log.info("daily %s dealt (%s)", daily_id(date, game), how)
            text = json.dumps({"seed": found.seed, "solution": found.solution, "n": found.n})
            expire = day_end_ms(date) + (self.archive_days + 1) * DAY_MS  # the archive
            await self.redis.set(key, text, nx=True, pxat=expire)
            kept = await self.redis.get(key)
        if kept is None:
            raise ProtocolError("busy", "the daily's deal is not stored yet; try again")
        return _parse_deal(kept)

    # --- the archive: past days' deals, for practice ------------------------------------

    def check_past(self, date: str) -> None:
        """A `date` to practise: a day before today, within the archive (`bad_options`)."""
        try:
            day = datetime.date.fromisoformat(date)
        except ValueError:
            day = None
        if day is None or len(date) != 10 or day.isoformat() != date:
            raise ProtocolError("bad_options", "date is a day, YYYY-MM-DD", field="date")
        today = datetime.date.fromisoformat(self.today())
        if day >= today:
            raise ProtocolError(
                "bad_options",
                "only past days' dailies can be practised: today's is scored, and hidden until "
                "the day ends",
                field="date",
            )
        if (today - day).days > self.archive_days:
            raise ProtocolError(
                "bad_options",
                f"dailies are kept {self.archive_days} days; {date} is older",
                field="date",
            )

    def attempt_day(self, practice: bool, date: str | None) -> tuple[str, bool]:
        """(the day whose deal an attempt plays, whether it is practice): a past `date` is
        practice on that day's; practice without one plays yesterday's; else today's, scored."""
        if date is not None:
            self.check_past(date)
            return date, True
        today = self.today()
        return (previous_date(today), True) if practice else (today, False)

    async def attempt_deal(self, date: str, game: str, practice: bool) -> DailyDeal:
        return await (self.past_deal(date, game) if practice else self.deal(date, game))

    async def past_deal(self, date: str, game: str) -> DailyDeal:
        """A past day's deal, as it was dealt that day. Yesterday's is drawn if nobody played
        it (practice without a `date` plays it: one draw per game and day, as today's);
        an older day's must be in the archive: no request makes the solver draw old days."""
        if date == previous_date(self.today()):
            return await self.deal(date, game)
        return await self.deals.get(daily_id(date, game), lambda: self._kept(date, game))

    async def _kept(self, date: str, game: str) -> DailyDeal:
        kept = await self.redis.get(self.key(date, game, "deal"))
        if kept is None:
            raise ProtocolError(
                "bad_options", f"no {game} daily of {date} is kept to practise", field="date"
            )
        return _parse_deal(kept)

    async def used_today(self, seed: int | None) -> bool:
        """Whether `seed` deals one of today's dailies (drawn so far): no hint on such a deal."""
        if seed is None:
            return False
        date = self.today()
        pipe = self.redis.pipeline(transaction=False)
        for game in m.GAME_NAMES:
            pipe.get(self.key(date, game, "deal"))
        kept = [d for d in await pipe.execute() if d is not None]
        seeds = {_parse_deal(d).seed for d in kept}
        seeds |= {deal.seed for key, (_, deal) in self.deals.kept.items() if key.startswith(date)}
        return seed in seeds

    # --- attempts -----------------------------------------------------------------------

    def check_request(self, msg: dict[str, Any]) -> str:
        """The game of a `daily` request; its rules must be the defaults (or left out), its
        name one a seat takes, its `date` a past day of the archive: every refusal comes
        before the attempt is entered."""
        clean_name(msg["name"])
        if msg.get("date") is not None:
            self.check_past(msg["date"])
        game = msg["game"]
        if game not in m.GAME_NAMES:
            raise ProtocolError("bad_options", f"no game {game!r}", field="game")
        asked = msg.get("game_options") or {}
        opts = {"game": game, "game_options": dict(asked)}
        check_game_options(opts)
        if opts["game_options"] != default_options(game):
            raise ProtocolError(
                "bad_options",
                "dailies are dealt with each game's default rules only",
                field="game_options",
            )
        return str(game)

    async def begin(
        self, game: str, name: str, player: str | None, practice: bool, date: str | None = None
    ) -> tuple[Callable[[Room, int], list[dict[str, Any]]], dict[str, Any]]:
        """Everything an attempt needs before its room exists: the deal, whether it is scored
        (then its board entry is written now), and the rule that deals and starts the room.
        Only the scored attempt is dealt today's deal; practice (`practice`, or a past `date`)
        plays a past day's, yesterday's unless `date` names another: practising today's deal
        would show the scored attempt's hidden cards. Returns (the rule, the attempt's `daily`
        description)."""
        today = self.today()
        date, practice = self.attempt_day(practice, date)
        if not practice and player is None:
            raise ProtocolError(
                "not_allowed",
                "a scored daily needs a player key in hello; practice (practice: true) is "
                f"open to all and plays a past day's daily ({previous_date(today)})",
            )
        deal = await self.attempt_deal(date, game, practice)
        salt = secrets.token_bytes(16)
        rid = record_id(commitment(deal.seed, salt))
        scored = False
        if not practice:
            assert player is not None
            scored = await self._enter(date, game, player, name, rid)
        info = {
            "id": daily_id(date, game),
            "date": date,
            "game": game,
            "scored": scored,
            "practice": practice,
            "reveal_at": day_end_ms(date),
        }

        def rule(room: Room, now: int) -> list[dict[str, Any]]:
            room.doc["daily"] = {**info, "player": player}
            events = room.start(now, deal.seed, salt, deal.solution, max_race=self.max_race)
            return events + room.tick(now)

        return rule, info

    async def _enter(self, date: str, game: str, player: str, name: str, rid: str) -> bool:
        """The player's scored attempt goes on the board as it starts (status racing, no
        progress); a player already there is refused: practice is still open."""
        row = {"name": name, "status": "racing", "time": None, "moves": 0, "progress": 0.0}
        row["record"] = rid
        done = await self.boards.submit(
            board_name(date, game),
            player,
            board_score(row),
            row,
            keep="first",
            ttl_ms=self.board_ttl_ms,
            cap=BOARD_CAP,
        )
        if done.placed:
            return True
        past = previous_date(date)
        if await self.boards.entry(board_name(date, game), player) is None:
            raise ProtocolError(
                "not_allowed",
                f"today's board is full; practice (practice: true) plays a past day's daily ({past})",
            )
        raise ProtocolError(
            "daily_played",
            f"you have played today's {game} daily; practice (practice: true) plays a past "
            f"day's daily ({past}, or any `date` of the last {self.archive_days} days) as often "
            "as you like",
        )

    async def started(self, code: str, doc: dict[str, Any]) -> None:
        """A scored attempt's room is racing: it counts as live until it ends (or its limit).
        Practice (a past day's deal) is no figure of today's."""
        d = doc["daily"]
        if not d["scored"]:
            return
        live = self.key(d["date"], d["game"], "live")
        until = (doc["ends_at"] or self.clock()) + LIVE_SLACK_MS
        pipe = self.redis.pipeline(transaction=False)  # one hash tag: one node
        pipe.zremrangebyscore(live, "-inf", f"({self.clock()}")
        pipe.zadd(live, {code: until})
        pipe.pexpireat(live, day_end_ms(d["date"]) + 2 * DAY_MS)
        await pipe.execute()

    def finished(self, room: Room) -> None:
        """The service's hook as a race's results are stored: a daily attempt leaves the live
        set, and a scored one's board entry becomes its outcome (in the background)."""
        daily = room.doc.get("daily")
        if daily and daily["scored"] and room.doc["results"] is not None:
            self._spawn(self._ended(room.code, room.doc))

    async def _ended(self, code: str, doc: dict[str, Any]) -> None:
        d = doc["daily"]
        date, game = d["date"], d["game"]
        try:
            if d["scored"] and d.get("player"):
                mine = doc["results"]["ranking"][0]
                row = {f: mine.get(f) for f in ("name", "status", "time", "moves", "progress")}
                row["record"] = doc["results"]["record"]
                await self.boards.submit(
                    board_name(date, game),
                    d["player"],
                    board_score(row),
                    row,
                    keep="last",
                    ttl_ms=self.board_ttl_ms,
                    cap=BOARD_CAP,
                )
            pipe = self.redis.pipeline(transaction=False)
            pipe.zrem(self.key(date, game, "live"), code)
            if d["scored"]:
                done = self.key(date, game, "done")
                pipe.incr(done)
                pipe.pexpireat(done, day_end_ms(date) + 2 * DAY_MS)
            await pipe.execute()
        except Exception:
            log.warning("daily %s: the end of an attempt not stored", d["id"], exc_info=True)

    async def flush(self, timeout: float = 5.0) -> None:
        """Shutting down: the ends of attempts being written get a bounded wait; a deal
        being drawn ahead is dropped (the solver is closing)."""
        for task in self.drawing:
            task.cancel()
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=timeout)

    # --- reading ------------------------------------------------------------------------

    async def counts(self, date: str, games: list[str]) -> dict[str, dict[str, int]]:
        """Each daily's "N racing now, M finished", in one pipeline."""
        now = self.clock()
        pipe = self.redis.pipeline(transaction=False)
        for game in games:
            pipe.zcount(self.key(date, game, "live"), f"({now}", "+inf")
            pipe.get(self.key(date, game, "done"))
        got = await pipe.execute()
        return {
            game: {"racing": int(got[2 * i]), "finished": int(got[2 * i + 1] or 0)}
            for i, game in enumerate(games)
        }
