-- The lease holder's append: the room's one writer, judging moves on its copy in memory.
-- KEYS: fence log revs events here conn ; ARGV: sync seat op entry event board origin epoch n rev
-- epoch: the writer's lease epoch (fencing: refused once another process took the room over).
-- sync: the fence's counter as the holder loaded the room with it (`Store.load`): every
-- acquisition of the lease and every write without it bumps it, so an equal `sync` says that
-- nobody else wrote the room since the copy was loaded.
-- No version, length or revision check is needed: the holder's copy is the room.
-- n: the event's number as the holder counts them (its copy's last event + 1): the stream's
-- own order checks it (XADD refuses a number not above the last); when another writer
-- numbered an event since (a connection counted in or out), the next free number is taken.
-- rev: the seat's revision in the holder's copy. A push leaves it as it is: with the log's
-- length it still names one state of the log (a push changes the length, a pop the
-- revision), which the checked append, the commit and `outcome` compare; a pop bumps it.
-- Refused: {-5, epoch} (the caller's lease or copy is stale: it reloads).
-- Who else listens (`here`: the origins of the processes subscribed, concatenated) and how
-- many spectators watch (`watching`) are kept in the fence itself by the scripts that change
-- them (here.lua, presence.lua, and the lease's acquisition: lease.py), so the one read of the
-- fence answers all four; a fence from before those fields reads the set and the count.
-- MAXLEN and TTL as in append.lua, TRIM (`owned_script`); `top` from top.lua.
local fence = redis.call('HMGET', KEYS[1], 'sync', 'epoch', 'here', 'watching')
if fence[1] ~= ARGV[1] or fence[2] ~= ARGV[8] then
  return {-5, tonumber(fence[2] or '0')}
end
local n = tonumber(ARGV[9])
local added = redis.pcall('XADD', KEYS[4], n .. '-0', 'd', ARGV[5])
if type(added) == 'table' and added.err then
  n = top(KEYS[4]) + 1
  redis.call('XADD', KEYS[4], n .. '-0', 'd', ARGV[5])
end
-- the stream is cut back to MAXLEN once every TRIM events, not at each (an exact trim on every
-- XADD was a fifth of the script's cost); it holds at most MAXLEN + TRIM - 1, and what is
-- past MAXLEN counts as gone (`events_after`), so a client sees the same history
if n % TRIM == 0 then redis.call('XTRIM', KEYS[4], 'MAXLEN', MAXLEN) end
local len
local rev = tonumber(ARGV[10])
if ARGV[3] == 'push' then
  len = redis.call('RPUSH', KEYS[2], ARGV[4])
  -- the seat's first move of the round gives its log the room's lifetime
  if len == 1 and TTL > 0 then redis.call('PEXPIRE', KEYS[2], TTL) end
else
  redis.call('RPOP', KEYS[2])
  len = redis.call('LLEN', KEYS[2])
  rev = redis.call('HINCRBY', KEYS[3], ARGV[2], 1)
  if TTL > 0 then redis.call('PEXPIRE', KEYS[3], TTL) end
end
local others, watching
if fence[3] and fence[4] then
  others = fence[3] ~= '' and fence[3] ~= ARGV[7]
  watching = tonumber(fence[4])
else
  -- another process listens when `here` holds an origin other than ours (one read of two members)
  local here = redis.call('SRANDMEMBER', KEYS[5], 2)
  others = #here > 1 or (#here == 1 and here[1] ~= ARGV[7])
  watching = tonumber(redis.call('HGET', KEYS[6], 'spectators') or '0')
end
if others then
  local channel = string.sub(KEYS[1], 1, -6) .. 'pub'
  redis.call('PUBLISH', channel, 'e' .. ARGV[7] .. n .. ':' .. ARGV[5])
  if ARGV[6] ~= '' and watching > 0 then redis.call('PUBLISH', channel, 'b' .. ARGV[7] .. ARGV[6]) end
end
return {len, rev, n, watching}
