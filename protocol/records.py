"""Race records: what a finished race leaves behind, in one shape, and its compact stored form.

A record is plain data (the JSON `/api/record/ID` serves, and what `record_text` writes as a
text file and reads back). docs/RECORDS.md is the human contract:

    {"v": 1, "id": "11e7b0f5cd05167d", "game": "klondike", "game_options": {...},
     "options": {"time_limit": 0, "undo": "none", "deal": "any"},
     "seed": 1234567890123, "salt": "9f0c…", "commitment": "11e7…",
     "room": "KX7QF", "round": 1, "starts_at": ms, "finished_at": ms,
     "players": [{"seat": 1, "name": "bob", "player": "q4…" | None, "place": 1,
                  "status": "won", "progress": 1.0, "moves": 47, "time": 93000}, …],  # ranking order
     "moves": {"1": ["t3-f1", …]}, "times": {"1": [2013, …]},   # ms from starts_at, per move
     "signature": "ed25519:KEYID:BASE64"}   # the server's (protocol/record_sign.py); old: none

The id is the first 16 hex digits of the commitment: every race commits a fresh 16-byte salt,
so the id is unique without a counter, and writing a record twice writes the same key.

Stored form (`pack`/`unpack`, docs/RECORDS.md): form 2 is zlib of one msgpack array,
positional (no field names), each seat's moves coded by their index among the engine's legal
moves (so packing and unpacking replay the race: the protocol layer uses the engine, as
record_verify does), then the move times as Rice codes (protocol/record_times.py); form 1
(moves as text, varint times) is still read. A signed record's signature
(protocol/record_sign.py) is stored as its 8-byte key id and 64 bytes after the other fields.
The ranking rule (`rank`) lives here too, so the server and a verifier order a race the same way.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import time
import zlib
from collections.abc import Sequence
from typing import Any

import msgpack
from solrace.engine import EngineError, new_game
from solrace.protocol.record_sign import FIELD as SIGNATURE
from solrace.protocol.record_sign import pack_signature, unpack_signature
from solrace.protocol.record_times import (
    RiceReader,
    bits_to_bytes,
    bytes_to_bits,
    gaps,
    pack_deltas,
    rice_bits,
    rice_parameter,
    unpack_deltas,
)

#: the record's shape (its `v`): the same plain data whatever form stored it
RECORD_VERSION = 1
#: the stored form `pack` writes, and the ones `unpack` reads
FORMAT = 2
FORMATS = (1, 2)
#: a move code is one byte: 0 for a move kept as text, else 1 + its legal-move index
MAX_CODE = 255
#: hex digits of the commitment that make a record's id
ID_LENGTH = 16
#: race options kept in a record: the ones that change what a seat may do
RACE_OPTIONS = ("time_limit", "undo", "deal")
#: statuses a seat can only get from the server (not from its moves)
OUT_STATUSES = ("resigned", "left", "timeout")
PLAYER_FIELDS = ("seat", "name", "player", "place", "status", "progress", "moves", "time")
#: the top-level fields the stored form keeps by position; any other is kept by name
RECORD_FIELDS = frozenset(
    [
        "v",
        "id",
        "game",
        "game_options",
        "options",
        "seed",
        "salt",
        "commitment",
        "room",
        "round",
        "starts_at",
        "finished_at",
        "players",
        "moves",
        "times",
    ]
)


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


def pack(record: dict[str, Any], form: int = FORMAT) -> bytes:
    """The stored bytes of a record (docs/RECORDS.md, Stored form). Form 2: zlib of one
    msgpack array, then the seats' move times as Rice codes (random bits: not compressed);
    each seat's moves as their indexes among the legal moves of the position they were
    played in, a commitment that follows from the seed and salt left out, player ids as
    their 10 bytes, and any field this module does not know kept as it is. `form=1` writes
    the first form (text moves, varint times, known fields only), kept for the benchmark
    and the tests that read old records."""
    moves = {str(seat): list(ms) for seat, ms in record["moves"].items()}
    if form < 2:
        players = [[p[f] for f in PLAYER_FIELDS] for p in record["players"]]
        seats = [[int(s), " ".join(ms), pack_deltas(record["times"][s])] for s, ms in moves.items()]
        body = [*_head(record, 1), players, seats]
        if record.get("daily"):  # form 1's daily race: its date and the scored attempt
            body.append([record["daily"], bool(record.get("scored"))])
        return zlib.compress(msgpack.packb(body, use_bin_type=True), 9)
    rows, bits = [], []
    for seat, ms in moves.items():
        codes, texts = _pack_moves(record, ms)
        times: bytes | int = pack_deltas(record["times"][seat])
        seat_gaps = gaps(record["times"][seat])
        if min(seat_gaps, default=0) >= 0:  # a clock that stepped back keeps the varints
            times = rice_parameter(seat_gaps)
            bits.append(rice_bits(seat_gaps, times))
        rows.append([int(seat), codes, texts, times])
    head = _head(record, form)
    if head[6] == bytes.fromhex(commitment(record["seed"], head[5])):
        head[6] = None
    body = [
        *head,
        [_pack_player(p) for p in record["players"]],
        rows,
        _moves_check(moves),
        {k: v for k, v in record.items() if k not in RECORD_FIELDS and k != SIGNATURE},
    ]
    if record.get(SIGNATURE) is not None:  # its key id and signature, 72 bytes
        body.append(pack_signature(record[SIGNATURE]))
    return zlib.compress(msgpack.packb(body, use_bin_type=True), 9) + bits_to_bytes("".join(bits))


def _head(record: dict[str, Any], form: int) -> list[Any]:
    """The form and the race's fields, by position (both forms)."""
    return [
        form,
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
    ]


