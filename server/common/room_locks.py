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

    def users(self, code: str) -> int:
        """How many operations on the room hold or wait for its lock."""
        entry = self._entries.get(code)
        return 0 if entry is None else entry.users

    def hold_now(self, code: str) -> Hold | None:
        """The room's lock taken at once, without awaiting, when nobody holds it or waits for
        it (None otherwise): the move path without a task (race/service.py `move_now`)
        holds it from its rules to its store's answer and lets it go with `release()`."""
        if code in self._entries:
            return None
        hold = _Hold(self, code)
        entry = hold.entry = self._enter(code)
        acquire = entry.lock.acquire()
        try:
            acquire.send(None)  # a free lock is taken without suspending: StopIteration
        except StopIteration:
            return hold
        acquire.close()  # pragma: no cover - a new lock is never held
        raise AssertionError("a new room lock was held")

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
        self.release()

    def release(self) -> None:
        """Let the lock go (the end of `async with`, or of a `hold_now`)."""
        entry = self.entry
        assert entry is not None
        entry.lock.release()
        self.locks._leave(self.code, entry)


#: one operation's hold of a room's lock (`RoomLocks.hold`, `RoomLocks.hold_now`)
Hold = _Hold
