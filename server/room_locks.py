"""One lock per room code, kept only while someone holds it or waits for it.

The room service runs one operation per room at a time in a process (its cached games are
shared state). A plain dict of locks keeps an entry for every code ever asked for: a client
naming 68k made-up codes left 68k locks behind. Here the entry goes with its last user, and
the owner hears of it (`on_idle`), the moment to drop what else it keeps for the room.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable


class _Entry:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0  # holding or waiting


class RoomLocks:
    def __init__(self, on_idle: Callable[[str], None] = lambda code: None) -> None:
        self._entries: dict[str, _Entry] = {}
        self.on_idle = on_idle

    def __len__(self) -> int:
        return len(self._entries)

    def busy(self, code: str) -> bool:
        """Whether an operation on the room holds or waits for its lock."""
        return code in self._entries

    @contextlib.asynccontextmanager
    async def hold(self, code: str) -> AsyncIterator[None]:
        entry = self._entries.get(code)
        if entry is None:
            entry = self._entries[code] = _Entry()
        entry.users += 1
        try:
            async with entry.lock:
                yield
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._entries[code]
                self.on_idle(code)
