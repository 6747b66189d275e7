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

**Pairing** (`pairing_rules`): the quick match's rule (server/rules/matchmaking.py) with the
member's arena score in place of a rating: members close in score race together; the window
starts at `SCORE_WINDOW` points either side and widens by `SCORE_WIDEN` points a second
waited, so two free members always meet within a few seconds whatever their scores; a group
waits `GATHER` seconds for more (up to the arena's N), at once when full. Bots are members
like any other (marked, never fill-ins), and one address may hold any number of seats (a
club on one network).

A race is scored in the order its results are stored (`replay` recomputes every member's
standing from the list of races in that order: the event's results are checked against the
race records this way, tests/server/test_arena.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from solrace.server.rules.matchmaking import Rules

__all__ = [
    "GATHER",
    "MAX_ROOM",
    "MIN_ROOM",
    "OUT_STATUSES",
    "SCORE_WIDEN",
    "SCORE_WINDOW",
    "Standing",
    "pairing_rules",
    "points",
    "replay",
    "score_race",
    "standings",
]

#: statuses a seat gets from leaving the race, not from playing it out: worth nothing
OUT_STATUSES = frozenset({"resigned", "left", "timeout"})
#: a room's size bounds (the arena's N)
MIN_ROOM = 2
MAX_ROOM = 8
#: the score window: points either side at first, widening per second waited
SCORE_WINDOW = 4.0
SCORE_WIDEN = 4.0
#: seconds a group of two or more waits for more members (at once when full)
GATHER = 1.5


def pairing_rules(max_players: int) -> Rules:
    """The quick match's pairing rule, tuned for an arena of rooms of up to `max_players`."""
    return Rules(
        base=SCORE_WINDOW,
        widen=SCORE_WIDEN,
        gather=GATHER,
        gather_min=0.25,
        min_players=MIN_ROOM,
        max_players=max(MIN_ROOM, min(MAX_ROOM, max_players)),
        per_address=0,
        bots_after=0.0,
    )


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
    rows = [r for r in ranking]
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
            sheet=(old.sheet + [got])[-SHEET:],
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
