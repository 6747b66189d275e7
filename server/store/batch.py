"""The move path's Redis writes, one pipeline per turn of the event loop.

A move's store is one EVALSHA of the append script. Sent one by one, each costs redis-py its
whole command path (a pooled connection, packing, a write, a read, a wake-up): about 120 µs of
the server's CPU. Every store asked for during one turn of the loop is instead queued and sent
together, as one non-transactional pipeline, when the turn ends: about 30 µs each, and a third
less CPU in Redis too (`bench/redis_clients.py` measured the choices: BENCHMARKS.md). A move
that nothing waits for (`queue(spaced=True)`) waits for company instead: its pipeline follows
the one before it by `spacing` at the least (2 ms), with whatever is queued meanwhile.

On one Redis the turn's commands go out on a connection of the batcher's own (made by the
client's pool and its handshake, packing with hiredis, but kept apart from it; its socket
then an `asyncio.Protocol` of the batcher's, `_Link`): one write, then the replies parsed
by hiredis as they arrive, in the protocol's `data_received` (no redis-py `read_response`
per reply, no task and no stream read a turn), under one deadline for the whole turn (the
client's `socket_timeout`). redis-py's
pipeline costs more than the commands in it (a pooled connection behind a lock, metrics
hooks, a retry wrapper, a timeout and a task per read and write): ~15 µs a turn, which a paced
move (one command per turn) pays alone. Up to MAX_DIRECT turns are in flight at once, each on
its own connection; a turn that finds them all busy waits for one, its commands joining the
next turn's. A connection whose turn failed (an error on the socket, a timeout) is closed and
never reused: its replies may be out of step.

On a Redis Cluster (and any client that is not redis-py's `Redis`) the pipeline is redis-py's
own: `RedisCluster.pipeline()` splits the batch
by node, sends each node its part at once, and follows MOVED and ASK redirections command by
command (no MULTI: nothing runs in a thread).
Each command keeps its own outcome: a refused or failed command fails only its own caller. A
script the node does not know (a restarted Redis, a promoted replica) is loaded and its
commands sent again. When the whole pipeline fails (the connection broke, the node is gone),
every command in it fails with that error: the service then asks Redis whether each move is
stored (`Store.outcome`), acks those that are and answers the others `busy`.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import hiredis
import redis.asyncio as aioredis
from redis._parsers.hiredis import NOT_ENOUGH_DATA, _AsyncHiredisParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse, NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger("solrace.server")

#: turns in flight at once on one Redis, each on a connection of the batcher's own
MAX_DIRECT = 8
#: seconds a move nothing waits for waits for company after the last pipeline (`Batcher.spacing`)
SPACING_S = 0.002


class Script(Protocol):
    """A registered Lua script (redis-py's AsyncScript): its source and its SHA1."""

    script: str | bytes
    sha: str


@dataclass
class _Call:
    #: None: a native command (`Batcher.command`), which no SCRIPT LOAD can help
    script: Script | None
    #: the command as sent: EVALSHA sha numkeys keys... args..., or the native command
    command: tuple[Any, ...]
    future: asyncio.Future[Any]
    #: told of the reply (or error) the moment the turn settles it (`Batcher.queue`)
    on_reply: Callable[[asyncio.Future[Any]], None] | None = None


class Batcher:
    """Queue EVALSHA calls during a turn of the loop; send them as one pipeline at its end."""

    #: one Redis's turns on `_Link`s (False: redis-py's connections through their streams,
    #: a task a turn, as before 2026-12-05: the benchmarks' comparison)
    links = True

    def __init__(self, redis: Any, spacing: float = SPACING_S) -> None:
        #: a redis-py asyncio Redis or RedisCluster
        self.redis = redis
        #: seconds a spaced command (`queue(spaced=True)`: a move nothing waits for) waits
        #: after the pipeline sent before it (0: none): one queued when none was sent for as
        #: long goes at the end of its turn, as ever; one queued sooner waits for the rest of
        #: the spacing, and what else comes meanwhile joins it, unless a command that may not
        #: wait (every other) comes first: then the queue goes at the end of that turn.
        #: Paced players (moves ~0.5 ms apart, rarely two in a loop's turn) made a pipeline of
        #: nearly every move, at ~75 µs of the server's CPU and ~24 of Redis's each. A room's
        #: moves pass its lock from one answer to the next: spacing those would cap a busy
        #: room at a move per spacing (BENCHMARKS.md, issue 21, 2026-12-04, branch core21g).
        self.spacing = spacing
        self._sent_at = -math.inf
        self._queue: list[_Call] = []
        self._handle: asyncio.Handle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        #: one Redis (not a cluster): the batcher's own connections (`_Link`), idle ones here
        self._idle: list[_Link] = []
        #: turns on the batcher's own connections (or opening one) at the moment
        self._busy = 0
        #: set when `_busy` falls to 0 (`close` waits for the turns in flight)
        self._quiet: asyncio.Future[None] | None = None
        #: `links` off: redis-py's own connections read through its streams (`_streamed`)
        self._idle_streams: list[Any] = []
        #: pipelines sent and commands in them (for the benchmark's report)
        self.batches = 0
        self.commands = 0

    async def evalsha(self, script: Script, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        """Run `script` with this turn's other calls; its reply, or its own error."""
        command = ("EVALSHA", script.sha, len(keys), *keys, *args)
        return await self.queue(script, command)

    def queue(
        self,
        script: Script | None,
        command: tuple[Any, ...],
        *,
        spaced: bool = False,
        on_reply: Callable[[asyncio.Future[Any]], None] | None = None,
    ) -> asyncio.Future[Any]:
        """Queue a command (`script`: the one its EVALSHA runs, None for a native command)
        for this turn's pipeline, or (`spaced`) for the one due when the spacing since the
        last is over: the future of its reply, or of its own error. `on_reply` is called
        with that future as soon as it is done, from the turn that settles it (not a
        callback of its own in the loop's next turn, as `add_done_callback` would be: the
        move path without a task acks from it, one handle less a move)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._queue.append(_Call(script, command, future, on_reply))
        handle = self._handle
        if handle is None:
            wait = self._sent_at + self.spacing - loop.time() if spaced else 0.0
            if wait > 0:
                self._handle = loop.call_later(wait, self._flush)
            else:
                self._handle = loop.call_soon(self._flush)
        elif not spaced and isinstance(handle, asyncio.TimerHandle):
            handle.cancel()  # this one may not wait: the queue goes at the end of the turn
            self._handle = loop.call_soon(self._flush)
        return future

    async def command(self, *command: Any) -> Any:
        """Run a native command with this turn's other calls (the lease holder's one command a
        move: `Store.append_native`); its reply, or its own error."""
        return await self.queue(None, command)

    def _flush(self) -> None:
        self._handle = None
        if not self._queue:
            return
        if self._busy >= MAX_DIRECT:
            return  # sent when a connection comes back (`_direct`)
        batch, self._queue = self._queue, []
        self._sent_at = asyncio.get_running_loop().time()
        self.batches += 1
        self.commands += len(batch)
        if self._idle and isinstance(self.redis, aioredis.Redis):
            # one Redis, a connection ready: the turn with no task (`_Link`)
            link = self._idle.pop()
            self._busy += 1
            link.send(batch, lambda replies, exc: self._sent(link, batch, replies, exc))
            return
        self._spawn(self._send(batch))

    def _sent(
        self, link: _Link, batch: list[_Call], replies: list[Any] | None, exc: Exception | None
    ) -> None:
        """A turn sent by `_flush` on an idle link is over: each call settled (a script
        Redis did not know loaded and its calls sent again, in a task), the link kept or
        closed."""
        self._link_done(link, exc is None)
        if replies is None:
            for call in batch:
                _fail(call, exc or RedisConnectionError("no reply"))
            return
        missing = [c for c, r in zip(batch, replies, strict=True) if _settle(c, r)]
        if missing:
            self._spawn(self._send_again(missing))

    def _spawn(self, turn: Coroutine[Any, Any, None]) -> None:
        """A turn in a task of its own, kept until done (`close` waits for `_tasks`)."""
        task = asyncio.ensure_future(turn)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _link_done(self, link: _Link | None, ok: bool) -> None:
        """A turn on a link is over (None: no link was had): the link kept for the next turn
        or closed (its replies may be out of step), and what waited for a link sent."""
        self._busy -= 1
        if link is not None:
            if ok and not link.lost:
                self._idle.append(link)
            else:
                link.close()
        if self._queue and self._handle is None:
            self._handle = asyncio.get_running_loop().call_soon(self._flush)
        if not self._busy and self._quiet is not None and not self._quiet.done():
            self._quiet.set_result(None)

    async def _send(self, batch: list[_Call]) -> None:
        await _failing(batch, self._turn(batch))

    async def _turn(self, batch: list[_Call]) -> None:
        replies = await self._execute(batch)
        missing = [c for c, r in zip(batch, replies, strict=True) if _settle(c, r)]
        if missing:
            await self._again(missing)

    async def _again(self, missing: list[_Call]) -> None:
        """Calls whose script Redis did not know: loaded, and sent again once."""
        for script in {id(c.script): c.script for c in missing}.values():
            if script is not None:
                await self._load(script)
        for call, reply in zip(missing, await self._execute(missing), strict=True):
            if _settle(call, reply):
                _fail(call, reply)

    async def _send_again(self, missing: list[_Call]) -> None:
        await _failing(missing, self._again(missing))

    async def _load(self, script: Script) -> None:
        """SCRIPT LOAD through the client's pool. On one Redis the turns do not use that pool,
        so its idle connection may predate a restart of Redis (the reason the script is
        missing): a closed connection is tried once more, on a new one."""
        try:
            await self.redis.script_load(script.script)
            return
        except RedisConnectionError:
            if not isinstance(self.redis, aioredis.Redis):
                raise
        # tried again after the handler: no await while an exception is handled
        # (docs/ARCHITECTURE.md, "Compiled modules")
        await self.redis.script_load(script.script)

    async def _execute(self, batch: list[_Call]) -> list[Any]:
        if isinstance(self.redis, aioredis.Redis):
            return await self._direct(batch)
        return await self._pipeline(batch)

    async def _pipeline(self, batch: list[_Call]) -> list[Any]:
        """The turn as one redis-py non-transactional pipeline (a cluster splits it by node)."""
        pipe = self.redis.pipeline(transaction=False)
        for call in batch:
            # execute_command: redis-py's cluster pipeline refuses its evalsha() method, not
            # the command (it routes EVALSHA by its first key)
            pipe.execute_command(*call.command)
        return list(await pipe.execute(raise_on_error=False))

    async def _direct(self, batch: list[_Call]) -> list[Any]:
        """The turn on one Redis, on a link of the batcher's own (an idle one, else a new
        one): one write, the replies parsed by hiredis as they arrive; each error reply in its
        place (as the pipeline's raise_on_error=False)."""
        if not self.links:
            return await self._streamed(batch)
        self._busy += 1
        try:
            link = self._idle.pop() if self._idle else await self._open()
        except BaseException:
            self._link_done(None, False)
            raise
        done: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()

        def told(replies: list[Any] | None, exc: Exception | None) -> None:
            self._link_done(link, exc is None)
            if done.done():  # the task waiting was cancelled (shutdown)
                return
            if replies is None:
                done.set_exception(exc or RedisConnectionError("no reply"))
            else:
                done.set_result(replies)

        link.send(batch, told)
        return await done

    async def _open(self) -> _Link:
        """A new connection of the batcher's own: opened by redis-py (its handshake: AUTH,
        HELLO, SELECT, the client's name), its socket then taken by a `_Link`."""
        conn = self.redis.connection_pool.make_connection()
        failure: Exception | None = None
        cause: OSError | None = None
        try:
            async with asyncio.timeout(conn.socket_timeout):
                await conn.connect()
        except TimeoutError:
            failure = RedisTimeoutError("Timeout connecting to Redis")
        except OSError as exc:
            failure, cause = RedisConnectionError(f"Error connecting to Redis: {exc}"), exc
        if failure is not None:  # closed after the handler: no await while handling (`_load`)
            await conn.disconnect(nowait=True)
            raise failure from cause
        return _Link.take(self, conn)

    async def _streamed(self, batch: list[_Call]) -> list[Any]:
        """`_direct` through redis-py's streams (`links` off: as before the links, for the
        benchmark's comparison): one write, the replies read off its stream reader."""
        idle = self._idle_streams
        conn = idle.pop() if idle else self.redis.connection_pool.make_connection()
        self._busy += 1
        replies: list[Any] = []
        failed: BaseException | None = None
        try:
            commands = [c.command for c in batch]
            try:  # hiredis's C packer straight (redis-py's pack_commands only loops and joins)
                packed = [hiredis.pack_command(command) for command in commands]
            except TypeError:  # what hiredis does not take: redis-py's packer and its errors
                packed = conn.pack_commands(commands)
            try:
                async with asyncio.timeout(conn.socket_timeout):
                    if not conn.is_connected:
                        await conn.connect()
                    # redis-py's send_packed_command wraps this in wait_for (a task per write)
                    await conn._send_packed_command(packed)
                    reader = _hiredis_reader(conn)
                    if reader is not None:
                        await _read_replies(reader, conn._reader, len(batch), replies)
                    else:
                        for _ in batch:
                            try:
                                # math.inf: no timeout of its own (the turn's deadline above)
                                replies.append(await conn.read_response(timeout=_NO_TIMEOUT))
                            except ResponseError as exc:
                                replies.append(exc)
            except TimeoutError:
                raise RedisTimeoutError("Timeout talking to Redis") from None
            except OSError as err:  # not `exc`: one name, one type (mypyc)
                raise RedisConnectionError(f"Error talking to Redis: {err}") from err
        except BaseException as broken:  # the connection closed below, then raised: a
            failed = broken  # `finally` that awaits is what compiled code must not have (`_load`)
        self._busy -= 1
        if failed is None:
            idle.append(conn)
        else:
            await conn.disconnect(nowait=True)
        if self._queue and self._handle is None:
            self._handle = asyncio.get_running_loop().call_soon(self._flush)
        if failed is not None:
            raise failed
        return replies

    async def close(self) -> None:
        """Send what is queued, wait for every pipeline in flight, close own connections."""
        while self._queue or self._tasks or self._busy:
            if self._handle is not None:
                self._handle.cancel()
                self._handle = None
            self._flush()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            elif self._busy:  # turns on links, with no task
                self._quiet = asyncio.get_running_loop().create_future()
                await self._quiet
        idle, self._idle = self._idle, []
        for link in idle:
            link.close(abort=False)
        streams, self._idle_streams = self._idle_streams, []
        for conn in streams:
            await conn.disconnect()


async def _failing(calls: list[_Call], work: Coroutine[Any, Any, None]) -> None:
    """Run a turn's `work`; if it fails, every call of the turn not yet settled fails with
    it (with the server's shutdown, as a connection error, and the cancellation goes on)."""
    try:
        await work
    except asyncio.CancelledError:
        for call in calls:
            _fail(call, ConnectionError("the server is shutting down"))
        raise
    except Exception as exc:
        for call in calls:
            _fail(call, exc)


class _Link(asyncio.Protocol):
    """One of the batcher's own connections to one Redis, once redis-py has opened it: its
    socket taken from redis-py's stream reader (`transport.set_protocol`), so a turn is a
    `transport.write` of the packed commands and its replies are parsed by hiredis in
    `data_received` and handed over there: no task, no coroutine and no timeout's context a
    turn, where redis-py's streams cost a task, a write with its drain, a read's future and
    its wake-up, ~5 µs of a paced move (BENCHMARKS.md, issue 21, 2026-12-05, branch
    core21l). One turn at a time; a turn not answered within the connection's
    `socket_timeout` fails and the link is aborted, as is one whose socket fails or closes:
    its replies may be out of step, so it is never used again."""

    def __init__(self, conn: Any, transport: asyncio.Transport, reader: Any) -> None:
        self.conn = conn
        self.transport = transport
        self.reader = reader
        self.timeout: float | None = conn.socket_timeout
        self.lost = False
        self.batch: list[_Call] | None = None
        self.replies: list[Any] = []
        self.told: Callable[[list[Any] | None, Exception | None], None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.batcher: Batcher | None = None

    @classmethod
    def take(cls, batcher: Batcher, conn: Any) -> _Link:
        """The socket of `conn` (connected, through its handshake) as a link; its hiredis
        reader kept (made with the client's error classes and decoding), or one made the
        same way when the client parses in Python."""
        reader: Any = _hiredis_reader(conn)
        if reader is None:
            parser = conn._parser
            kwargs: dict[str, Any] = {
                "protocolError": InvalidResponse,
                "replyError": parser.parse_error,
                "notEnoughData": NOT_ENOUGH_DATA,
            }
            if conn.encoder.decode_responses:
                kwargs["encoding"] = conn.encoder.encoding
                kwargs["errors"] = conn.encoder.encoding_errors
            reader = hiredis.Reader(**kwargs)
        stream = conn._reader
        transport = conn._writer.transport
        link = cls(conn, transport, reader)
        link.batcher = batcher
        left = bytes(getattr(stream, "_buffer", b""))  # nothing, after the handshake
        if left:
            reader.feed(left)
        transport.set_protocol(link)
        if stream.at_eof() or transport.is_closing():
            link.lost = True
        return link

    def send(
        self, batch: list[_Call], told: Callable[[list[Any] | None, Exception | None], None]
    ) -> None:
        """Write the turn; `told(replies, None)` once every reply is in (an error reply in its
        place), or `told(None, exc)` when the turn fails."""
        commands = [c.command for c in batch]
        try:  # hiredis's C packer straight (redis-py's pack_commands only loops and joins)
            packed = [hiredis.pack_command(command) for command in commands]
        except TypeError:  # what hiredis does not take: redis-py's packer and its errors
            try:
                packed = self.conn.pack_commands(commands)
            except Exception as exc:
                told(None, exc)
                return
        self.batch, self.replies, self.told = batch, [], told
        if self.lost or self.transport.is_closing():
            self._fail(RedisConnectionError("Error talking to Redis: the connection is closed"))
            return
        if self.timeout is not None:
            self.timer = asyncio.get_running_loop().call_later(self.timeout, self._late)
        self.transport.write(b"".join(packed))

    def data_received(self, data: bytes) -> None:
        reader = self.reader
        reader.feed(data)
        batch = self.batch
        if batch is None:
            return  # nothing asked (a RESP3 push): skipped by the next turn's read
        replies = self.replies
        count = len(batch)
        try:
            while len(replies) < count:
                reply = reader.gets()
                if reply is NOT_ENOUGH_DATA:
                    return
                if isinstance(reply, RedisConnectionError):
                    raise reply
                if _PUSH is not None and isinstance(reply, _PUSH):
                    continue  # RESP3's out-of-band message (none is asked for here)
                replies.append(reply)
        except Exception as exc:  # a reply that does not parse, or the connection's error
            self._fail(exc)
            return
        self._over(replies, None)

    def eof_received(self) -> bool | None:
        self._fail(RedisConnectionError("Connection closed by server."))
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if exc is None:
            self._fail(RedisConnectionError("Connection closed by server."))
        else:
            self._fail(RedisConnectionError(f"Error talking to Redis: {exc}"))
        batcher = self.batcher
        if batcher is not None and self in batcher._idle:
            batcher._idle.remove(self)
        self.conn._writer = self.conn._reader = None  # closed: nothing of redis-py's to close

    def _late(self) -> None:
        self.timer = None
        self._fail(RedisTimeoutError("Timeout talking to Redis"))

    def _fail(self, exc: Exception) -> None:
        """The turn in flight (if any) fails, and the link is never used again."""
        self.lost = True
        if self.batch is not None:
            self._over(None, exc)
        self.close()

    def _over(self, replies: list[Any] | None, exc: Exception | None) -> None:
        told = self.told
        self.batch, self.replies, self.told = None, [], None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if told is not None:
            told(replies, exc)

    def close(self, *, abort: bool = True) -> None:
        """Never used again; `abort`: what is queued or due is of no use to anyone now."""
        self.lost = True
        if not self.transport.is_closing():
            if abort:
                self.transport.abort()
            else:
                self.transport.close()
        self.conn._writer = self.conn._reader = None  # redis-py has nothing left to close


_NO_TIMEOUT = float("inf")
#: hiredis's type for a RESP3 push message (hiredis < 3.2 has none)
_PUSH: type | None = getattr(hiredis, "PushNotification", None)
#: bytes asked of the socket per read of a turn's replies
_READ_SIZE = 65536


def _hiredis_reader(conn: Any) -> Any:
    """The connection's hiredis reader when it parses with hiredis (the turn's replies are
    then taken from it straight: `_read_replies`), else None. RESP2 or RESP3 alike: redis-py
    8 speaks RESP3 unless told otherwise, and a move's replies (an entry id, a script's
    array, an error, nil) read the same in both."""
    parser = getattr(conn, "_parser", None)
    if not isinstance(parser, _AsyncHiredisParser):
        return None
    return parser._reader


async def _read_replies(
    reader: Any, stream: asyncio.StreamReader, count: int, out: list[Any]
) -> None:
    """A turn's `count` replies, read off the socket and parsed by hiredis with no per-reply
    coroutine: redis-py's `read_response` costs a few µs a reply in checks a batch of
    EVALSHA replies never needs. An error reply is hiredis's exception object (redis-py's
    `parse_error`: a ResponseError, a NoScriptError), put in its place as the pipeline's
    `raise_on_error=False` does; a closed socket fails the turn."""
    while len(out) < count:
        reply = reader.gets()
        if reply is NOT_ENOUGH_DATA:
            data = await stream.read(_READ_SIZE)
            if not data:
                raise RedisConnectionError("Connection closed by server.")
            reader.feed(data)
            continue
        if isinstance(reply, RedisConnectionError):
            raise reply
        if _PUSH is not None and isinstance(reply, _PUSH):
            continue  # RESP3's out-of-band message (none is asked for here): not a reply
        out.append(reply)


def _settle(call: _Call, reply: Any) -> bool:
    """Hand a reply (or its error) to its caller; True when the script must be loaded first."""
    if isinstance(reply, NoScriptError) and call.script is not None:
        return True
    if isinstance(reply, BaseException):
        _fail(call, reply)
    elif not call.future.done():
        call.future.set_result(reply)
        _told(call)
    return False


def _fail(call: _Call, exc: BaseException) -> None:
    if not call.future.done():
        call.future.set_exception(exc)
        _told(call)


def _told(call: _Call) -> None:
    """The caller's `on_reply`, if any; its failure is its own (the turn's other replies are
    still handed over)."""
    if call.on_reply is not None:
        try:
            call.on_reply(call.future)
        except Exception:
            log.exception("a reply's callback failed")
