"""The move path's Redis writes, one pipeline per turn of the event loop.

A move's store is one EVALSHA of the append script. Sent one by one, each costs redis-py its
whole command path (a pooled connection, packing, a write, a read, a wake-up): about 120 µs of
the server's CPU. Every store asked for during one turn of the loop is instead queued and sent
together, as one non-transactional pipeline, when the turn ends: about 30 µs each, and a third
less CPU in Redis too (`bench/redis_clients.py` measured the choices: BENCHMARKS.md).

The pipeline is redis-py's own, so the same code serves one Redis and a Redis Cluster: there
`RedisCluster.pipeline()` splits the batch by node, sends each node its part at once, and
follows MOVED and ASK redirections command by command (no MULTI: nothing runs in a thread).
Each command keeps its own outcome: a refused or failed command fails only its own caller. A
script the node does not know (a restarted Redis, a promoted replica) is loaded and its
commands sent again. When the whole pipeline fails (the connection broke, the node is gone),
every command in it fails with that error: the service then asks Redis whether each move is
stored (`Store.outcome`), acks those that are and answers the others `busy`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import hiredis
import redis.asyncio as aioredis
from redis.exceptions import NoScriptError


class Script(Protocol):
    """A registered Lua script (redis-py's AsyncScript): its source and its SHA1."""

    script: str | bytes
    sha: str


@dataclass(slots=True)
class _Call:
    script: Script
    keys: Sequence[Any]
    args: Sequence[Any]
    future: asyncio.Future[Any]


class Batcher:
    """Queue EVALSHA calls during a turn of the loop; send them as one pipeline at its end."""

    def __init__(self, redis: Any) -> None:
        #: a redis-py asyncio Redis or RedisCluster
        self.redis = redis
        self._queue: list[_Call] = []
        self._handle: asyncio.Handle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        #: pipelines sent and commands in them (for the benchmark's report)
        self.batches = 0
        self.commands = 0

    async def evalsha(self, script: Script, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        """Run `script` with this turn's other calls; its reply, or its own error."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._queue.append(_Call(script, keys, args, future))
        if self._handle is None:
            self._handle = loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        self._handle = None
        batch, self._queue = self._queue, []
        if not batch:
            return
        self.batches += 1
        self.commands += len(batch)
        task = asyncio.ensure_future(self._send(batch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, batch: list[_Call]) -> None:
        try:
            replies = await self._execute(batch)
            missing = [c for c, r in zip(batch, replies, strict=True) if _settle(c, r)]
            if missing:
                for script in {id(c.script): c.script for c in missing}.values():
                    await self.redis.script_load(script.script)
                for call, reply in zip(missing, await self._execute(missing), strict=True):
                    if _settle(call, reply):
                        _fail(call, reply)
        except asyncio.CancelledError:
            for call in batch:
                _fail(call, ConnectionError("the server is shutting down"))
            raise
        except Exception as exc:
            for call in batch:
                _fail(call, exc)

    async def _execute(self, batch: list[_Call]) -> list[Any]:
        pipe = self.redis.pipeline(transaction=False)
        for call in batch:
            # execute_command: redis-py's cluster pipeline refuses its evalsha() method, not
            # the command (it routes EVALSHA by its first key)
            pipe.execute_command("EVALSHA", call.script.sha, len(call.keys), *call.keys, *call.args)
        return list(await pipe.execute(raise_on_error=False))

    async def close(self) -> None:
        """Send what is queued and wait for every pipeline in flight."""
        if self._handle is not None:
            self._handle.cancel()
            self._flush()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


def _settle(call: _Call, reply: Any) -> bool:
    """Hand a reply (or its error) to its caller; True when the script must be loaded first."""
    if isinstance(reply, NoScriptError):
        return True
    if isinstance(reply, BaseException):
        _fail(call, reply)
    elif not call.future.done():
        call.future.set_result(reply)
    return False


def _fail(call: _Call, exc: BaseException) -> None:
    if not call.future.done():
        call.future.set_exception(exc)


class HiredisPacking:
    """Commands packed by hiredis's C packer, as redis-py's sync connection does (its asyncio
    connection packs in Python: with its encoder, about a tenth of a stored move's CPU).
    Anything hiredis does not take goes through redis-py's own packer, errors included."""

    def pack_command(self, *args: Any) -> list[bytes]:
        head = args[0]
        # redis-py sends a command name with a space ("SCRIPT LOAD") as separate words
        if isinstance(head, str) and " " in head:
            args = (*head.encode().split(), *args[1:])
        elif isinstance(head, bytes) and b" " in head:
            args = (*head.split(), *args[1:])
        try:
            return [hiredis.pack_command(args)]
        except TypeError:
            pass
        packed: list[bytes] = super().pack_command(*args)  # type: ignore[misc]
        return packed


class PackedConnection(HiredisPacking, aioredis.Connection):
    """redis-py's asyncio TCP connection, packing with hiredis."""


class PackedSSLConnection(HiredisPacking, aioredis.SSLConnection):
    """redis-py's asyncio TLS connection, packing with hiredis."""


def pack_with_hiredis(pool: aioredis.ConnectionPool) -> None:
    """Make a pool (before its first connection) open connections that pack with hiredis."""
    if pool.connection_class is aioredis.Connection:
        pool.connection_class = PackedConnection
    elif pool.connection_class is aioredis.SSLConnection:
        pool.connection_class = PackedSSLConnection
