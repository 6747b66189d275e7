"""Applied-once marks: Lua helpers that make a race's effect on a player or a board idempotent.

A mark is the race's record id in a sorted set scored by when the race finished, kept in the
same hash tag as what the race changes, so one script checks the mark, makes the change and
sets the mark in one step. The set is bounded two ways: marks older than `keep` ms go, and
at most `max` are kept (the oldest go first). A race is applied only if its mark is absent
*and* it could not have been dropped: it is no older than `keep`, and, while the set is full,
newer than every mark kept. So applying the same race again, from a retry, another process
or a restarted server, never changes anything, and the marks never grow past `max`.

`FRESH` and `MARK` are Lua source to prepend to a script (lua/marks_fresh.lua,
lua/marks_mark.lua); their arguments are numbers (ms) except `marks` (a key) and `id`.
"""

from __future__ import annotations

from solrace.server.store.scripts import source

FRESH = source("marks_fresh")

MARK = source("marks_mark")


def cutoff(now_ms: int, keep_ms: int) -> int:
    """The oldest finish time a mark is kept for (0 keeps every age)."""
    return now_ms - keep_ms if keep_ms > 0 else 0
