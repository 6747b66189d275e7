"""`/api/replay/ID` bodies: built off the event loop, kept encoded in a small LRU.

A replay (protocol/replay.py) plays every seat's moves on the engine and takes a view after
each: 25-70 ms of CPU for an 8-seat Klondike race (bench/replay.py), too long for the event
loop, which would hold every racer's ack that long. So a body is built in a worker thread,
one at a time (a burst of replay requests takes one core's share, never all of them), each
record once however many ask at the same moment, and kept JSON-encoded and gzipped in an LRU
of the last `size` records: a record never changes, so a kept body never goes stale.

Only shown records are built: a daily race's record is refused before this (`hidden_until`),
and once its day is over it stays shown, so a kept body needs no second check.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from dataclasses import dataclass
from typing import Any

from solrace.protocol.replay import build_replay
from solrace.server.common.lru import LRU

#: replays kept encoded (each 5-60 KB of JSON and a tenth of that gzipped, for 8 seats)
CACHE_SIZE = 32
#: distinct replays waiting to be built at once; more are refused `busy` (bounded memory)
MAX_PENDING = 16


@dataclass(frozen=True)
class Encoded:
    """One replay's body, as JSON and as gzip of the JSON (served when the client accepts it)."""

    json: bytes
    gzip: bytes


class Busy(Exception):
    """Too many replays are waiting to be built: try again in a moment."""


def encode(record: dict[str, Any]) -> Encoded:
    """Build and encode a record's replay (CPU only: runs in a worker thread)."""
    body = json.dumps(build_replay(record), separators=(",", ":")).encode()
    return Encoded(body, gzip.compress(body, 6, mtime=0))


class Replays:
    """Encoded replays by record id: a bounded LRU, and one build per id at a time."""

    def __init__(self, size: int = CACHE_SIZE, max_pending: int = MAX_PENDING) -> None:
        self.max_pending = max_pending
        self.kept: LRU[str, Encoded] = LRU(size)
        self.pending: dict[str, asyncio.Future[Encoded]] = {}
        self.turn = asyncio.Semaphore(1)
        self.builds = 0  # how many were built (the tests read it: a kept body is not rebuilt)

    def cached(self, rid: str) -> Encoded | None:
        return self.kept.get(rid)

    async def build(self, rid: str, record: dict[str, Any]) -> Encoded:
        """The replay of `record` (id `rid`; the caller checked it may be shown): the kept
        body, or the one being built, or a new build. Raises Busy when too many wait."""
        found = self.cached(rid)
        if found is not None:
            return found
        waiting = self.pending.get(rid)
        if waiting is not None:
            return await asyncio.shield(waiting)
        if len(self.pending) >= self.max_pending:
            raise Busy
        future: asyncio.Future[Encoded] = asyncio.get_running_loop().create_future()
        self.pending[rid] = future
        try:
            async with self.turn:
                built = await asyncio.to_thread(encode, record)
            self.builds += 1
            self.keep(rid, built)
            future.set_result(built)
            return built
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # marked retrieved: maybe nobody else waits
            raise
        finally:
            del self.pending[rid]

    def keep(self, rid: str, body: Encoded) -> None:
        self.kept.put(rid, body)
