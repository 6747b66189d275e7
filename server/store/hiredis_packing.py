"""redis-py's asyncio connections, packing commands with hiredis's C packer.

Kept apart from the batcher (server/store/batch.py) because these classes extend redis-py's
own connection classes: a module compiled with mypyc (docs/ARCHITECTURE.md, "Compiled
modules") cannot hold a class whose base has `__slots__`, so this one stays interpreted.
"""

from __future__ import annotations

from typing import Any

import hiredis
import redis.asyncio as aioredis


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
