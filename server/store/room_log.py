"""A room's durable, fenced log: the document (commit, load), each seat's moves (the lease
holder's lean append, the checked append, a lost answer's outcome) and the numbered event
stream a client catches up from. The store's module docstring has the key layout."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from redis.exceptions import ResponseError
from solrace.protocol.messages import decode_trusted, encode
from solrace.server.common.codes import shown
from solrace.server.common.metrics import METRICS
from solrace.server.store.base import ACTIVE_TTL_MS, ScriptArg, StoreBase, as_bytes, as_text
from solrace.server.store.batch import Batcher
from solrace.server.store.scripts import FOLD_EVERY, append_script, folding, owned_script

log = logging.getLogger("solrace.server")

#: how many seats' lean-append keys the store keeps made (`RoomLog.append_owned`)
OWNED_KEYS_KEPT = 4096


class Conflict(Exception):
    """The store refused a write made against an old version; reload and try again.

    Handled inside the server (the caller reloads and retries), never sent to a client: what
    a client is told is a `solrace.protocol.messages.ProtocolError`."""

    def __init__(self, what: str, have: int) -> None:
        super().__init__(f"{what} changed (now {have})")
        self.what = what
        self.have = have
        METRICS.redis_retries.labels("conflict").inc()  # the caller reloads and tries again


class Appended(NamedTuple):
    """What a stored move left behind: the log's length and revision, the event's number, and
    how many spectators the room had then (the board went out only if there were some)."""

    length: int
    rev: int
    n: int
    spectators: int


@dataclass(slots=True)
class QueuedAppend:
    """A move's `XADD` in the turn's pipeline (`RoomLog.queue_native`): its reply's future,
    and what the reply needs to become the move's `Appended`."""

    future: asyncio.Future[Any]
    code: str
    event: dict[str, Any]
    #: an undo (the seat log's last entry taken back), not a move added
    pop: bool
    #: the room's last event number in the copy: the move's event is numbered after it
    last: int
    #: the seat log's revision and length in the copy
    rev: int
    length: int


@dataclass
class Loaded:
    """A room as stored: its document and version, and each seat's log with its revision."""

    doc: dict[str, Any]
    ver: int
    logs: dict[int, list[bytes]]
    revs: dict[int, int]
    seq: int
    #: the fence's `sync` as of this cut (b"": the room has no fence yet): what the lease
    #: holder's lean appends carry (`Store.append_owned`), and its tail's name
    #: (`Store.append_native`)
    sync: bytes = b""
    #: whether a process other than this one listens to the room (the fence's `here`; True
    #: when unknown): the lease holder then publishes its moves (`append_owned`), else it
    #: stores each with one native command (`append_native`)
    others: bool = True