def _pack_player(p: dict[str, Any]) -> list[Any]:
    """A player's row: its known fields by position (a player id as its 10 bytes), then any
    others as a map (if there are)."""
    row = [p[f] for f in PLAYER_FIELDS]
    pid = p["player"]
    if isinstance(pid, str) and len(pid) == 16 and pid.islower():
        raw = _b32(pid)
        if raw is not None and base64.b32encode(raw).decode().lower() == pid:
            row[2] = raw
    extra = {k: v for k, v in p.items() if k not in PLAYER_FIELDS}
    return [*row, extra] if extra else row


def _b32(text: str) -> bytes | None:
    try:
        return base64.b32decode(text.upper())
    except ValueError:
        return None


def _pack_moves(record: dict[str, Any], moves: Sequence[str]) -> tuple[bytes | str, list[str]]:
    """A seat's moves as codes: 1 + the move's index in `legal_moves()` of the position it was
    played in (RULES.md section 7 fixes that order), or 0 for the next of the returned texts (a
    move with no code: not in the list as written, or index 255 and up). A move the engine
    refuses, or a deal it cannot make, keeps the seat as one space-joined text (form 1)."""
    try:
        game = new_game(record["game"], record["seed"], record["game_options"])
    except EngineError:
        return " ".join(moves), []
    codes, texts = bytearray(), []
    for text in moves:
        legal = game.legal_moves()
        index = next((i for i, m in enumerate(legal) if m.text == text), None)
        if index is not None and index < MAX_CODE:
            codes.append(index + 1)
            game.apply(legal[index])
            continue
        try:
            game.play(text)
        except EngineError:
            return " ".join(moves), []
        codes.append(0)
        texts.append(text)
    return bytes(codes), texts


def _unpack_moves(record: dict[str, Any], codes: bytes | str, texts: list[str]) -> list[str]:
    if isinstance(codes, str):
        return codes.split(" ") if codes else []
    game = new_game(record["game"], record["seed"], record["game_options"])
    out, spare = [], iter(texts)
    try:
        for code in codes:
            if code:
                move = game.legal_moves()[code - 1]
                game.apply(move)
                out.append(move.text)
            else:
                text = next(spare)
                game.play(text)
                out.append(text)
    except (IndexError, StopIteration) as exc:
        raise ValueError(f"a move code does not read back: {exc!r}") from exc
    return out


def _moves_check(moves: dict[str, list[str]]) -> int:
    """CRC-32 of every seat's move text: a stored code read back through an engine whose move
    order changed fails loudly instead of giving other moves."""
    return zlib.crc32("\n".join(f"{s}:{' '.join(ms)}" for s, ms in moves.items()).encode())


def unpack(data: bytes, *, moves: bool = True) -> dict[str, Any]:
    """A record from its stored bytes (form 1 or 2). `moves=False` leaves out `moves` and
    `times` (a history page needs only the rest, and form 2's moves cost a replay)."""
    inflate = zlib.decompressobj()
    body = msgpack.unpackb(inflate.decompress(data), raw=False, strict_map_key=False)
    if not inflate.eof:
        raise ValueError("a truncated record")
    (v, game, game_options, options, seed, salt, commit, room, round_, starts, finished) = body[:11]
    if v not in FORMATS:
        raise ValueError(f"record format {v} is not one of {FORMATS}")
    commit_hex = commitment(seed, salt) if commit is None else commit.hex()
    record: dict[str, Any] = {
        "v": RECORD_VERSION,
        "id": record_id(commit_hex),
        "game": game,
        "game_options": game_options,
        "options": options,
        "seed": seed,
        "salt": salt.hex(),
        "commitment": commit_hex,
        "room": room,
        "round": round_,
        "starts_at": starts,
        "finished_at": finished,
        "players": [_unpack_player(row) for row in body[11]],
    }
    if v >= 2:
        record.update(body[14])
        if len(body) > 15:  # a signed record (records stored before signing have no slot)
            record[SIGNATURE] = unpack_signature(body[15])
    elif len(body) > 13:  # form 1's daily race: its date and whether it was the scored attempt
        record["daily"], record["scored"] = body[13]
    if not moves:
        return record
    record["moves"], record["times"] = {}, {}
    bits = RiceReader(bytes_to_bits(inflate.unused_data))
    for seat, codes, *rest in body[12]:
        texts, times = rest if v >= 2 else ([], rest[0])
        ms = record["moves"][str(seat)] = _unpack_moves(record, codes, texts)
        record["times"][str(seat)] = (
            unpack_deltas(times) if isinstance(times, bytes) else bits.times(len(ms), times)
        )
    if v >= 2 and _moves_check(record["moves"]) != body[13]:
        raise ValueError(
            "the record's moves do not read back as stored (has the move order changed?)"
        )
    return record


def _unpack_player(row: list[Any]) -> dict[str, Any]:
    player = dict(zip(PLAYER_FIELDS, row[: len(PLAYER_FIELDS)], strict=True))
    if isinstance(player["player"], bytes):
        player["player"] = base64.b32encode(player["player"]).decode().lower()
    if len(row) > len(PLAYER_FIELDS):
        player.update(row[len(PLAYER_FIELDS)])
    return player


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
