"""Checking a race record on its own: the commitment, every move, and the results.

What anyone can check with the engine alone, trusting nothing the server says but the
commitment it published before the race: that the revealed seed and salt are what it
committed to, that every seat's moves are legal on that deal in that order, and that each
seat's status, progress, move count, time and place follow from its moves and times (the
statuses `resigned`, `left`, `timeout` come from the server; a verifier checks only that such
a seat had neither won nor run out of moves).
"""

from __future__ import annotations

from typing import Any

from solrace.engine import EngineError, new_game
from solrace.protocol.records import OUT_STATUSES, commitment, rank, record_id


def verify(record: dict[str, Any]) -> list[str]:
    """Every failure found, one line each (empty: the record checks out)."""
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
