"""Values kept a moment in this process and fetched once for everyone asking at the same time.

A lobby page, a daily's deal, a daily's board page: many connections ask for the same thing
within a second, and each answer costs Redis (or the solver) work. Each key's value is kept
`ttl` seconds; askers of a key that is being fetched wait for that one fetch (shielded, so
one asker giving up does not cancel the others' fetch), and at most `size` keys are kept, so
a client asking for random keys only evicts old ones.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from solrace.server.common.lru import LRU

T = TypeVar("T")


class Shared(Generic[T]):
    def __init__(self, ttl: float, size: int = 64) -> None:
        self.ttl = ttl
        self.kept: LRU[str, tuple[float, T]] = LRU(size)
        self.pending: dict[str, asyncio.Future[T]] = {}
        #: fetches made (what the sharing saved is the askers minus this)
        self.fetches = 0

    async def get(self, key: str, fetch: Callable[[], Awaitable[T]]) -> T:
        """The value of `key`, at most `ttl` seconds old: kept, being fetched, or fetched now.
        A failed fetch's error goes to every asker waiting on it, and nothing is kept."""
        hit = self.kept.get(key)
        if hit is not None and hit[0] > time.monotonic():
            return hit[1]
        waiting = self.pending.get(key)
        if waiting is not None:
            return await asyncio.shield(waiting)
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        # retrieved here, so an error nobody waited for is not reported as never retrieved
        future.add_done_callback(lambda f: f.cancelled() or f.exception())
        self.pending[key] = future
        try:
            self.fetches += 1
            value = await fetch()
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            raise
        finally:
            self.pending.pop(key, None)
        future.set_result(value)
        self._keep(key, value)
        return value

    def clear(self) -> None:
        """Forget every kept value: the next asker of each fetches again."""
        self.kept.clear()

    def _keep(self, key: str, value: T) -> None:
        if self.ttl <= 0:
            return
        now = time.monotonic()
        if len(self.kept) >= self.kept.size:  # the expired go first, else the least recent
            for old, (t, _) in self.kept.items():
                if t <= now:
                    self.kept.pop(old)
        self.kept.put(key, (now + self.ttl, value))
