-- KEYS: here fence ; ARGV: origin on ttl
-- List (on = '1') or unlist this process among those listening to the room, and keep the
-- list, concatenated, in the room's fence when it has one (owned.lua reads it there).
if ARGV[2] == '1' then
  redis.call('SADD', KEYS[1], ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
else
  redis.call('SREM', KEYS[1], ARGV[1])
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('HSET', KEYS[2], 'here', table.concat(redis.call('SMEMBERS', KEYS[1])))
end
return 1
