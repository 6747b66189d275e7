"""Race records: what a finished race leaves behind, in one shape, and its compact stored form.

A record is plain data (the JSON `/api/record/ID` serves, and what `record_text` writes as a
text file and reads back). docs/RECORDS.md is the human contract:

    {"v": 1, "id": "11e7b0f5cd05167d", "game": "klondike", "game_options": {...},
     "options": {"time_limit": 0, "undo": "none", "deal": "any"},
     "seed": 1234567890123, "salt": "9f0c…", "commitment": "11e7…",
     "room": "KX7QF", "round": 1, "starts_at": ms, "finished_at": ms,
     "players": [{"seat": 1, "name": "bob", "player": "q4…" | None, "place": 1,
                  "status": "won", "progress": 1.0, "moves": 47, "time": 93000}, …],  # ranking order
     "moves": {"1": ["t3-f1", …]}, "times": {"1": [2013, …]}}   # ms from starts_at, per move

The id is the first 16 hex digits of the commitment: every race commits a fresh 16-byte salt,
so the id is unique without a counter, and writing a record twice writes the same key.

Stored form (`pack`/`unpack`): zlib of one msgpack array, positional (no field names), with
each seat's moves as one space-joined string and its times as zigzag varint deltas (ms since
the seat's previous move, the first since the start). The ranking rule (`rank`) lives here
too, so the server and a verifier order a race the same way.
"""

from __future__ import annotations

import datetime
import hashlib
import time
import zlib
from collections.abc import Sequence
from typing import Any

import msgpack

RECORD_VERSION = 1
#: hex digits of the commitment that make a record's id
ID_LENGTH = 16
#: race options kept in a record: the ones that change what a seat may do
RACE_OPTIONS = ("time_limit", "undo", "deal")
#: statuses a seat can only get from the server (not from its moves)
OUT_STATUSES = ("resigned", "left", "timeout")
PLAYER_FIELDS = ("seat", "name", "player", "place", "status", "progress", "moves", "time")


def commitment(seed: int, salt: bytes) -> str:
    """sha256(salt bytes + seed as 8 bytes big-endian), hex: published before the race
    (PROTOCOL.md, Fairness); the room commits with it and a verifier checks the reveal."""
    return hashlib.sha256(salt + seed.to_bytes(8, "big")).hexdigest()


def day_end_ms(date: str) -> int:
    """The first ms after the UTC day `date` (YYYY-MM-DD): when a daily deal may be shown."""
    day = datetime.date.fromisoformat(date)
    midnight = datetime.datetime.combine(day, datetime.time(), datetime.UTC)
    return int(midnight.timestamp() * 1000) + 86_400_000


def hidden_until(record: dict[str, Any], now: int | None = None) -> int | None:
    """When a record may be shown (ms), while it may not; None when it may be now.

    A daily race's record holds the day's deal (its seed, and every racer's moves on it):
    anyone who read it before the day ended could play the daily knowing every card. So a
    record with a `daily` date is hidden until that UTC day is over, on every path that
    serves records (the record, its text file, a replay)."""
    date = record.get("daily")
    if not date:
        return None
    reveal = day_end_ms(date)
    at = int(time.time() * 1000) if now is None else now
    return reveal if at < reveal else None


def record_id(commitment: str) -> str:
    return commitment[:ID_LENGTH]


def is_record_id(text: str) -> bool:
    return len(text) == ID_LENGTH and all(c in "0123456789abcdef" for c in text)


# --- ranking ---------------------------------------------------------------------------


