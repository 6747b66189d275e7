"""Checking a race record on its own: its shape, the commitment, every move, and the results.

First its shape (`structure`): every field there with its type, a known format, at least one
seat and each seat once, each seat's moves and times listed and as long as each other, move
times never going back and within the start, the finish and the time limit, the finish not
before the start. A record that fails these is not replayed.

What anyone can check with the engine alone, trusting nothing the server says but the
commitment it published before the race: that the revealed seed and salt are what it
committed to, that every seat's moves are legal on that deal in that order, and that each
seat's status, progress, move count, time and place follow from its moves and times (the
statuses `resigned`, `left`, `timeout` come from the server; a verifier checks only that such
a seat had neither won nor run out of moves).

None of this tells the server's record from a forgery: anyone can make up a race that checks
out. The server's signature does (protocol/record_sign.py); `solrace verify` checks both.
"""

from __future__ import annotations

from typing import Any

from solrace.engine import EngineError, new_game
from solrace.protocol.records import (
    OUT_STATUSES,
    RECORD_VERSION,
    commitment,
    rank,
    record_id,
)


class NotARecord(ValueError):
    """The data is not a race record at all (a field missing or of the wrong type, a format
    this verifier does not know): says which."""


#: the record's fields and their types (bool is not an int here)
_TOP: dict[str, type | tuple[type, ...]] = {
    "v": int,
    "id": str,
    "game": str,
    "game_options": dict,
    "options": dict,
    "seed": int,
    "salt": str,
    "commitment": str,
    "room": str,
    "round": int,
    "starts_at": int,
    "finished_at": int,
    "players": list,
    "moves": dict,
    "times": dict,
}
_OPTIONS: dict[str, type | tuple[type, ...]] = {"time_limit": int, "undo": str, "deal": str}
_PLAYER: dict[str, type | tuple[type, ...]] = {
    "seat": int,
    "name": str,
    "player": (str, type(None)),
    "place": int,
    "status": str,
    "progress": (int, float),
    "moves": int,
    "time": (int, type(None)),
}


def _typed(where: str, data: Any, fields: dict[str, type | tuple[type, ...]]) -> None:
    if not isinstance(data, dict):
        raise NotARecord(f"{where} is not a JSON object")
    for name, kind in fields.items():
        if name not in data:
            raise NotARecord(f"{where} has no `{name}`")
        value = data[name]
        if isinstance(value, bool) or not isinstance(value, kind):
            raise NotARecord(f"{where}: `{name}` is {value!r}, not of the right type")


def structure(record: Any) -> list[str]:
    """The record's shape: NotARecord when it is not a record at all, else each structural
    failure, one line each (empty: a record of the right shape, ready to replay)."""
    _typed("the record", record, _TOP)
    if record["v"] != RECORD_VERSION:
        raise NotARecord(
            f"record format {record['v']} is not one this verifier knows ({RECORD_VERSION})"
        )
    _typed("the record's options", record["options"], _OPTIONS)
    for i, p in enumerate(record["players"]):
        _typed(f"player row {i + 1}", p, _PLAYER)
    fails: list[str] = []
    start, finish = record["starts_at"], record["finished_at"]
    duration = finish - start
    if duration < 0:
        fails.append(f"the race finishes {-duration} ms before it starts")
    limit = record["options"]["time_limit"] * 1000
    if limit < 0:
        fails.append(f"the time limit is {limit // 1000} s")
    if not record["players"]:
        fails.append("the record has no seats: a race needs at least one")
    seats = [str(p["seat"]) for p in record["players"]]
    for seat in sorted(set(seats), key=seats.index):
        if seats.count(seat) > 1:
            fails.append(f"seat {seat} is listed {seats.count(seat)} times")
    for name in ("moves", "times"):
        for seat in record[name]:
            if seat not in seats:
                fails.append(f"seat {seat} has {name} but is not one of the players")
    for p in record["players"]:
        seat = str(p["seat"])
        fails += _seat_structure(record, seat, p, max(duration, 0), limit)
    return fails


