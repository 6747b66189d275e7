-- KEYS: here fence ; ARGV: origin on ttl
-- List (on = '1') or unlist this process among those listening to the room, and keep the
-- list, concatenated, in the room's fence when it has one (owned.lua reads it there).
-- A change of who listens fences the lease holder's tail off (tail.lua): the holder reloads
-- and learns whether to publish its moves (lua/owned.lua) or not (a native append).
local changed
if ARGV[2] == '1' then
  changed = redis.call('SADD', KEYS[1], ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
else
  changed = redis.call('SREM', KEYS[1], ARGV[1])
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('HSET', KEYS[2], 'here', table.concat(redis.call('SMEMBERS', KEYS[1])))
  if changed == 1 then fence_off(KEYS[2]) end
end
return 1
