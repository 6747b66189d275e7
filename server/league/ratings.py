"""Ratings: each player's (mu, sigma) per game, moved by the finishing order of rated races.

The maths is openskill's (PlackettLuce, its default model: a multiplayer Bayesian rating
from a ranking, ties allowed); nothing here is hand-written rating maths. What is here is
which opponents count for whom (the rules against rating farming, below), and the storage,
on the rating board's hash tag (`Boards.keys("rating:GAME")`, docs/LEADERBOARDS.md):

    P board:{rating:GAME}              zset  established player id -> -ordinal (the board:
                                             Boards reads lowest first)
    P board:{rating:GAME}:rows         hash  player id -> {"name", "bot", "mu", "sigma",
                                             "ordinal", "rated", "provisional",
                                             "opponents" (while provisional)} (JSON): the
                                             rating itself, provisional ones too
    P board:{rating:GAME}:provisional  zset  provisional player id -> when last rated (ms):
                                             at most PROVISIONAL_CAP, the least recent go
    P board:{rating:GAME}:applied      zset  record ids of the races applied, by finish time
                                             (marks.py: the newest MARKS_MAX, none older than
                                             MARK_DAYS)

Against rating farming (sybils: fresh keys made to lose; docs/LEADERBOARDS.md, Provisional
ratings), as lichess does:

* a player is **provisional** until it has played PROVISIONAL_RACES rated races and met
  ESTABLISHED_OPPONENTS distinct established opponents; only established players are on the
  board (a provisional rating is kept, shown as provisional, and bounded in number);
* a provisional opponent the player beat **counts for nothing**: a player is rated against
  its established opponents and the provisional ones who finished at or above it (a loss
  still costs, to anyone; a win over a fresh key gains nothing, not even a smaller sigma);
* an established player with no established opponent in the race moves by at most
  FIELD_BOUND in mu and its sigma does not shrink;
* bots are rated only against bots, humans only against humans, unless the room says
  `rated_bots` (protocol: room options);
* while a game has fewer than BOOTSTRAP established players (a new deployment), every
  opponent counts as established: someone has to be first.

Applying a race: read every player's row, the race's mark and the board's size (one
pipeline), rate, then one Lua script checks that the mark is still absent and that every row
is still the one read (the compare-and-set: a row holds the count of rated races, which every
update raises, so an unchanged row is an unchanged version), writes the rows, the board's
and the provisional set's scores and the mark together, or changes nothing and says why. A
conflict (another race of the same game and player applied meanwhile) reads again and rates
again; WATCH/MULTI would do the same but redis-py cannot run it on a cluster.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from openskill.models import PlackettLuce
from solrace.server.common.retry import Backoff
from solrace.server.league.boards import Boards
from solrace.server.store.marks import FRESH, MARK, cutoff
from solrace.server.store.redis_conn import Client
from solrace.server.store.scripts import source

#: the rating board of a game
BOARD = "rating:{game}"
#: entries a rating board keeps (the lowest ordinals go first: their players start again)
RATING_CAP = 1_000_000
#: provisional ratings kept per game (the least recently rated go first: they start again)
PROVISIONAL_CAP = 1_000_000
#: how long, and how many, applied races are remembered per game (marks.py)
MARK_DAYS, MARKS_MAX = 7, 200_000
#: compare-and-set attempts before a race is left for the caller's retry
CAS_TRIES = 20
#: pauses between them, jittered so that two writers that collided do not collide again
CAS_PAUSES = Backoff(0.005, 0.05, jitter=True)

# --- the rules against rating farming (docs/LEADERBOARDS.md, Provisional ratings) ---------
#: rated races a player needs before its rating is established (on the board)
PROVISIONAL_RACES = 10
#: distinct established opponents a player must have met before its rating is established
ESTABLISHED_OPPONENTS = 5
#: the most an established player's mu moves in a race with no established opponent
FIELD_BOUND = 0.5
#: below this many established players a game's ratings are bootstrapping: every opponent
#: counts as established (a new deployment has no one established to meet)
BOOTSTRAP = ESTABLISHED_OPPONENTS

Applied = Literal["applied", "dup", "stale", "conflict", "unrated"]

_APPLY = FRESH + MARK + source("ratings_apply", __package__)


@dataclass(frozen=True)
class Seat:
    """One rated player of a race: its id, the name and bot mark it raced with, its place."""

    player: str
    name: str
    bot: bool
    place: int


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def established(row: dict[str, Any] | None) -> bool:
    """Whether a rating row is established (rows from before provisional ratings existed:
    when they hold PROVISIONAL_RACES rated races)."""
    if row is None:
        return False
    if "provisional" in row:
        return not row["provisional"]
    return int(row.get("rated", 0)) >= PROVISIONAL_RACES


#: the rating people see: SHOWN_BASE + SHOWN_SCALE x ordinal, rounded (a new player, μ 25,
#: σ 8.33, ordinal 0, is 1000; the board's order is the same: docs/LEADERBOARDS.md)
SHOWN_BASE, SHOWN_SCALE = 1000, 40


def shown(ordinal: float) -> int:
    """The rating as shown beside a name, from openskill's ordinal (μ − 3σ)."""
    return round(SHOWN_BASE + SHOWN_SCALE * ordinal)


def rating_view(row: dict[str, Any]) -> dict[str, Any]:
    """The public part of a rating row (what /api/player and /api/ratings show): the shown
    `rating`, provisional or not, and what the player's latest rated race changed (`last`:
    its record id and the change of the shown rating; null in rows from before)."""
    return {
        "rating": shown(row["ordinal"]),
        "mu": row["mu"],
        "sigma": row["sigma"],
        "ordinal": row["ordinal"],
        "provisional": not established(row),
        "rated": int(row.get("rated", 0)),
        "last": row.get("last"),
    }


