"""server/common/lru.py: the one bounded cache type, and every bounded cache of the server uses it."""

from __future__ import annotations

import pytest
from solrace.server.common.lru import LRU
from solrace.server.common.shared import Shared
from solrace.server.league.replay import Replays
from solrace.server.race.lobby import MAX_PAGES, LobbyCache
from solrace.server.solver.solving import HINTS_KEPT, SolverPool


def test_forgets_the_least_recently_used_first() -> None:
    lru: LRU[str, int] = LRU(3)
    for k, v in [("a", 1), ("b", 2), ("c", 3)]:
        lru.put(k, v)
    assert lru.get("a") == 1  # a is now the most recent
    assert lru.peek("b") == 2  # peek does not make b recent
    lru.put("d", 4)
    assert list(lru) == ["c", "a", "d"] and "b" not in lru and len(lru) == 3
    lru.put("c", 30)  # a put makes the entry recent too
    assert lru.oldest() == "a" and lru.items()[-1] == ("c", 30)
    assert lru.pop("a") == 1 and lru.pop("a") is None and lru.get("zz") is None
    lru.clear()
    assert len(lru) == 0 and lru.oldest() is None
    with pytest.raises(ValueError):
        LRU(0)


async def test_every_bounded_cache_is_an_lru() -> None:
    async def fetch(after: str) -> tuple[list[dict[str, object]], str | None]:
        return [], None

    lobby = LobbyCache(fetch)
    caches = {
        "lobby frames": (lobby.frames, MAX_PAGES),
        "lobby pages": (lobby.shared.kept, MAX_PAGES),
        "replays": (Replays(size=5).kept, 5),
        "shared": (Shared(1.0, 9).kept, 9),
        "hints": (SolverPool(workers=1)._hints, HINTS_KEPT),
    }
    for name, (cache, size) in caches.items():
        assert isinstance(cache, LRU) and cache.size == size, name


async def test_shared_forgets_the_expired_before_the_recent() -> None:
    shared: Shared[int] = Shared(ttl=60.0, size=2)

    async def value(v: int) -> int:
        return v

    await shared.get("a", lambda: value(1))
    await shared.get("b", lambda: value(2))
    shared.kept.put("a", (0.0, 1))  # a has expired (and is now the most recent)
    await shared.get("c", lambda: value(3))
    assert sorted(shared.kept) == ["b", "c"]
    await shared.get("b", lambda: value(0))  # kept: not fetched again
    await shared.get("d", lambda: value(4))  # none expired: the least recent (c) goes
    assert list(shared.kept) == ["b", "d"] and shared.fetches == 4
