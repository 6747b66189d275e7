"""The one bounded cache type of the server: a map of at most `size` entries, least recently
used forgotten first.

Every table a client can grow by asking for new keys (lobby pages, replays, hinted positions,
player ids written lately, shared values: server/common/shared.py) is one of these, so none grows
without bound and each says the same thing about what it forgets.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most `size` entries; `get` and `put` make an entry the most recent, and a `put`
    over the bound forgets the least recent ones. Iteration goes from least to most recent."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("an LRU keeps at least one entry")
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        """The entry's value (now the most recent), or None."""
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def peek(self, key: K) -> V | None:
        """The entry's value without making it recent, or None."""
        return self._entries.get(key)

    def put(self, key: K, value: V) -> None:
        """Keep `value` as the most recent entry, forgetting the least recent over the bound."""
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def pop(self, key: K) -> V | None:
        return self._entries.pop(key, None)

    def oldest(self) -> K | None:
        """The least recently used key (the next one forgotten), or None when empty."""
        return next(iter(self._entries), None)

    def items(self) -> list[tuple[K, V]]:
        """Every entry, least recent first (a copy: the caller may pop while it walks it)."""
        return list(self._entries.items())

    def clear(self) -> None:
        self._entries.clear()

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[K]:
        return iter(self._entries)
