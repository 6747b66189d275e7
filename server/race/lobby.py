"""The lobby as this process serves it: pages of the store's summary, cached for a moment.

The store keeps the lobby as a maintained summary (written when a public room's row changes,
paged in code order: server/store/store.py), so a page costs one script and one pipeline whatever
the number of rooms. Here each page is kept `ttl` seconds, and callers asking for a page
while it is being fetched wait for that one fetch: a hundred connections asking every second
cost Redis one page a second (issue 10, item 6: 100 connections asking once a second each,
with 113 public rooms, stalled a move in another room for 20 s).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from solrace.protocol.messages import encode, with_ref
from solrace.server.common.lru import LRU
from solrace.server.common.shared import Shared

Page = tuple[list[dict[str, Any]], str | None]

#: pages (cursors) kept at once; a client sending random cursors only evicts old ones
MAX_PAGES = 64


class LobbyCache:
    """The lobby's pages by cursor, shared for `ttl` seconds (server/common/shared.py), and each
    page's `lobby` message encoded once."""

    def __init__(self, fetch: Callable[[str], Awaitable[Page]], ttl: float = 1.0) -> None:
        self.fetch = fetch
        self.shared: Shared[Page] = Shared(ttl, MAX_PAGES)
        #: each page's `lobby` message, encoded once (a page of 100 rows is ~10 KB of msgpack)
        self.frames: LRU[str, tuple[Page, bytes]] = LRU(MAX_PAGES)

    @property
    def ttl(self) -> float:
        return self.shared.ttl

    @ttl.setter
    def ttl(self, seconds: float) -> None:
        self.shared.ttl = seconds

    @property
    def fetches(self) -> int:
        """Pages read from the store (what the cache saved is requests minus this)."""
        return self.shared.fetches

    async def frame(self, after: str, ref: int | None) -> bytes:
        """The `lobby` reply for the page after `after`, as a frame: the page's rows are
        encoded once for every asker, only the `ref` is added to each."""
        page = await self.page(after)
        kept = self.frames.get(after)
        if kept is None or kept[0] is not page:
            body = encode({"type": "lobby", "rooms": page[0], "next": page[1]})
            kept = (page, body)
            self.frames.put(after, kept)
        return with_ref(kept[1], ref)

    async def page(self, after: str = "") -> Page:
        """The page after the cursor `after` ("" = the first), at most `ttl` seconds old."""
        return await self.shared.get(after, lambda: self.fetch(after))

    def clear(self) -> None:
        """A row this process wrote changed: its next asker reads the store again (another
        process's changes show within `ttl`)."""
        self.shared.clear()
