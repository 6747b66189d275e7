"""Standings: what every finished race adds to its players' all-time figures and boards.

For each race this process finishes (the service's `finished` hook, beside the record), in
the background with retries like the record write (docs/LEADERBOARDS.md):

* each keyed player's figures per game (`P player:{PID}:games`, a hash: `GAME:races`,
  `GAME:wins`, `GAME:best_time`, and `wins:GAME:OPTS` per board option set), changed by one
  Lua script on the player's hash tag together with the race's mark (`player:{PID}:counted`,
  marks.py), so a race counts once however often it is applied;
* the all-time boards of the game and option set (`Boards`): `wins:GAME:OPTS` (score: minus
  the player's count of wins, keep best: the count, not +1, so a retry cannot count twice)
  and `time:GAME:OPTS` (the fastest won deal: time, then moves, packed; keep best);
* a rated race's ratings (ratings.py).

What counts: a race with a player key, except practice (`hints`) and a deal from a text seed
(whoever chose the seed knew the deal: anyone can rehearse it first). A player with two seats
in one race counts once, at its better place. Boards are per game and option set
(`board_options`); ratings per game.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from solrace.engine import GAMES, game_class
from solrace.server.league.boards import Boards
from solrace.server.league.ratings import BOARD as RATING_BOARD
from solrace.server.league.ratings import Ratings, Seat, rating_view
from solrace.server.league.records import HISTORY_MAX, Records
from solrace.server.rules.room import Room
from solrace.server.store import keys
from solrace.server.store.marks import FRESH, MARK, cutoff
from solrace.server.store.redis_conn import Client
from solrace.server.store.scripts import source

log = logging.getLogger("solrace.server")

#: entries an all-time board keeps (the worst go first)
BOARD_CAP = 1_000_000
#: an open-ended game option (Klondike's passes) has boards of its own up to this value; a
#: race with a larger one goes on no board (its player's figures still count it)
OPEN_OPTION_MAX = 9
#: time and moves packed into one score: time (ms, at most 2**32 - 1) * 2**20 + moves
MOVES_BITS, TIME_MAX, MOVES_MAX = 20, 2**32 - 1, 2**20 - 1
KINDS = ("wins", "time", "rating")

_COUNT = FRESH + MARK + source("standings_count", __package__)


def board_options(game: str, options: dict[str, Any]) -> str | None:
    """The option set's part of a board's name: `name=value` in the game's order, joined by
    commas ("" for a game without options); None when an open-ended option is past
    OPEN_OPTION_MAX (no board: the number of boards stays bounded)."""
    cls = game_class(game)
    full = cls.normalize_options(options)
    for name, (_, choices) in cls.OPTIONS.items():
        if choices is None and int(full[name]) > OPEN_OPTION_MAX:
            return None
    return ",".join(f"{name}={full[name]}" for name in cls.OPTIONS)


def board_name(kind: str, game: str, opts: str) -> str:
    """A board's name: `rating:GAME` (ratings are per game), `wins|time:GAME:OPTS`."""
    return RATING_BOARD.format(game=game) if kind == "rating" else f"{kind}:{game}:{opts}"


def time_score(ms: int, moves: int) -> int:
    """The best-time board's order in one exact double: time first, then moves."""
    return (min(ms, TIME_MAX) << MOVES_BITS) + min(moves, MOVES_MAX)


@dataclass(frozen=True)
class Finisher:
    """A keyed player's result in one race (its better seat, if it had two)."""

    player: str
    name: str
    bot: bool
    place: int
    status: str
    time: int | None
    moves: int


@dataclass(frozen=True)
class Outcome:
    """What a finished race gives the standings: built from the room as its results are
    stored, so it needs nothing the record does not keep but the room's `rated`, `hints`
    and text seed and the seats' bot marks."""

    id: str
    game: str
    opts: str | None  # board_options; None: no board
    at: int  # finished_at, ms
    rated: bool
    counted: bool  # neither practice (hints) nor a text seed
    players: tuple[Finisher, ...]  # ranking order, each player once
    rated_bots: bool = False  # the room rates bots against humans (else apart)


