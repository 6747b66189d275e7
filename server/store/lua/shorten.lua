-- KEYS: conn meta other room keys... ; ARGV: idle_ms
-- A room nobody is connected to (every count in `conn` 0): each of its keys that would live
-- longer than idle_ms gets idle_ms (never lengthened). -1: someone is connected; -2: no room.
local total = 0
for _, v in ipairs(redis.call('HVALS', KEYS[1])) do total = total + (tonumber(v) or 0) end
if total > 0 then return -1 end
if redis.call('EXISTS', KEYS[2]) == 0 then return -2 end
local ttl, n = tonumber(ARGV[1]), 0
-- KEYS[5] is the fence: the lease holder's tail (tail.lua) follows the room's lifetime too
local keys = {unpack(KEYS)}
local tail = tail_of(KEYS[5])
if tail and redis.call('EXISTS', tail) == 1 then keys[#keys + 1] = tail end
for k = 1, #keys do
  local left = redis.call('PTTL', keys[k])
  if left == -1 or left > ttl then
    redis.call('PEXPIRE', keys[k], ttl)
    n = n + 1
  end
end
return n
