"""One lock per room code, kept only while someone holds it or waits for it.

The room service runs one operation per room at a time in a process (its cached games are
shared state). A plain dict of locks keeps an entry for every code ever asked for: a client
naming 68k made-up codes left 68k locks behind. Here the entry goes with its last user, and
the owner hears of it (`on_idle`), the moment to drop what else it keeps for the room.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import TracebackType


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

    def hold(self, code: str) -> _Hold:
        """`async with locks.hold(code):` one operation on the room at a time."""
        return _Hold(self, code)

    def _enter(self, code: str) -> _Entry:
        entry = self._entries.get(code)
        if entry is None:
            entry = self._entries[code] = _Entry()
        entry.users += 1
        return entry

    def _leave(self, code: str, entry: _Entry) -> None:
        entry.users -= 1
        if entry.users == 0:
            del self._entries[code]
            self.on_idle(code)


class _Hold:
    """The context of one operation (a class, not a generator: the move path takes one per
    move, and this costs a third of an `asynccontextmanager`)."""

    __slots__ = ("code", "entry", "locks")

    def __init__(self, locks: RoomLocks, code: str) -> None:
        self.locks, self.code = locks, code
        self.entry: _Entry | None = None

    async def __aenter__(self) -> None:
        entry = self.entry = self.locks._enter(self.code)
        try:
            await entry.lock.acquire()
        except BaseException:  # cancelled while waiting: no longer a user
            self.locks._leave(self.code, entry)
            raise

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        entry = self.entry
        assert entry is not None
        entry.lock.release()
        self.locks._leave(self.code, entry)
