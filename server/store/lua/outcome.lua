-- KEYS: log revs events conn fence ; ARGV: seat len rev op entry event
-- Whether an append whose answer was lost (a timeout, a dropped connection) is stored. When it
-- is not, it never will be: the seat's revision moves on, so that append, if it is still on its
-- way or queued behind a busy Redis, is refused when it runs; and the fence's `sync` moves on,
-- which refuses a lease holder's lean append (`_OWNED`) the same way. Returns {0} (not stored)
-- or {1, n, watching, rev}: n is its event's number (0 if the stream no longer has it), rev the
-- seat's revision as the append left it (a lean push: as it was, when nothing bumped it since).
-- A push is stored when the log holds its entry at its place (the lease holder's lean push
-- leaves the revision as it was, so the revision alone cannot say); an undo when it is the one
-- change to the seat's log since (every pop bumps the revision).
-- the lease holder's tail is folded in and deleted (tail.lua): a native append still on its
-- way finds no key and is refused
if redis.call('EXISTS', KEYS[5]) == 1 then fence_off(KEYS[5]) end
local want = tonumber(ARGV[3])
local rev = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
local len = redis.call('LLEN', KEYS[1])
local at = tonumber(ARGV[2])
local stored
if ARGV[4] == 'push' then
  stored = len > at and redis.call('LINDEX', KEYS[1], at) == ARGV[5]
else
  stored = rev == want + 1 and len == at - 1
end
if not stored then
  if rev == want then redis.call('HINCRBY', KEYS[2], ARGV[1], 1) end
  return {0}
end
local n = 0
for _, row in ipairs(redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 200)) do
  if row[2][2] == ARGV[6] then
    n = tonumber(string.match(row[1], '^(%d+)'))
    break
  end
end
if rev ~= want then rev = want + 1 end
return {1, n, tonumber(redis.call('HGET', KEYS[4], 'spectators') or '0'), rev}
