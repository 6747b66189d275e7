"""Ratings: each player's (mu, sigma) per game, moved by the finishing order of rated races.

The maths is openskill's (PlackettLuce, its default model: a multiplayer Bayesian rating
from a ranking, ties allowed); nothing here is hand-written rating maths. What is here is the
storage, on the rating board's hash tag (`Boards.keys("rating:GAME")`, docs/LEADERBOARDS.md):

    P board:{rating:GAME}          zset  player id -> -ordinal (Boards reads lowest first)
    P board:{rating:GAME}:rows     hash  player id -> {"name", "bot", "mu", "sigma",
                                         "ordinal", "rated"} (JSON): the rating itself
    P board:{rating:GAME}:applied  zset  record ids of the races applied, by finish time
                                         (marks.py: the newest MARKS_MAX, none older than
                                         MARK_DAYS)

Applying a race: read every player's row and the race's mark (one pipeline), rate with
openskill, then one Lua script checks that the mark is still absent and that every row is
still the one read (the compare-and-set: a row holds the count of rated races, which every
update raises, so an unchanged row is an unchanged version), writes the rows, the board's
scores and the mark together, or changes nothing and says why. A conflict (another race of
the same game and player applied meanwhile) reads again and rates again; WATCH/MULTI would
do the same but redis-py cannot run it on a cluster.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from openskill.models import PlackettLuce
from solrace.server.boards import Boards
from solrace.server.marks import FRESH, MARK, cutoff
from solrace.server.redis_conn import Client
from solrace.server.retry import Backoff

#: the rating board of a game
BOARD = "rating:{game}"
#: entries a rating board keeps (the lowest ordinals go first: their players start again)
RATING_CAP = 1_000_000
#: how long, and how many, applied races are remembered per game (marks.py)
MARK_DAYS, MARKS_MAX = 7, 200_000
#: compare-and-set attempts before a race is left for the caller's retry
CAS_TRIES = 20
#: pauses between them, jittered so that two writers that collided do not collide again
CAS_PAUSES = Backoff(0.005, 0.05, jitter=True)

Applied = Literal["applied", "dup", "stale", "conflict", "unrated"]

_APPLY = (
    FRESH
    + MARK
    + """
local zset, rows, marks = KEYS[1], KEYS[2], KEYS[3]
local id, at, cut = ARGV[1], ARGV[2], ARGV[3]
local keep, max, cap, n = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local state = fresh(marks, id, tonumber(at), tonumber(cut), max)
if state ~= 'fresh' then return state end
for i = 0, n - 1 do
  local base = 8 + 4 * i
  local now = redis.call('HGET', rows, ARGV[base]) or ''
  if now ~= ARGV[base + 1] then return 'conflict' end
end
for i = 0, n - 1 do
  local base = 8 + 4 * i
  redis.call('ZADD', zset, ARGV[base + 2], ARGV[base])
  redis.call('HSET', rows, ARGV[base], ARGV[base + 3])
end
if cap > 0 and redis.call('ZCARD', zset) > cap then
  local gone = redis.call('ZRANGE', zset, cap, -1)
  redis.call('ZREMRANGEBYRANK', zset, cap, -1)
  redis.call('HDEL', rows, unpack(gone))
end
mark(marks, id, at, cut, max, keep)
return 'applied'
"""
)


@dataclass(frozen=True)
class Seat:
    """One rated player of a race: its id, the name and bot mark it raced with, its place."""

    player: str
    name: str
    bot: bool
    place: int


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def rating_view(row: dict[str, Any]) -> dict[str, float]:
    """The public part of a rating row (what /api/player shows)."""
    return {"mu": row["mu"], "sigma": row["sigma"], "ordinal": row["ordinal"]}


class Ratings:
    """Every game's ratings, on the rating boards."""

    def __init__(self, boards: Boards, *, cap: int = RATING_CAP) -> None:
        self.boards = boards
        self.redis: Client = boards.redis
        self.cap = cap
        self.model = PlackettLuce()
        self._apply = self.redis.register_script(_APPLY)

    def keys(self, game: str) -> list[str]:
        """The rating board's zset and rows, and the marks of the races applied: one tag."""
        zset, rows = self.boards.keys(BOARD.format(game=game))
        return [zset, rows, f"{zset}:applied"]

    async def get(self, game: str, player: str) -> dict[str, Any] | None:
        """A player's rating row in one game (None: never rated)."""
        data = await self.redis.hget(self.keys(game)[1], player)
        return json.loads(data) if data else None

    def rate(self, seats: Sequence[Seat], rows: Sequence[dict[str, Any] | None]) -> list[Any]:
        """openskill's new ratings of the seats (in order) from their rows (None: new)."""
        teams = [
            [self.model.rating(mu=r["mu"], sigma=r["sigma"]) if r else self.model.rating()]
            for r in rows
        ]
        rated = self.model.rate(teams, ranks=[float(s.place) for s in seats])
        return [team[0] for team in rated]

    async def apply(
        self, race_id: str, game: str, at: int, seats: Sequence[Seat], now: int | None = None
    ) -> Applied:
        """Rate one race (each player once, at its best place); `applied`, or why not: `dup`
        (applied before), `stale` (too old to tell), `unrated` (fewer than two players),
        `conflict` (every compare-and-set lost: the caller retries later)."""
        if len({s.player for s in seats}) != len(seats):
            raise ValueError("each player once")
        if len(seats) < 2:
            return "unrated"
        keys = self.keys(game)
        keep = MARK_DAYS * 86_400_000
        cut = cutoff(int(time.time() * 1000) if now is None else now, keep)
        for attempt in range(CAS_TRIES):
            pipe = self.redis.pipeline(transaction=False)  # one hash tag: one node
            pipe.zscore(keys[2], race_id)
            pipe.hmget(keys[1], [s.player for s in seats])
            mark, olds = await pipe.execute()
            if mark is not None:
                return "dup"
            texts = [_text(o) if o is not None else "" for o in olds]
            rows = [json.loads(t) if t else None for t in texts]
            args: list[Any] = [race_id, at, cut, keep, MARKS_MAX, self.cap, len(seats)]
            for seat, old, text, new in zip(
                seats, rows, texts, self.rate(seats, rows), strict=True
            ):
                ordinal = float(new.ordinal())
                row = {
                    "name": seat.name,
                    "bot": seat.bot,
                    "mu": new.mu,
                    "sigma": new.sigma,
                    "ordinal": ordinal,
                    "rated": (old["rated"] if old else 0) + 1,
                }
                args += [seat.player, text, repr(-ordinal), json.dumps(row, separators=(",", ":"))]
            state = _text(await self._apply(keys=keys, args=args))
            if state != "conflict":
                return state  # type: ignore[return-value]
            await CAS_PAUSES.sleep(attempt)
        return "conflict"