@dataclass(frozen=True)
class Rated:
    """A seat's new rating row, and whether it is on the board (established)."""

    player: str
    row: dict[str, Any]
    on_board: bool


class Ratings:
    """Every game's ratings, on the rating boards."""

    def __init__(
        self, boards: Boards, *, cap: int = RATING_CAP, provisional_cap: int = PROVISIONAL_CAP
    ) -> None:
        self.boards = boards
        self.redis: Client = boards.redis
        self.cap = cap
        self.provisional_cap = provisional_cap
        self.model = PlackettLuce()
        self._apply = self.redis.register_script(_APPLY)

    def keys(self, game: str) -> list[str]:
        """The rating board's zset and rows, the marks of the races applied and the
        provisional players: one tag."""
        zset, rows = self.boards.keys(BOARD.format(game=game))
        return [zset, rows, f"{zset}:applied", f"{zset}:provisional"]

    async def get(self, game: str, player: str) -> dict[str, Any] | None:
        """A player's rating row in one game (None: never rated)."""
        data = await self.redis.hget(self.keys(game)[1], player)
        return json.loads(data) if data else None

    def rate(
        self,
        seats: Sequence[Seat],
        rows: Sequence[dict[str, Any] | None],
        *,
        rated_bots: bool = False,
        bootstrap: bool = False,
    ) -> list[Rated | None]:
        """The seats' new rows (in order; None: not rated in this race, having no opponent
        of its kind) under the rules against farming (module docstring): each player is
        rated by openskill against the opponents that count for it."""
        known = [bootstrap or established(r) for r in rows]
        ratings = [
            self.model.rating(mu=r["mu"], sigma=r["sigma"]) if r else self.model.rating()
            for r in rows
        ]
        solved: dict[tuple[int, ...], list[Any]] = {}
        out: list[Rated | None] = []
        for i, (seat, row) in enumerate(zip(seats, rows, strict=True)):
            peers = [
                j
                for j, other in enumerate(seats)
                if j != i and (rated_bots or other.bot == seat.bot)
            ]
            if not peers:
                out.append(None)
                continue
            # a provisional opponent counts only when it finished at or above the player
            counted = [j for j in peers if known[j] or seats[j].place <= seat.place]
            old = ratings[i]
            mu, sigma = old.mu, old.sigma
            if counted:
                group = tuple(sorted((i, *counted)))  # players sharing a field rate once
                if group not in solved:
                    teams = [[ratings[j]] for j in group]
                    ranks = [float(seats[j].place) for j in group]
                    solved[group] = [t[0] for t in self.model.rate(teams, ranks=ranks)]
                new = solved[group][group.index(i)]
                mu, sigma = new.mu, new.sigma
            if known[i] and not bootstrap and not any(known[j] for j in peers):
                # a field of fresh keys: an established player barely moves, and learns nothing
                mu = min(max(mu, old.mu - FIELD_BOUND), old.mu + FIELD_BOUND)
                sigma = max(sigma, old.sigma)
            rated = (row["rated"] if row else 0) + 1
            fresh = self.model.rating(mu=mu, sigma=sigma)
            new_row: dict[str, Any] = {
                "name": seat.name,
                "bot": seat.bot,
                "mu": mu,
                "sigma": sigma,
                "ordinal": float(fresh.ordinal()),
                "rated": rated,
            }
            if established(row):
                new_row["provisional"] = False
            else:
                met = list((row or {}).get("opponents", []))
                for j in peers:
                    if known[j] and seats[j].player not in met and len(met) < ESTABLISHED_OPPONENTS:
                        met.append(seats[j].player)
                done = rated >= PROVISIONAL_RACES and len(met) >= ESTABLISHED_OPPONENTS
                new_row["provisional"] = not done
                if not done:
                    new_row["opponents"] = met
            out.append(Rated(seat.player, new_row, not new_row["provisional"]))
        return out

    async def apply(
        self,
        race_id: str,
        game: str,
        at: int,
        seats: Sequence[Seat],
        now: int | None = None,
        *,
        rated_bots: bool = False,
    ) -> Applied:
        """Rate one race (each player once, at its best place); `applied`, or why not: `dup`
        (applied before), `stale` (too old to tell), `unrated` (no player had an opponent of
        its kind: `rated_bots` off, bots and humans are rated apart), `conflict` (every
        compare-and-set lost: the caller retries later)."""
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
            pipe.zcard(keys[0])
            mark, olds, size = await pipe.execute()
            if mark is not None:
                return "dup"
            texts = [_text(o) if o is not None else "" for o in olds]
            rows = [json.loads(t) if t else None for t in texts]
            news = self.rate(seats, rows, rated_bots=rated_bots, bootstrap=int(size) < BOOTSTRAP)
            if all(n is None for n in news):
                return "unrated"
            fresh = float(self.model.rating().ordinal())
            for new, old in zip(news, rows, strict=True):
                if new is not None:  # what this race changed, for "+12" beside the results
                    before = shown(old["ordinal"] if old else fresh)
                    change = shown(new.row["ordinal"]) - before
                    new.row["last"] = {"race": race_id, "change": change}
            writes = [(n, t) for n, t in zip(news, texts, strict=True) if n is not None]
            args: list[Any] = [race_id, at, cut, keep, MARKS_MAX, self.cap, len(writes)]
            args.append(self.provisional_cap)
            for new, text in writes:
                score = repr(-float(new.row["ordinal"]))
                row = json.dumps(new.row, separators=(",", ":"))
                args += [new.player, text, score, row, "1" if new.on_board else "0"]
            state = _text(await self._apply(keys=keys, args=args))
            if state != "conflict":
                return state  # type: ignore[return-value]
            await CAS_PAUSES.sleep(attempt)
        return "conflict"
