"""The arena's rules, sans-I/O: what a finished race is worth, and who races whom next.

An arena is a timed event for one game: its members are paired into rooms of up to N as they
become free, and every race they finish adds points (PROTOCOL.md, Arena). This module holds
the two decisions, with no clock, socket or Redis (server/race/arena.py feeds them):

**Points** (`points`, `score_race`), per seat of a finished race, by its place in the results'
ranking (`records.rank`, the same for every verifier):

* 1st place: 4; 2nd place: 2 in a race of three or more racers, else 1; any other place: 1;
* a seat that resigned, left (disconnected past its grace) or ran out of the race's time
  limit (`OUT_STATUSES`) scores 0, whatever its place;
* the streak (as lichess's arena): a member with two or more wins (1st places)
  in a row is *on fire*: its next race scores double, and so does every one after it until
  it does not win; a race that is not a win (any other place, or a 0) ends the streak.

**Pairing** (`ArenaPairing`, in the quick match's queue and matcher: its tickets carry the
member's arena score as their rating): in waves, as lichess's arena pairs. Once the free
member who has waited longest has waited `GATHER` seconds (1) (so members freed by rooms ending
at about the same time mix), every free member is paired at once: sorted by score (then by
how long they waited), cut into the fewest rooms of at most N, their sizes as even as can be
(5 free in rooms of 4: 3 and 2, never 4 and a lone one). Neighbours in score race together,
and nobody free beside another free member waits longer than `GATHER` plus a matcher round,
whatever the scores (a window on the score that widens with the wait, as quick match's
rating window, left members far apart in score waiting seconds each). A member alone waits
for the next race to end. Bots are members like any other (marked, never fill-ins), one
address may hold any number of seats (a club on one network), and a rematch is not avoided
(rooms mix whoever is free).

A race is scored in the order its results are stored (`replay` recomputes every member's
standing from the list of races in that order: the event's results are checked against the
race records this way, tests/server/test_arena.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from solrace.server.rules.matchmaking import Group, Ticket

__all__ = [
    "GATHER",
    "MAX_ROOM",
    "MIN_ROOM",
    "OUT_STATUSES",
    "ArenaPairing",
    "Standing",
    "points",
    "replay",
    "room_sizes",
    "score_race",
    "standings",
]

#: statuses a seat gets from leaving the race, not from playing it out: worth nothing
OUT_STATUSES = frozenset({"resigned", "left", "timeout"})
#: a room's size bounds (the arena's N)
MIN_ROOM = 2
MAX_ROOM = 8
#: seconds the longest-waiting free member waits before a wave pairs every free member
GATHER = 1.0


def room_sizes(free: int, max_players: int) -> list[int]:
    """`free` members cut into the fewest rooms of at most `max_players`, as even as can be
    (none of one: in rooms of two, an odd one out waits; their sum is then `free` - 1)."""
    if free < MIN_ROOM:
        return []
    if max_players <= MIN_ROOM:
        return [MIN_ROOM] * (free // MIN_ROOM)
    rooms = -(-free // max_players)
    base, extra = divmod(free, rooms)
    return [base + 1] * extra + [base] * (rooms - extra)


@dataclass
class ArenaPairing:
    """The arena's pairing between matcher rounds (the quick match's `Pairing` interface:
    `step(tickets, now)` -> the groups sealed). Keeps nothing between steps but its counter."""

    max_players: int = 4
    gather: float = GATHER
    _next: int = 0

    def step(self, tickets: Iterable[Ticket], now: float) -> list[Group]:
        free = list(tickets)
        if len(free) < MIN_ROOM or now - min(t.at for t in free) < self.gather:
            return []
        size = max(MIN_ROOM, min(MAX_ROOM, self.max_players))
        sizes = room_sizes(len(free), size)
        if sum(sizes) < len(free):  # the odd one out: the one freed last waits
            free.remove(max(free, key=lambda t: (t.at, t.id)))
        free.sort(key=lambda t: (-t.rating, t.at, t.id))
        groups = []
        i = 0
        for n in sizes:
            self._next += 1
            groups.append(Group(f"a{self._next}", free[i : i + n], now, now))
            i += n
        return groups


def points(place: int, racers: int, status: str, streak: int) -> int:
    """What one seat's race adds: by place (4 / 2 or 1 / 1), 0 when it left the race,
    doubled when the member came in on fire (`streak` >= 2 wins in a row)."""
    if status in OUT_STATUSES:
        return 0
    if place == 1:
        base = 4
    elif place == 2 and racers >= 3:
        base = 2
    else:
        base = 1
    return base * (2 if streak >= 2 else 1)


@dataclass
class Standing:
    """One member's standing: its score, its current streak of wins, races and wins so far."""

    score: int = 0
    streak: int = 0
    races: int = 0
    wins: int = 0
    #: each race's points, in order (the leaderboard shows the last few)
    sheet: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "streak": self.streak,
            "races": self.races,
            "wins": self.wins,
            "sheet": list(self.sheet),
        }

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> Standing:
        return cls(
            int(row.get("score", 0)),
            int(row.get("streak", 0)),
            int(row.get("races", 0)),
            int(row.get("wins", 0)),
            [int(x) for x in row.get("sheet", [])],
        )


#: how many races' points a standing keeps in its sheet (the leaderboard's recent form)
SHEET = 12


def score_race(
    ranking: Iterable[Mapping[str, Any]], before: Mapping[str, Standing]
) -> dict[str, tuple[int, Standing]]:
    """A finished race's effect: for each ranked seat with a member id (`player`), the points
    it scores and the member's standing after it. `before` holds the members' standings before
    the race (a member missing starts at zero). Seats without a player id score nothing."""
    rows = list(ranking)
    racers = len(rows)
    out: dict[str, tuple[int, Standing]] = {}
    for row in rows:
        pid = row.get("player")
        if not pid or pid in out:
            continue
        old = before.get(pid) or Standing()
        place = int(row.get("place") or racers)
        status = str(row.get("status") or "")
        got = points(place, racers, status, old.streak)
        win = place == 1 and status not in OUT_STATUSES
        new = Standing(
            score=old.score + got,
            streak=old.streak + 1 if win else 0,
            races=old.races + 1,
            wins=old.wins + (1 if win else 0),
            sheet=([*old.sheet, got])[-SHEET:],
        )
        out[pid] = (got, new)
    return out


def replay(races: Iterable[Iterable[Mapping[str, Any]]]) -> dict[str, Standing]:
    """Every member's standing from the rankings of the event's races, in the order they were
    scored: what a verifier recomputes from the race records."""
    table: dict[str, Standing] = {}
    for ranking in races:
        for pid, (_got, new) in score_race(ranking, table).items():
            table[pid] = new
    return table


def standings(rows: Iterable[tuple[str, Standing, str]]) -> list[tuple[str, Standing]]:
    """The leaderboard's order: score, then wins, then fewer races, then the member id.
    `rows` are (member id, standing, name)."""
    return [
        (pid, st)
        for pid, st, _name in sorted(
            rows, key=lambda r: (-r[1].score, -r[1].wins, r[1].races, r[2], r[0])
        )
    ]
