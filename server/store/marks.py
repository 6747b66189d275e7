"""Applied-once marks: Lua helpers that make a race's effect on a player or a board idempotent.

A mark is the race's record id in a sorted set scored by when the race finished, kept in the
same hash tag as what the race changes, so one script checks the mark, makes the change and
sets the mark in one step. The set is bounded two ways: marks older than `keep` ms go, and
at most `max` are kept (the oldest go first). A race is applied only if its mark is absent
*and* it could not have been dropped: it is no older than `keep`, and, while the set is full,
newer than every mark kept. So applying the same race again, from a retry, another process
or a restarted server, never changes anything, and the marks never grow past `max`.

`FRESH` and `MARK` are Lua source to prepend to a script; their arguments are numbers
(ms) except `marks` (a key) and `id`.
"""

from __future__ import annotations

FRESH = """
local function fresh(marks, id, at, cutoff, max)
  if redis.call('ZSCORE', marks, id) then return 'dup' end
  if at < cutoff then return 'stale' end
  if max > 0 and redis.call('ZCARD', marks) >= max then
    local low = redis.call('ZRANGE', marks, 0, 0, 'WITHSCORES')
    if low[2] and at <= tonumber(low[2]) then return 'stale' end
  end
  return 'fresh'
end
"""

MARK = """
local function mark(marks, id, at, cutoff, max, keep)
  redis.call('ZADD', marks, at, id)
  redis.call('ZREMRANGEBYSCORE', marks, '-inf', '(' .. cutoff)
  if max > 0 then redis.call('ZREMRANGEBYRANK', marks, 0, -(max + 1)) end
  if keep > 0 then redis.call('PEXPIRE', marks, keep) end
end
"""


def cutoff(now_ms: int, keep_ms: int) -> int:
    """The oldest finish time a mark is kept for (0 keeps every age)."""
    return now_ms - keep_ms if keep_ms > 0 else 0
