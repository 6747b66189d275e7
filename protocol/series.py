"""Series: several races in one room on fresh deals, with points that add up (PROTOCOL.md, Series).

The scoring rule lives here, beside the ranking rule (`records.rank`), so the server and a
verifier (`solrace verify` of a series record) compute the same standings from the same races.

A series is set by the room option `series`: `{"rounds": N, "scoring": S, "points": [...]}`.

* `rounds`: 1 to 100 races, or 0: until the host ends it (`end_series`).
* `scoring`: `"places"` (each race gives `points[place - 1]`, 0 past the list; seats tied on a
  place share the points of the places they cover: 2nd and 3rd tied on 7 and 5 get 6 each,
  rounded to 2 decimals), or `"time"` (the most races won, then the least total time of the
  races won).
* `points`: 1 to 64 whole numbers from 0 to 1000, never going up (default 10/7/5/3/2/1).

Each round keeps, per seat of its race, the seat's `place`, `status` and `time` (as its race
record has them); the standings follow from those rounds and nothing else. A seat that joins
after the first round starts on 0; a seat that leaves keeps its points (`left`).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from typing import Any

from solrace.protocol.records import RECORD_VERSION

SCORINGS = ("places", "time")
DEFAULT_POINTS = (10, 7, 5, 3, 2, 1)
MAX_ROUNDS = 100
MAX_POINTS = 64
POINTS_CAP = 1000
#: a round's row per seat: what its race record says of that seat
ROUND_FIELDS = ("seat", "place", "status", "time")
#: a standings row's fields
STANDING_FIELDS = (
    "seat",
    "name",
    "player",
    "bot",
    "place",
    "points",
    "wins",
    "time",
    "rounds",
    "left",
)


class BadSeries(ValueError):
    """A series option out of range; says which part."""


def check_option(value: Any) -> dict[str, Any]:
    """The `series` room option with its defaults filled in, or BadSeries."""
    if not isinstance(value, dict):
        raise BadSeries("series is a map: rounds, scoring, points")
    unknown = set(value) - {"rounds", "scoring", "points"}
    if unknown:
        raise BadSeries(f"unknown series field {sorted(unknown)[0]!r}")
    rounds = value.get("rounds", 3)
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 0 <= rounds <= MAX_ROUNDS:
        raise BadSeries(f"series rounds is 0 (until the host ends it) to {MAX_ROUNDS}")
    scoring = value.get("scoring", "places")
    if scoring not in SCORINGS:
        raise BadSeries(f"series scoring is one of {', '.join(SCORINGS)}")
    points = value.get("points", list(DEFAULT_POINTS))
    if (
        not isinstance(points, list)
        or not 1 <= len(points) <= MAX_POINTS
        or not all(
            isinstance(p, int) and not isinstance(p, bool) and 0 <= p <= POINTS_CAP for p in points
        )
    ):
        raise BadSeries(f"series points are 1 to {MAX_POINTS} whole numbers from 0 to {POINTS_CAP}")
    if any(b > a for a, b in itertools.pairwise(points)):
        raise BadSeries("series points never go up from one place to the next")
    return {"rounds": rounds, "scoring": scoring, "points": list(points)}


def series_id(first_commitment: str) -> str:
    """A series' id: from the commitment of its first race (unique: each race commits a fresh
    salt), so it is known from the first countdown and a second write is the same record."""
    return hashlib.sha256(b"solrace series\n" + first_commitment.encode()).hexdigest()[:16]


def round_rows(ranking: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a round keeps of its race's ranking (or of its record's players)."""
    return [{f: row.get(f) for f in ROUND_FIELDS} for row in ranking]


def round_points(rows: Sequence[dict[str, Any]], points: Sequence[int]) -> dict[int, float | int]:
    """Each seat's points for one race by place: tied seats share the points of the places
    they cover (the mean, to 2 decimals; a whole number stays an int)."""
    by_place: dict[int, list[int]] = {}
    for row in rows:
        by_place.setdefault(int(row["place"]), []).append(int(row["seat"]))
    out: dict[int, float | int] = {}
    for place, seats in by_place.items():
        covered = [
            points[i] if i < len(points) else 0 for i in range(place - 1, place - 1 + len(seats))
        ]
        share = round(sum(covered) / len(covered), 2)
        value: float | int = int(share) if share == int(share) else share
        for seat in seats:
            out[seat] = value
    return out