def outcome_of(room: Room) -> Outcome:
    d = room.doc
    opts = d["options"]
    bots = {s["seat"]: bool(s.get("bot")) for s in room.seats()}
    seen: set[str] = set()
    players = []
    for row in d["results"]["ranking"]:
        pid = row.get("player")
        if pid is None or pid in seen:
            continue
        seen.add(pid)
        players.append(
            Finisher(
                pid,
                row["name"],
                bots.get(row["seat"], False),
                row["place"],
                row["status"],
                row["time"],
                row["moves"],
            )
        )
    return Outcome(
        id=d["results"]["record"],
        game=opts["game"],
        opts=board_options(opts["game"], opts["game_options"]),
        at=d["finished_at"],
        rated=bool(opts.get("rated")),
        rated_bots=bool(opts.get("rated_bots")),
        counted=not opts.get("hints") and not opts.get("seed"),
        players=tuple(players),
    )


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class Standings:
    """Players' figures, the all-time boards and the ratings; the HTTP API reads them."""

    def __init__(self, records: Records, boards: Boards, *, cap: int = BOARD_CAP) -> None:
        self.records = records
        self.redis: Client = records.redis
        self.boards = boards
        self.ratings = Ratings(boards)
        self.cap = cap
        self._count = self.redis.register_script(_COUNT)

    def stats_key(self, pid: str) -> str:
        return keys.player(self.records.prefix, pid, "games")

    def marks_key(self, pid: str) -> str:
        return keys.player(self.records.prefix, pid, "counted")

    # --- writing ------------------------------------------------------------------------

    def owed(self, room: Room) -> Callable[[], Awaitable[None]] | None:
        """What the race the room has just finished owes the standings, as a step, or None
        when it counts on no figure. The outcome is read now (a rematch changes the room);
        the record's writer runs the step before it removes the race's reminder, so a process
        that dies first leaves it to whoever fires the reminder (server/league/records.py), and
        applying a race twice changes nothing."""
        if room.doc["seed"] is None or room.doc["results"] is None:
            return None
        daily = room.doc.get("daily")
        if daily is not None and not daily["scored"]:
            return None  # a daily's practice: the same deal again and again is no all-time figure
        outcome = outcome_of(room)
        if not outcome.players:
            return None

        async def step() -> None:
            await self.apply(outcome)

        return step

    async def apply(self, race: Outcome, now: int | None = None) -> str:
        """Count the race for its players, on the boards and (rated) in the ratings; applying
        it again changes nothing. Returns the ratings' answer (ratings.Applied)."""
        now = int(time.time() * 1000) if now is None else now
        rated = "unrated"
        if race.counted:
            await asyncio.gather(*(self._count_player(race, p, now) for p in race.players))
        if race.rated:
            seats = [Seat(p.player, p.name, p.bot, p.place) for p in race.players]
            rated = await self.ratings.apply(
                race.id, race.game, race.at, seats, now, rated_bots=race.rated_bots
            )
            if rated == "conflict":
                raise RuntimeError("ratings: every compare-and-set lost")
        return rated

    async def _count_player(self, race: Outcome, p: Finisher, now: int) -> None:
        keep = self.records.keep_ms
        won = p.status == "won" and p.time is not None
        keys = [self.stats_key(p.player), self.marks_key(p.player)]
        args: list[Any] = [
            race.id,
            race.at,
            cutoff(now, keep),
            keep,
            HISTORY_MAX,
            race.game,
            race.opts or "",
            "1" if won else "0",
            "" if p.time is None else p.time,
            # a game without options has a board too (its option text is ""): only None
            # (an open-ended option past its bound) has none
            "0" if race.opts is None else "1",
        ]
        _, wins = await self._count(keys=keys, args=args)
        if race.opts is None:
            return
        row = {"name": p.name, "bot": p.bot}
        writes = []
        if int(wins):
            board = board_name("wins", race.game, race.opts)
            writes.append(self.boards.submit(board, p.player, -int(wins), row, cap=self.cap))
        if won and p.time is not None:
            board = board_name("time", race.game, race.opts)
            timed = {**row, "time": p.time, "moves": p.moves, "record": race.id}
            score = time_score(p.time, p.moves)
            writes.append(self.boards.submit(board, p.player, score, timed, cap=self.cap))
        await asyncio.gather(*writes)

    # --- reading ------------------------------------------------------------------------

    def reads(self, pipe: Any, pid: str) -> None:
        """Queue the reads of a player's `games` on a pipeline (`games` makes the answer):
        the figures hash, and the player's row on each game's rating board."""
        pipe.hgetall(self.stats_key(pid))
        for game in GAMES:
            pipe.hget(self.ratings.keys(game)[1], pid)

    def games(self, replies: list[Any]) -> dict[str, dict[str, Any]]:
        """`/api/player`'s `games` from the replies of `reads`: each game the player raced."""
        stats = {_text(k): int(_text(v)) for k, v in (replies[0] or {}).items()}
        out: dict[str, dict[str, Any]] = {}
        for game, data in zip(GAMES, replies[1:], strict=True):
            rating = json.loads(data) if data else None
            races = stats.get(f"{game}:races", 0)
            if not races and rating is None:
                continue
            out[game] = {
                "races": races,
                "wins": stats.get(f"{game}:wins", 0),
                "best_time": stats.get(f"{game}:best_time"),
                "rating": rating_view(rating) if rating else None,
                "rated": rating["rated"] if rating else 0,
            }
        return out

    async def player_games(self, pid: str) -> dict[str, dict[str, Any]]:
        pipe = self.redis.pipeline(transaction=False)
        self.reads(pipe, pid)
        return self.games(await pipe.execute())