def _seat_structure(
    record: dict[str, Any], seat: str, p: dict[str, Any], duration: int, limit: int
) -> list[str]:
    moves, times = record["moves"].get(seat), record["times"].get(seat)
    if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
        return [f"seat {seat}: no list of moves"]
    if not isinstance(times, list) or not all(
        isinstance(t, int) and not isinstance(t, bool) for t in times
    ):
        return [f"seat {seat}: no list of move times"]
    if len(moves) != len(times):
        return [f"seat {seat}: {len(moves)} moves but {len(times)} times"]
    fails = []
    if p["place"] < 1:
        fails.append(f"seat {seat}: place {p['place']}")
    prev = 0
    for i, t in enumerate(times):
        if t < prev:
            fails.append(
                f"seat {seat}: move {i + 1} is at {t} ms, before "
                + (f"move {i}'s {prev} ms" if i else "the start")
            )
            break
        prev = t
    last = times[-1] if times else 0
    if last > duration:
        fails.append(
            f"seat {seat}: its last move is at {last} ms, after the race finished ({duration} ms)"
        )
    if limit > 0 and last >= limit:
        fails.append(
            f"seat {seat}: its last move is at {last} ms, at or past the time limit ({limit} ms)"
        )
    if p["time"] is not None and not 0 <= p["time"] <= duration:
        fails.append(f"seat {seat}: its time {p['time']} ms is outside the race (0-{duration} ms)")
    return fails


def verify(record: dict[str, Any]) -> list[str]:
    """Every failure found, one line each (empty: the record checks out); NotARecord when it
    is not a record at all."""
    fails = structure(record)
    if fails:
        return fails  # a record of the wrong shape: replaying it proves nothing
    fails = _check_commitment(record)
    if fails:
        return fails  # a deal nobody committed to: replaying it proves nothing
    rows = []
    for p in record["players"]:
        seat = str(p["seat"])
        moves = record["moves"].get(seat, [])
        times = record["times"].get(seat, [])
        found, row = _replay_seat(record, seat, moves, times)
        fails += found
        if row is None:
            continue
        fails += _check_row(seat, p, row)
        rows.append({**row, "seat": p["seat"]})
    if not fails:
        places = {r["seat"]: r["place"] for r in rank(rows)}
        for p in record["players"]:
            if places.get(p["seat"]) != p["place"]:
                fails.append(
                    f"seat {p['seat']}: place is {p['place']}, the results give {places.get(p['seat'])}"
                )
        order = [p["seat"] for p in rank([{**r, "place": 0} for r in rows])]
        if [p["seat"] for p in record["players"]] != order:
            fails.append(f"players are not in ranking order (that is seats {order})")
    return fails


def _check_commitment(record: dict[str, Any]) -> list[str]:
    try:
        want = commitment(record["seed"], bytes.fromhex(record["salt"]))
    except (ValueError, OverflowError) as exc:
        return [f"seed or salt is malformed: {exc}"]
    fails = []
    if want != record["commitment"]:
        fails.append(
            f"commitment: sha256(salt + seed) is {want}, the record's commitment is {record['commitment']}"
        )
    if record["id"] != record_id(record["commitment"]):
        fails.append(
            f"record id {record['id']} is not the commitment's {record_id(record['commitment'])}"
        )
    return fails


def _replay_seat(
    record: dict[str, Any], seat: str, moves: list[str], times: list[int]
) -> tuple[list[str], dict[str, Any] | None]:
    """Play the seat's moves on the committed deal: its final line, or why not."""
    if len(moves) != len(times):
        return [f"seat {seat}: {len(moves)} moves but {len(times)} times"], None
    try:
        game = new_game(record["game"], record["seed"], record["game_options"])
    except EngineError as exc:
        return [f"the deal cannot be made: {exc}"], None
    home0 = game.home()
    homes = []
    for i, move in enumerate(moves):
        try:
            game.play(move)
        except EngineError as exc:
            return [f"seat {seat}: move {i + 1} {move!r} is illegal: {exc}"], None
        homes.append(game.home())
    # the time it first reached the home count it ended with (the server's rule), if it moved on
    final = game.home()
    reached = None if final == home0 else times[homes.index(final)]
    status = "won" if game.is_won() else "dead" if game.is_dead() else None
    return [], {
        "status": status,
        "progress": game.progress(),
        "moves": len(moves),
        "time": reached,
    }


def _check_row(seat: str, p: dict[str, Any], row: dict[str, Any]) -> list[str]:
    fails = []
    if row["status"] is None:
        if p["status"] not in OUT_STATUSES:
            fails.append(f"seat {seat}: status is {p['status']}, but its moves neither win nor end")
        row["status"] = p["status"]
    elif row["status"] != p["status"]:
        fails.append(f"seat {seat}: status is {p['status']}, its moves give {row['status']}")
    for key in ("progress", "moves", "time"):
        if row[key] != p[key]:
            fails.append(f"seat {seat}: {key} is {p[key]}, its moves give {row[key]}")
    return fails