def standings(
    option: dict[str, Any],
    rounds: Sequence[dict[str, Any]],
    players: dict[str, dict[str, Any]],
    present: Sequence[int] = (),
) -> list[dict[str, Any]]:
    """The standings after `rounds` (each `{"rows": [...]}` as `round_rows` keeps them).

    `players` maps each seat (as text) to its `name`, `player`, `bot` and `left`; `present`
    adds seats with no race yet (late joiners: on 0). Ordered by the scoring rule, ties sharing
    a place and ordered by seat."""
    scoring, points = option["scoring"], option["points"]
    seats = {int(s) for s in players} | set(present)
    table: dict[int, dict[str, Any]] = {}
    for seat in sorted(seats):
        info = players.get(str(seat), {})
        table[seat] = {
            "seat": seat,
            "name": info.get("name", ""),
            "player": info.get("player"),
            "bot": bool(info.get("bot")),
            "place": 0,
            "points": 0,
            "wins": 0,
            "time": 0,
            "rounds": [None] * len(rounds),
            "left": bool(info.get("left")),
        }
    for i, rnd in enumerate(rounds):
        given = round_points(rnd["rows"], points)
        for row in rnd["rows"]:
            seat = int(row["seat"])
            entry = table.get(seat)
            if entry is None:
                continue
            won = row["status"] == "won"
            if won:
                entry["wins"] += 1
                entry["time"] += int(row["time"] or 0)
            if scoring == "places":
                entry["points"] = _tidy(entry["points"] + given[seat])
                entry["rounds"][i] = given[seat]
            else:
                entry["rounds"][i] = int(row["time"] or 0) if won else None

    def key(row: dict[str, Any]) -> tuple[Any, ...]:
        if scoring == "places":
            return (-row["points"],)
        return (-row["wins"], row["time"])

    ordered = sorted(table.values(), key=lambda r: (key(r), r["seat"]))
    place, prev = 0, None
    for i, row in enumerate(ordered):
        if key(row) != prev:
            place, prev = i + 1, key(row)
        row["place"] = place
    return ordered


def _tidy(value: float | int) -> float | int:
    value = round(value, 2)
    return int(value) if value == int(value) else value


# --- the series record ------------------------------------------------------------------

#: a series record's fields and their types (the signature aside)
SERIES_FIELDS: dict[str, type | tuple[type, ...]] = {
    "v": int,
    "kind": str,
    "id": str,
    "room": str,
    "series": dict,
    "started_at": int,
    "finished_at": int,
    "rounds": list,
    "standings": list,
}


def is_series_record(data: Any) -> bool:
    return isinstance(data, dict) and data.get("kind") == "series"


def series_record(
    code: str,
    sid: str,
    option: dict[str, Any],
    rounds: Sequence[dict[str, Any]],
    final: Sequence[dict[str, Any]],
    started_at: int,
    finished_at: int,
) -> dict[str, Any]:
    """The record of a finished series (docs/RECORDS.md, Series records): each round's race
    record id, room round and rows, and the final standings; the server signs it as it signs
    a race record."""
    return {
        "v": RECORD_VERSION,
        "kind": "series",
        "id": sid,
        "room": code,
        "series": dict(option),
        "started_at": started_at,
        "finished_at": finished_at,
        "rounds": [
            {"round": r["round"], "record": r["record"], "rows": [dict(x) for x in r["rows"]]}
            for r in rounds
        ],
        "standings": [{f: row[f] for f in STANDING_FIELDS} for row in final],
    }


def verify_series(record: dict[str, Any], races: dict[str, dict[str, Any] | None]) -> list[str]:
    """Every failure of a series record, given its races' records by id (None: not found),
    each already checked on its own (`record_verify.verify`) by the caller. Checks that each
    round is the race its record says (room, round, first commitment for the id), that the
    rows follow the races' results, and that the standings follow from the rows."""
    fails: list[str] = []
    for name, kind in SERIES_FIELDS.items():
        value = record.get(name)
        if isinstance(value, bool) or not isinstance(value, kind):
            return [f"the series record has no `{name}` of the right type"]
    try:
        option = check_option(record["series"])
    except BadSeries as exc:
        return [f"the series' rule: {exc}"]
    if not record["rounds"]:
        fails.append("the series has no rounds")
    for i, rnd in enumerate(record["rounds"]):
        rid = rnd.get("record")
        race = races.get(rid) if isinstance(rid, str) else None
        if race is None:
            fails.append(f"round {i + 1}: its race record {rid} is missing")
            continue
        if race.get("room") != record["room"] or race.get("round") != rnd.get("round"):
            fails.append(
                f"round {i + 1}: record {rid} is room {race.get('room')} round "
                f"{race.get('round')}, not room {record['room']} round {rnd.get('round')}"
            )
        if i == 0 and series_id(str(race.get("commitment"))) != record["id"]:
            fails.append(f"the series id {record['id']} is not its first race's")
        if round_rows(race.get("players", [])) != rnd.get("rows"):
            fails.append(f"round {i + 1}: its rows are not record {rid}'s results")
        for p in race.get("players", []):
            row = next((r for r in record["standings"] if r.get("seat") == p.get("seat")), None)
            if (
                row is None
                or row.get("name") != p.get("name")
                or row.get("player") != p.get("player")
            ):
                fails.append(
                    f"round {i + 1}: seat {p.get('seat')} is not in the standings as raced"
                )
    if fails:
        return fails
    players = {
        str(r["seat"]): {k: r.get(k) for k in ("name", "player", "bot", "left")}
        for r in record["standings"]
    }
    want = standings(option, record["rounds"], players)
    got = [{f: r.get(f) for f in STANDING_FIELDS} for r in record["standings"]]
    if want != got:
        for w, g in zip(want, got, strict=False):
            if w != g:
                fails.append(f"standings: the rounds give {w}, the record says {g}")
                break
        else:
            fails.append("standings: the rounds give another number of rows")
    return fails
