-- KEYS: conn events fence ; ARGV: field delta channel maxlen on_event off_event ttl origin always
-- always = '1': emit the payload even when the count did not cross zero (the watchers count)
-- The spectators' count is also kept in the room's fence when it has one (owned.lua reads it).
local before = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local after = redis.call('HINCRBY', KEYS[1], ARGV[1], tonumber(ARGV[2]))
if after < 0 then redis.call('HSET', KEYS[1], ARGV[1], 0); after = 0 end
if ARGV[1] == 'spectators' and redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('HSET', KEYS[3], 'watching', after)
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[7]))
local changed = (before > 0) ~= (after > 0)
local payload = ARGV[5]
if after == 0 then payload = ARGV[6] end
if (changed or ARGV[9] == '1') and payload ~= '' then
  fold(KEYS[3], false)
  local n = top(KEYS[2]) + 1
  redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[4], n .. '-0', 'd', payload)
  tail_past(KEYS[3], n)
  redis.call('PUBLISH', ARGV[3], 'e' .. ARGV[8] .. n .. ':' .. payload)
  return {after, n}
end
return {after, 0}
