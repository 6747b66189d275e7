"""The lobby as this process serves it: pages of the store's summary, cached for a moment.

The store keeps the lobby as a maintained summary (written when a public room's row changes,
paged in code order: server/store.py), so a page costs one script and one pipeline whatever
the number of rooms. Here each page is kept `ttl` seconds, and callers asking for a page
while it is being fetched wait for that one fetch: a hundred connections asking every second
cost Redis one page a second (issue 10, item 6: 100 connections asking once a second each,
with 113 public rooms, stalled a move in another room for 20 s).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgpack
from solrace.protocol.messages import encode

Page = tuple[list[dict[str, Any]], str | None]

#: pages (cursors) kept at once; a client sending random cursors only evicts old ones
MAX_PAGES = 64


class LobbyCache:
    def __init__(self, fetch: Callable[[str], Awaitable[Page]], ttl: float = 1.0) -> None:
        self.fetch = fetch
        self.ttl = ttl
        self.pages: dict[str, tuple[float, Page]] = {}
        self.pending: dict[str, asyncio.Future[Page]] = {}
        #: pages read from the store (what the cache saved is requests minus this)
        self.fetches = 0
        #: each page's `lobby` message, encoded once (a page of 100 rows is ~10 KB of msgpack)
        self.frames: dict[str, tuple[Page, bytes]] = {}

    async def frame(self, after: str, ref: int | None) -> bytes:
        """The `lobby` reply for the page after `after`, as a frame: the page's rows are
        encoded once for every asker, only the `ref` is added to each."""
        page = await self.page(after)
        kept = self.frames.get(after)
        if kept is None or kept[0] is not page:
            if len(self.frames) >= MAX_PAGES:
                self.frames.pop(next(iter(self.frames)))
            body = encode({"type": "lobby", "rooms": page[0], "next": page[1]})
            kept = self.frames[after] = (page, body)
        return with_ref(kept[1], ref)

    async def page(self, after: str = "") -> Page:
        """The page after the cursor `after` ("" = the first), at most `ttl` seconds old."""
        now = time.monotonic()
        hit = self.pages.get(after)
        if hit is not None and hit[0] > now:
            return hit[1]
        waiting = self.pending.get(after)
        if waiting is not None:
            return await asyncio.shield(waiting)
        future: asyncio.Future[Page] = asyncio.get_running_loop().create_future()
        self.pending[after] = future
        try:
            self.fetches += 1
            got = await self.fetch(after)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # the waiters (if any) get it; nobody else needs to
            raise
        finally:
            self.pending.pop(after, None)
        if not future.done():
            future.set_result(got)
        self._keep(after, got, time.monotonic() + self.ttl)
        return got

    def clear(self) -> None:
        """A row this process wrote changed: its next asker reads the store again (another
        process's changes show within `ttl`)."""
        self.pages.clear()

    def _keep(self, after: str, page: Page, until: float) -> None:
        if self.ttl <= 0:
            return
        if len(self.pages) >= MAX_PAGES:
            now = time.monotonic()
            for key in [k for k, (t, _) in self.pages.items() if t <= now] or [
                next(iter(self.pages))
            ]:
                del self.pages[key]
        self.pages[after] = (until, page)


def with_ref(frame: bytes, ref: int | None) -> bytes:
    """An encoded map of three entries (a fixmap) with `ref` added as a fourth."""
    if ref is None:
        return frame
    assert frame[0] == 0x83, "a map of three entries"
    return b"\x84" + frame[1:] + msgpack.packb("ref") + msgpack.packb(ref)