class RoomLog(StoreBase):
    """The room document, the seats' move logs and the event stream."""

    def _init_room_log(self, finished_ttl: int) -> None:
        self.finished_ttl_ms = finished_ttl * 1000
        self._commit = self._script(folding("commit", self.max_events, ACTIVE_TTL_MS))
        self._append = self._script(append_script(self.max_events, ACTIVE_TTL_MS))
        self._owned = self._script(owned_script(self.max_events, ACTIVE_TTL_MS))
        self._outcome = self._script(folding("outcome", self.max_events, ACTIVE_TTL_MS))
        self._load = self._script(folding("load", self.max_events, ACTIVE_TTL_MS))
        self._fold = self._script(folding("fold", self.max_events, ACTIVE_TTL_MS))
        self._events = self._script(folding("events", self.max_events, ACTIVE_TTL_MS))
        #: the move path's writes, one pipeline per turn of the loop (`batch.Batcher`)
        self.batcher = Batcher(self.redis)
        #: room code -> the lease epoch this process writes it with (server/store/lease.py)
        self.fences: dict[str, int] = {}
        #: (room code, seat) -> the lean append's keys, made once, not per move (bounded:
        #: emptied when it holds OWNED_KEYS_KEPT seats)
        self._owned_keys: dict[tuple[str, int], list[str]] = {}

    # --- room document ------------------------------------------------------------------

    async def commit(
        self,
        code: str,
        ver: int,
        doc: dict[str, Any],
        events: Sequence[dict[str, Any]],
        *,
        seats: int,
        finished: bool = False,
        clear_logs: bool = False,
        revs: dict[int, int] | None = None,
        lengths: dict[int, int] | None = None,
        trim: bool = False,
    ) -> tuple[int, list[int]]:
        """Write the document if it is still at `ver` (and the logs at `revs`), append the events.

        Returns (new version, the events' numbers). A finished room's keys expire after
        the configured time; any other room's after a day without a change. `trim` keeps
        only this commit's events in the stream: once a race has its results, its
        progress events are dead weight (three quarters of a finished room's memory),
        and a client resuming from before them gets a snapshot instead. `lengths` (seat ->
        the log's length) checks the logs of `revs` by their length too: the lease holder's
        lean pushes leave a seat's revision as it was (`append_owned`).
        """
        ttl = self.finished_ttl_ms if finished else ACTIVE_TTL_MS
        rev_args: list[int] = []
        for seat, rev in sorted((revs or {}).items()):
            rev_args += [seat, rev, (lengths or {}).get(seat, -1)]
        flags = ("c" if clear_logs else "") + ("t" if trim else "")
        args: list[ScriptArg] = [
            ver,
            encode(doc),
            self.channel(code),
            self.max_events,
            ttl,
            flags,
            self.origin,
            len(revs or {}),
            self.fences.get(code, 0),
            *rev_args,
            *(encode(e) for e in events),
        ]
        out = await self._commit(keys=self.room_keys(code, seats), args=args)
        if out[0] == -5:
            raise self._fenced(code, int(out[1]))
        if out[0] == -1:
            raise Conflict("version", int(out[1]))
        if out[0] == -3:
            raise Conflict("log", int(out[2]))
        numbers = [int(n) for n in out[1:]]
        for n, event in zip(numbers, events, strict=False):
            self._fan_event(code, n, event)
        return int(out[0]), numbers

    async def load(self, code: str) -> Loaded | None:
        """Document, version, logs and revisions as one consistent cut: the document first
        (it says how many logs there are), then a script that reads the rest only if the
        version is still the one read with it."""
        while True:
            meta = await self.redis.hgetall(self.key(code, "meta"))
            if not meta:
                return None
            doc = decode_trusted(as_bytes(meta[b"doc"]))
            ver = int(meta[b"ver"])
            seats = len(doc["seats"])
            keys = [
                self.key(code, "meta"),
                self.key(code, "revs"),
                self.key(code, "events"),
                self.key(code, "fence"),
            ]
            got = await self._load(
                keys=keys + [self.log_key(code, s) for s in range(seats)],
                args=[ver, self.fences.get(code, 0)],
            )
            if int(got[0]) == -1:
                continue  # changed between the two reads: read again
            flat = got[1]
            revs = {int(flat[i]): int(flat[i + 1]) for i in range(0, len(flat), 2)}
            logs = {s: list(got[5 + s]) for s in range(seats)}
            here = got[4]
            others = here is None or as_bytes(here) not in (b"", self.origin)
            return Loaded(doc, ver, logs, revs, int(got[2] or 0), as_bytes(got[3]), others)

    async def doc(self, code: str) -> dict[str, Any] | None:
        """The room's document alone (no logs): enough to check a token, one small read."""
        raw = await self.redis.hget(self.key(code, "meta"), "doc")
        return None if raw is None else decode_trusted(as_bytes(raw))

    # --- move logs ----------------------------------------------------------------------

    async def append(
        self,
        code: str,
        ver: int,
        seat: int,
        length: int,
        rev: int,
        entry: str,
        event: dict[str, Any],
        board: bytes = b"",
        *,
        delay: int = 0,
        pop: bool = False,
    ) -> Appended:
        """Append (or pop) one move if the log is exactly as the caller saw it.

        `board` (an encoded frame, for spectators `delay` seconds from now) is published only
        when the room has spectators. Raises Conflict when the log, its revision or the
        document changed.
        """
        keys = [
            self.key(code, "meta"),
            self.log_key(code, seat),
            self.key(code, "revs"),
            self.key(code, "events"),
            self.key(code, "conn"),
            self.key(code, "fence"),
            self.key(code, "here"),
        ]
        args: list[ScriptArg] = [
            ver,
            length,
            rev,
            seat,
            b"pop" if pop else b"push",
            entry,
            encode(event),
            b"%d:%s" % (delay, board) if board else b"",
            self.origin,
            self.fences.get(code, 0),
        ]
        out = await self.batcher.evalsha(self._append, keys, args)
        code_ = int(out[0])
        if code_ == -5:
            raise self._fenced(code, int(out[1]))
        if code_ < 0:
            raise Conflict(
                {-1: "version", -2: "length", -3: "revision", -4: "entry"}[code_], int(out[1])
            )
        return self._appended(code, out, event, board, delay)

    async def append_owned(
        self,
        code: str,
        sync: bytes,
        seat: int,
        entry: str,
        event: dict[str, Any],
        board: bytes = b"",
        *,
        delay: int = 0,
        pop: bool = False,
        last: int = 0,
        rev: int = 0,
    ) -> Appended:
        """The lease holder's append (or pop) of one move it judged on its copy in memory,
        loaded when the fence's counter was `sync` (`Loaded.sync`): one lean script that
        checks that counter and stores the move, nothing else (`_OWNED`).

        `last` is the room's last event number as the holder's copy knows it (`Loaded.seq`,
        then what its writes were numbered): the move's event is numbered `last + 1` unless
        another writer numbered one since (then the next free number; `Appended.n` says
        which), so no counter is incremented per move. `rev` is the seat's revision in the
        copy: a push leaves it as it is (the log's length tells the pushes apart), a pop
        bumps it.

        Raises Conflict("fence") when another process has taken the room over (the lease is
        forgotten, as `append`'s fencing does), Conflict("sync") when the copy is stale (a
        write without the lease since, a lost answer's `outcome`): the caller reloads."""
        keys = self._owned_keys.get((code, seat))
        if keys is None:
            if len(self._owned_keys) >= OWNED_KEYS_KEPT:
                self._owned_keys.clear()
            keys = self._owned_keys[code, seat] = [
                self.key(code, "fence"),
                self.log_key(code, seat),
                self.key(code, "revs"),
                self.key(code, "events"),
                self.key(code, "here"),
                self.key(code, "conn"),
            ]
        args: list[ScriptArg] = [
            sync,
            seat,
            b"pop" if pop else b"push",
            entry,
            encode(event),
            b"%d:%s" % (delay, board) if board else b"",
            self.origin,
            self.fences.get(code, 0),
            last + 1,
            rev,
        ]
        out = await self.batcher.evalsha(self._owned, keys, args)
        if int(out[0]) == -5:
            epoch = int(out[1])
            if epoch != self.fences.get(code, 0):
                raise self._fenced(code, epoch)
            raise Conflict("sync", epoch)
        return self._appended(code, out, event, board, delay)

    async def append_native(
        self,
        code: str,
        sync: bytes,
        seat: int,
        entry: str,
        event: dict[str, Any],
        board: bytes = b"",
        *,
        delay: int = 0,
        pop: bool = False,
        last: int = 0,
        rev: int = 0,
        length: int = 0,
    ) -> Appended:
        """The lease holder's store of one move, when no other process listens to the room
        (`Loaded.others`): ONE native command, `XADD` of the move and its event to the holder's
        tail (lua/tail.lua), queued with the turn's other writes. The tail's key names the
        fence's counter the copy was loaded under (`sync`), and only the holder's load makes
        it; every other writer folds it into the seat logs and the stream, and one without
        the lease deletes it: `NOMKSTREAM` then refuses the stale holder's append (a nil
        reply). The entry's id is the event's number, `last + 1`: an event another writer
        numbered since raised the tail's last id, and the stream refuses the old number.
        Every FOLD_EVERY events the holder folds its tail (one script, not awaited).

        `length` and `rev` are the seat's log length and revision in the copy: a push makes
        the length one more, a pop one less and the revision one more (as the fold does).
        Raises Conflict("fence") when another process took the room over, Conflict("sync")
        when the copy is stale: the caller reloads."""
        queued = self.queue_native(
            code, sync, seat, entry, event, pop=pop, last=last, rev=rev, length=length
        )
        return await self.native_outcome(queued, board, delay=delay)

    def queue_native(
        self,
        code: str,
        sync: bytes,
        seat: int,
        entry: str,
        event: dict[str, Any],
        *,
        pop: bool = False,
        last: int = 0,
        rev: int = 0,
        length: int = 0,
        spaced: bool = False,
        on_reply: Callable[[asyncio.Future[Any]], None] | None = None,
    ) -> QueuedAppend:
        """`append_native`'s `XADD`, queued for this turn's pipeline (`spaced`: a move nothing
        waits for, which may wait for company: `Batcher.spacing`). `native_stored` (at once,
        in the reply's callback) or `native_outcome` (awaited) makes its reply the move's
        `Appended`; the move path without a task uses the first (race/service.py
        `move_now`), told of the reply by `on_reply` (`Batcher.queue`)."""
        tail = self.key(code, "tail:" + as_text(sync))
        future = self.batcher.queue(
            None,
            (
                "XADD", tail, "NOMKSTREAM", b"%d-0" % (last + 1),
                "s", seat, "o", b"u" if pop else b"p", "m", entry, "d", encode(event),
            ),
            spaced=spaced,
            on_reply=on_reply,
        )  # fmt: skip
        return QueuedAppend(future, code, event, pop, last, rev, length)

    def native_stored(self, queued: QueuedAppend) -> Appended | None:
        """The answered `queue_native` as `append_native` returns it, without awaiting: None
        when the reply is not a stored entry (an error, a refusal, a cancelled turn), which
        `native_outcome` then tells apart (a Conflict, the error, the fence's epoch read)."""
        future = queued.future
        if future.cancelled() or future.exception() is not None or future.result() is None:
            return None
        return self._native_appended(queued, b"", 0)

    async def native_outcome(
        self, queued: QueuedAppend, board: bytes = b"", *, delay: int = 0
    ) -> Appended:
        """The queued `XADD`'s reply (`queue_native`) as `append_native` returns it, or its
        error: Conflict("fence") or Conflict("sync") when the tail refused it."""
        code = queued.code
        try:
            added = await queued.future
        except ResponseError as exc:
            if "equal or smaller" not in str(exc):
                raise
            added = None  # another writer numbered an event: the copy is behind
        if added is None:
            raw = await self.redis.hget(self.key(code, "fence"), "epoch")
            epoch = int(raw or 0)
            if epoch != self.fences.get(code, 0):
                raise self._fenced(code, epoch)
            raise Conflict("sync", epoch)
        return self._native_appended(queued, board, delay)

    def _native_appended(self, queued: QueuedAppend, board: bytes, delay: int) -> Appended:
        """A stored `XADD`: the tail folded every FOLD_EVERY events, the event and board to
        this process's connections."""
        code, n = queued.code, queued.last + 1
        if n % FOLD_EVERY == 0:
            fence = self.key(code, "fence")
            self.batcher.queue(self._fold, ("EVALSHA", self._fold.sha, 1, fence)).add_done_callback(
                _folded
            )
        watching = self.sink.watchers(code) if self.sink is not None else 0
        if queued.pop:
            stored = Appended(queued.length - 1, queued.rev + 1, n, watching)
        else:
            stored = Appended(queued.length + 1, queued.rev, n, watching)
        self._fan_event(code, n, queued.event)
        if board and watching > 0:
            self._fan_board(code, delay, board)
        return stored

    def _appended(
        self, code: str, out: list[Any], event: dict[str, Any], board: bytes, delay: int
    ) -> Appended:
        stored = Appended(int(out[0]), int(out[1]), int(out[2]), int(out[3]))
        self._fan_event(code, stored.n, event)
        if board and stored.spectators > 0:
            self._fan_board(code, delay, board)
        return stored

    async def outcome(
        self,
        code: str,
        seat: int,
        length: int,
        rev: int,
        entry: str,
        event: dict[str, Any],
        *,
        pop: bool = False,
    ) -> Appended | None:
        """Whether an `append` (same arguments) whose answer never came is stored: its result
        as the append would have given it, or None when it is not stored, and then never will
        be (the seat's revision moved on). Its event goes to this process's connections here."""
        METRICS.redis_retries.labels("outcome").inc()
        keys = [
            self.log_key(code, seat),
            self.key(code, "revs"),
            self.key(code, "events"),
            self.key(code, "conn"),
            self.key(code, "fence"),
        ]
        args: list[ScriptArg] = [
            seat,
            length,
            rev,
            b"pop" if pop else b"push",
            entry,
            encode(event),
        ]
        out = await self._outcome(keys=keys, args=args)
        if int(out[0]) == 0:
            return None
        n, spectators = int(out[1]), int(out[2])
        if n:
            self._fan_event(code, n, event)
        elif self.sink is not None:
            self.sink.lost(code)  # its event is gone from the stream: connections check it
        return Appended(length - 1 if pop else length + 1, int(out[3]), n, spectators)

    def _fenced(self, code: str, fence: int) -> Conflict:
        """Another process took the room over (its fence is past our lease): forget the lease;
        the caller reloads and judges again without it."""
        self.fences.pop(code, None)
        log.warning("room %s: write refused by the fence (now epoch %d)", shown(code), fence)
        return Conflict("fence", fence)

    async def publish_board(self, code: str, board: bytes, delay: int = 0) -> None:
        """A board the append did not carry (this process thought nobody was watching)."""
        await self._publish(self.channel(code), b"b%s%d:%s" % (self.origin, delay, board))
        self._fan_board(code, delay, board)

    # --- events -------------------------------------------------------------------------

    async def last_event(self, code: str) -> int:
        """The number of the room's last event: its stream's last entry (the stream is the
        counter: lua/top.lua), the lease holder's tail folded in first (lua/events.lua)."""
        out = await self._events(keys=self._event_keys(code), args=[-1])
        return int(out[0])

    def _event_keys(self, code: str) -> list[str]:
        return [self.key(code, "events"), self.key(code, "fence")]

    async def events_after(self, code: str, after: int) -> list[tuple[int, dict[str, Any]]] | None:
        """Events numbered after `after`, or None when some of them are no longer kept, or
        when `after` is a number the room never reached (negative, or ahead of its count: a
        client from before a Redis restart, or a forged number): a full resync, never a replay
        that would leave the client waiting for events it believes it has.

        One script (lua/events.lua): the lease holder's tail folded in, the count and the rows
        read in one step, one round trip (a catch-up at full speed reads again while events
        keep coming: each read's length is how long it lasts)."""
        got = await self._events(keys=self._event_keys(code), args=[after])
        last, rows = int(got[0]), got[1]
        if rows is None:
            return None  # (the lease holder trims the stream lazily: past max_events is gone)
        # each row as the script gives it: [id, [b"d", event]]
        out = [
            (int(as_text(rid).split("-")[0]), decode_trusted(as_bytes(fields[1])))
            for rid, fields in rows
        ]
        if last > after and (not out or out[0][0] != after + 1):
            return None
        return out


def _folded(future: asyncio.Future[Any]) -> None:
    """The holder's periodic fold answered: a failure is only logged (the next fold, or any
    other writer's, or a reload folds the same entries; nothing acked depends on it)."""
    if future.cancelled():
        return
    exc = future.exception()
    if exc is not None:
        log.warning("a fold of a lease holder's tail failed: %s", exc)