def rank(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows (`seat`, `status`, `progress`, `time`) in ranking order, each given its `place`.

    Winners by finish time; the rest by progress (higher first), then by when they reached
    it (earlier first; never: first); ties share a place; the seat only orders rows."""

    def key(row: dict[str, Any]) -> tuple[int, int, float, int]:
        t = row["time"]
        if row["status"] == "won":
            return (0, t or 0, 0.0, 0)
        return (1, 0, -row["progress"], t if t is not None else -1)

    ordered = sorted(rows, key=lambda r: (key(r), r["seat"]))
    out, place, prev = [], 0, None
    for i, row in enumerate(ordered):
        if key(row) != prev:
            place, prev = i + 1, key(row)
        out.append({**row, "place": place})
    return out


# --- compact stored form ----------------------------------------------------------------


def _zigzag(n: int) -> int:
    return n * 2 if n >= 0 else -n * 2 - 1


def _unzigzag(n: int) -> int:
    return n >> 1 if not n & 1 else -((n + 1) >> 1)


def pack_deltas(times: Sequence[int]) -> bytes:
    """Times (ms from the start) as varints of the zigzagged gaps: most moves take 2 bytes."""
    out = bytearray()
    prev = 0
    for t in times:
        n = _zigzag(t - prev)
        prev = t
        while n >= 0x80:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        out.append(n)
    return bytes(out)


def unpack_deltas(data: bytes) -> list[int]:
    out: list[int] = []
    prev, n, shift = 0, 0, 0
    for b in data:
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            prev += _unzigzag(n)
            out.append(prev)
            n, shift = 0, 0
    if shift:
        raise ValueError("a truncated time")
    return out


def pack(record: dict[str, Any]) -> bytes:
    """The stored bytes of a record (about 1.5-3 bytes a move after zlib; docs/RECORDS.md)."""
    players = [[p[f] for f in PLAYER_FIELDS] for p in record["players"]]
    seats = [
        [int(seat), " ".join(moves), pack_deltas(record["times"][seat])]
        for seat, moves in record["moves"].items()
    ]
    body = [
        record["v"],
        record["game"],
        record["game_options"],
        record["options"],
        record["seed"],
        bytes.fromhex(record["salt"]),
        bytes.fromhex(record["commitment"]),
        record["room"],
        record["round"],
        record["starts_at"],
        record["finished_at"],
        players,
        seats,
    ]
    if record.get("daily"):
        body.append([record["daily"], bool(record.get("scored"))])
    return zlib.compress(msgpack.packb(body, use_bin_type=True), 9)


def unpack(data: bytes) -> dict[str, Any]:
    body = msgpack.unpackb(zlib.decompress(data), raw=False, strict_map_key=False)
    (v, game, game_options, options, seed, salt, commit, room, round_, starts, finished) = body[:11]
    if v != RECORD_VERSION:
        raise ValueError(f"record format {v} is not {RECORD_VERSION}")
    moves: dict[str, list[str]] = {}
    times: dict[str, list[int]] = {}
    for seat, text, deltas in body[12]:
        moves[str(seat)] = text.split(" ") if text else []
        times[str(seat)] = unpack_deltas(deltas)
    out: dict[str, Any] = {
        "v": v,
        "id": record_id(commit.hex()),
        "game": game,
        "game_options": game_options,
        "options": options,
        "seed": seed,
        "salt": salt.hex(),
        "commitment": commit.hex(),
        "room": room,
        "round": round_,
        "starts_at": starts,
        "finished_at": finished,
        "players": [dict(zip(PLAYER_FIELDS, row, strict=True)) for row in body[11]],
        "moves": moves,
        "times": times,
    }
    if len(body) > 13:  # a daily race: its date and whether it was the player's scored attempt
        out["daily"], out["scored"] = body[13]
    return out


def summary(record: dict[str, Any], player: str) -> dict[str, Any]:
    """A line of a player's history: the race, and how that player did in it."""
    mine = next((p for p in record["players"] if p["player"] == player), None)
    return {
        "id": record["id"],
        "game": record["game"],
        "game_options": record["game_options"],
        "finished_at": record["finished_at"],
        "players": len(record["players"]),
        "seat": mine and mine["seat"],
        "name": mine and mine["name"],
        "place": mine and mine["place"],
        "status": mine and mine["status"],
        "time": mine and mine["time"],
        "moves": mine and mine["moves"],
    }
