"""Leaderboards: one Redis sorted set per board, read a page per round trip.

Keys (prefix P; one hash tag per board, so a board's two keys share a slot on a cluster and
one Lua script can touch both):

    P board:{NAME}        zset  member: a public player id; score: the board's order, lowest first
    P board:{NAME}:rows   hash  player id -> the row shown for them (JSON: name, time, moves, ...)

Every board reads lowest score first; a board that ranks the highest first (wins, rating)
stores the negated figure. Scores are doubles, so an order of several parts (time, then
moves) is packed into one number by its caller, exactly below 2**53. Ties fall to the member
order (Redis sorts equal scores by member bytes): stable, if arbitrary.

Why a script and not a pipeline: a page needs the rows of the members the range returns, so
the second read depends on the first; in Lua both run on the server in one round trip, and a
write that keeps only a player's best entry compares and sets in one step, with no WATCH
(which redis-py cannot run on a cluster). Scores cross the script as Redis's own strings both
ways: Lua's number-to-text keeps only 14 digits, too few for a packed order.

Bounds: a board keeps at most `cap` entries (the worst are dropped as better ones come) and
may expire (`ttl_ms`, renewed by each write): nothing a client sends grows one without bound.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from solrace.server.store import keys
from solrace.server.store.redis_conn import Client
from solrace.server.store.scripts import source

#: how a submitted score meets a player's entry already on the board
Keep = Literal["best", "first", "last", "add"]

#: the most entries one page read returns
PAGE_MAX = 100

_SUBMIT = source("board_submit", __package__)

_PAGE = source("board_page", __package__)

_ENTRY = source("board_entry", __package__)


@dataclass(frozen=True)
class Submitted:
    """What a submit did: whether the player's entry is now the one submitted, and its score
    (the board's, after the write: a kept better score, or the new sum)."""

    placed: bool
    score: float


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _row(data: Any) -> dict[str, Any]:
    return json.loads(data) if data else {}


class Boards:
    """Every leaderboard of a deployment, by name (e.g. ``daily:2026-11-23:klondike``)."""

    def __init__(self, redis: Client, prefix: str = "") -> None:
        self.redis = redis
        self.prefix = prefix
        self._submit = redis.register_script(_SUBMIT)
        self._page = redis.register_script(_PAGE)
        self._entry = redis.register_script(_ENTRY)

    def keys(self, name: str) -> list[str]:
        return keys.board(self.prefix, name)

    async def submit(
        self,
        name: str,
        player: str,
        score: float,
        row: dict[str, Any],
        *,
        keep: Keep = "best",
        ttl_ms: int = 0,
        cap: int = 0,
    ) -> Submitted:
        """Put a player's entry on a board: `best` keeps the lower score, `first` the one
        already there, `last` the new one, `add` adds to the score there (counts: wins as -1
        each). The row is replaced whenever the score is. `cap` > 0 keeps only the best `cap`
        entries; `ttl_ms` > 0 (re)sets the board's expiry."""
        args = [player, repr(float(score)), json.dumps(row, separators=(",", ":")), keep]
        placed, kept = await self._submit(keys=self.keys(name), args=[*args, ttl_ms, cap])
        return Submitted(bool(placed), float(_text(kept)))

    async def page(self, name: str, start: int = 0, count: int = 50) -> dict[str, Any]:
        """Entries `start`.. (0-based) in board order, one round trip: `total` entries, each
        entry its `rank` (1-based), `player`, `score` and the row's fields, and `next` (the
        start of the following page, or None)."""
        if start < 0 or not 1 <= count <= PAGE_MAX:
            raise ValueError(f"start >= 0 and 1 <= count <= {PAGE_MAX}")
        total, flat, rows = await self._page(keys=self.keys(name), args=[start, count])
        entries = [
            {
                **_row(data),
                "rank": start + i + 1,
                "player": _text(flat[2 * i]),
                "score": float(_text(flat[2 * i + 1])),
            }
            for i, data in enumerate(rows)
        ]
        after = start + len(entries)
        return {"total": int(total), "entries": entries, "next": after if after < total else None}

    async def entry(self, name: str, player: str) -> dict[str, Any] | None:
        """One player's entry with its rank (None: not on the board)."""
        found = await self._entry(keys=self.keys(name), args=[player])
        if not found:
            return None
        rank, score, data = found
        return {**_row(data), "rank": int(rank) + 1, "player": player, "score": float(_text(score))}

    async def size(self, name: str) -> int:
        return int(await self.redis.zcard(self.keys(name)[0]))
