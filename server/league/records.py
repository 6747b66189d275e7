"""Race records in Redis: every finished race kept, and each player's history of them.

Keys (prefix P; each hash tag is its own, so records and players spread over a cluster's
slots, and nothing here shares a slot with a room):

    P record:{ID}             str   the record, packed (protocol/records.py `pack`), kept for the
                                    retention (`--record-days`; 0: for good)
    P series:{ID}             str   a series record, JSON, signed (protocol/series.py), kept as
                                    long as the records; written with its last race's record
                                    (under that race's reminder), or at the host's end_series
    P player:{PID}            hash  name (the last one used), seen (ms: when the newest race
                                    finished); written with the player's first finished keyed
                                    race, never at `hello` (a stranger makes keys for free)
    P player:{PID}:races      zset  record ids scored by when the race finished; the newest
                                    HISTORY_MAX, none older than the retention

Each record is signed with the server's key before it is packed (`seal`; server/league/signing.py,
docs/RECORDS.md): the signature is stored with it. A record is written after the commit that stored the race's results, by the process that
stored them (the same hook as the solver's verdicts), in one pipeline: SET NX (the id comes
from the commitment, so a second write is the same record and changes nothing) and each
keyed player's history. A failed write is retried a few times in the background; a process
killed between the results and the record loses the record (the results stay in the room).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from solrace.protocol.record_sign import signed
from solrace.protocol.records import (
    PLAYER_FIELDS,
    RACE_OPTIONS,
    RECORD_VERSION,
    pack,
    record_id,
    summary,
    unpack,
)
from solrace.protocol.series import is_series_record, series_record
from solrace.server.common.codes import shown
from solrace.server.common.metrics import METRICS
from solrace.server.common.retry import retrying
from solrace.server.rules.room import Room
from solrace.server.store import keys
from solrace.server.store.redis_conn import Client
from solrace.server.store.store import Store

log = logging.getLogger("solrace.server")

#: record ids a player's history keeps (the newest)
HISTORY_MAX = 500
DEFAULT_RECORD_DAYS = 90
#: ms after a race's results are committed when its record's reminder fires, unless the
#: record was written first (longer than the writer's retries, ~8 s)
RECORD_DUE_MS = 15_000


def reminder(code: str, round_: int) -> str:
    """The deadline member (server/store/store.py) that says a race's record is still owed."""
    return f"record|{code}|{round_}"


def build_record(room: Room) -> dict[str, Any]:
    """The record of the race the room has just finished (its results are in the document)."""
    d = room.doc
    start = d["starts_at"]
    opts = d["options"]
    daily = {"daily": d["daily"]["date"], "scored": d["daily"]["scored"]} if d.get("daily") else {}
    return {
        "v": RECORD_VERSION,
        "id": record_id(d["commitment"]),
        "game": opts["game"],
        "game_options": dict(opts["game_options"]),
        "options": {k: opts[k] for k in RACE_OPTIONS},
        "seed": d["seed"],
        "salt": d["salt"],
        "commitment": d["commitment"],
        # a private room's code is its link's secret, and records are public: only its start
        "room": shown(d["code"]),
        "round": d["round"],
        "starts_at": start,
        "finished_at": d["finished_at"],
        "players": [{f: row.get(f) for f in PLAYER_FIELDS} for row in d["results"]["ranking"]],
        "moves": {str(s): [e.move for e in r.entries] for s, r in sorted(room.races.items())},
        "times": {str(s): [e.at - start for e in r.entries] for s, r in sorted(room.races.items())},
        **daily,
    }


def build_series_record(room: Room) -> dict[str, Any] | None:
    """The record of the room's series, if it has ended with at least one round."""
    series = room.doc.get("series")
    view = room.series_view()
    if series is None or view is None or series["ended_at"] is None or not series["rounds"]:
        return None
    return series_record(
        shown(room.code),  # as the race records show it: a private room's code is its key
        series["id"],
        series["option"],
        series["rounds"],
        view["standings"],
        series["started_at"],
        series["ended_at"],
    )


class Records:
    """The records and the players' histories (the HTTP API reads them, the recorder writes)."""

    def __init__(
        self,
        redis: Client,
        prefix: str = "",
        *,
        days: int = DEFAULT_RECORD_DAYS,
        deadlines: Store | None = None,
        due_ms: int = RECORD_DUE_MS,
        also: Callable[[Room], Callable[[], Awaitable[None]] | None] | None = None,
    ) -> None:
        self.redis = redis
        #: how long after the results a record's reminder is due (`serve --record-due`)
        self.due_ms = due_ms
        self.prefix = prefix
        self.keep_ms = days * 86_400_000
        self.tasks: set[asyncio.Task[Any]] = set()
        #: where a record's reminder is kept (the store's deadlines; None: no reminders)
        self.deadlines = deadlines
        #: what else a finished race owes before its reminder is removed (the standings:
        #: `Standings.owed`), so a process dying after the record but before them loses nothing
        self.also: Callable[[Room], Callable[[], Awaitable[None]] | None] = also or (
            lambda room: None
        )
        #: the key every record is signed with (server/league/signing.py; the transport loads it at
        #: start-up): None only for a Records used without a server (its records unsigned)
        self.signer: Ed25519PrivateKey | None = None

    def record_key(self, rid: str) -> str:
        return keys.record(self.prefix, rid)

    def player_key(self, pid: str) -> str:
        return keys.player(self.prefix, pid)

    def history_key(self, pid: str) -> str:
        return keys.player(self.prefix, pid, "races")

    # --- writing ------------------------------------------------------------------------

    async def owe(self, room: Room) -> None:
        """Before a race's results are committed: a reminder in Redis (a deadline any live
        process fires, server/net/supervisor.py) that its record is due. The writer removes it
        once the record is stored; if the writer dies first, whoever fires it writes the
        record from the room (`service.owed_record`)."""
        if self.deadlines is not None and room.doc["seed"] is not None:
            await self.deadlines.add_deadline(
                reminder(room.code, room.doc["round"]), int(time.time() * 1000) + self.due_ms
            )

    async def settle(self, room: Room) -> None:
        """A finished round is giving way to the next (a rematch clears its moves): its
        record, if still owed, is written now, while the moves are there."""
        if self.deadlines is None or room.doc["results"] is None:
            return
        if await self.deadlines.deadline_at(reminder(room.code, room.doc["round"])) is not None:
            await self.write_now(room)

    async def write_now(self, room: Room) -> None:
        """The record of the room's finished race and what else it owes (`also`), written now
        (one try; raises), and its reminder removed."""
        record = build_record(room)
        also = self._owed(room)
        await self.save(record)
        if also is not None:
            await also()
        await self._paid(room.code, record)

    async def _paid(self, code: str, record: dict[str, Any]) -> None:
        if self.deadlines is not None:
            await self.deadlines.remove_deadline(reminder(code, record["round"]))

    def finished(self, room: Room) -> None:
        """The service's hook as a race's results are stored: build now (a rematch changes
        the cached games), write in the background; and the series' record if that race
        ended its series."""
        if room.doc["seed"] is None or room.doc["results"] is None:
            return
        task = asyncio.ensure_future(self._write(room.code, build_record(room), self._owed(room)))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _owed(self, room: Room) -> Callable[[], Awaitable[None]] | None:
        """What a finished race owes besides its record, under its reminder: the standings
        (`also`) and, when the race ended its room's series, the series' record."""
        standings = self.also(room)
        series = room.doc.get("series")
        record = None
        if series is not None and series["ended_at"] == room.doc["finished_at"]:
            record = build_series_record(room)
        if record is None:
            return standings

        async def both() -> None:
            if standings is not None:
                await standings()
            await self.save_series(record)

        return both

    def series_ended(self, room: Room) -> None:
        """The host ended a series between races (`end_series`): its record, signed, written
        in the background (a few tries; a series ended by its last race's results is written
        with that race's record instead, under its reminder: `_owed`)."""
        record = build_series_record(room)
        if record is None:
            return
        what = f"series record {record['id']}"
        task = asyncio.ensure_future(
            retrying(lambda: self.save_series(record), what, _failed("records"))
        )
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def save_series(self, record: dict[str, Any]) -> None:
        """A series record, signed, stored once (SET NX: the id is fixed by its first race)."""
        if self.signer is not None:
            record = signed(record, self.signer)
        data = json.dumps(record, separators=(",", ":")).encode()
        await self.redis.set(
            keys.series(self.prefix, record["id"]), data, nx=True, px=self.keep_ms or None
        )
        log.info("series record %s stored (%d rounds)", record["id"], len(record["rounds"]))

    async def get_series(self, sid: str) -> dict[str, Any] | None:
        data = await self.redis.get(keys.series(self.prefix, sid))
        if not isinstance(data, bytes):
            return None
        record = json.loads(data)
        return record if is_series_record(record) else None

    async def _write(
        self,
        code: str,
        record: dict[str, Any],
        also: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Each step retried on its own (each is idempotent); the reminder goes only once all
        are done, else whoever fires it does them again (`write_now`)."""
        what = f"record {record['id']}"
        if not await retrying(lambda: self.save(record), what, _failed("records")):
            return
        if also is not None and not await retrying(
            also, f"{what}: standings", _failed("standings")
        ):
            return
        await retrying(lambda: self._paid(code, record), what, _failed("records"))

    async def save(self, record: dict[str, Any]) -> None:
        """The record, and its id in the history of each player who raced with a key.
        Packing replays the race with the engine (~10-20 ms of CPU for an 8-player Klondike
        race): in a thread, so the event loop keeps its turns (the GIL switches every 5 ms)."""
        await self.save_packed(*await asyncio.to_thread(self.seal, record))

    def seal(self, record: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """The record signed with the server's key (when it has one: `signer`), and packed."""
        if self.signer is not None:
            record = signed(record, self.signer)
        return record, pack(record)

    async def save_packed(self, record: dict[str, Any], data: bytes) -> None:
        """`save` with the record packed already."""
        pipe = self.redis.pipeline(transaction=False)
        self.queue(pipe, record, data)
        await pipe.execute()
        log.info("record %s stored (%d bytes)", record["id"], len(data))

    def queue(self, pipe: Any, record: dict[str, Any], data: bytes) -> None:
        """A packed record's writes, added to a pipeline (the memory benchmark queues many
        records to one; only `id`, `finished_at` and `players` are read here)."""
        rid, at = record["id"], record["finished_at"]
        pipe.set(self.record_key(rid), data, nx=True, px=self.keep_ms or None)
        for p in record["players"]:
            if p["player"] is None:
                continue
            pkey, hkey = self.player_key(p["player"]), self.history_key(p["player"])
            pipe.zadd(hkey, {rid: at})
            pipe.zremrangebyrank(hkey, 0, -(HISTORY_MAX + 1))
            # the player's entry is made here, with a race to keep, never at `hello`
            pipe.hset(pkey, mapping={"name": p["name"], "seen": at})
            if self.keep_ms:
                pipe.zremrangebyscore(hkey, "-inf", f"({at - self.keep_ms}")
                pipe.pexpire(hkey, self.keep_ms)
                pipe.pexpire(pkey, self.keep_ms)

    async def flush(self, timeout: float = 5.0) -> None:
        """Shutting down: let the writes under way finish (a bounded wait)."""
        if self.tasks:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*self.tasks, return_exceptions=True), timeout)

    # --- reading ------------------------------------------------------------------------

    async def get(self, rid: str) -> dict[str, Any] | None:
        data = await self.redis.get(self.record_key(rid))
        # unpacking replays the race (as `save` packs it): in a thread too
        return await asyncio.to_thread(unpack, data) if isinstance(data, bytes) else None

    async def player(self, pid: str, limit: int = 50) -> dict[str, Any] | None:
        """A player's page: the name last used and the newest races (None: never seen)."""
        pipe = self.redis.pipeline(transaction=False)  # one hash tag: one node
        pipe.hget(self.player_key(pid), "name")
        pipe.exists(self.player_key(pid))
        pipe.zrevrange(self.history_key(pid), 0, limit - 1)
        pipe.zcard(self.history_key(pid))
        name, exists, ids, total = await pipe.execute()
        if not exists:
            return None
        races = []
        if ids:
            reads = self.redis.pipeline(transaction=False)
            for rid in ids:
                reads.get(self.record_key(rid.decode() if isinstance(rid, bytes) else rid))
            for data in await reads.execute():
                if isinstance(data, bytes):  # None: expired since, its id goes at the next write
                    races.append(summary(unpack(data, moves=False), pid))
        return {
            "player": pid,
            "name": name.decode() if isinstance(name, bytes) else name,
            "races": races,
            "total": int(total),
        }


def _failed(where: str) -> Callable[[], None]:
    """Counts a failed background write in redis_errors{where} (the label set is made at the
    first failure: a server whose writes never fail exports none)."""
    return lambda: METRICS.redis_errors.labels(where).inc()
