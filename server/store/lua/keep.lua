-- KEYS: conn meta other room keys... ; ARGV: idle_ms active_ms
-- A room in its lobby: with nobody connected (every count in `conn` 0) its keys get the short
-- idle lifetime (never lengthened by this); with someone, the active one again.
local total = 0
for _, v in ipairs(redis.call('HVALS', KEYS[1])) do total = total + (tonumber(v) or 0) end
local left = redis.call('PTTL', KEYS[2])
if left == -2 then return -2 end
local ttl = tonumber(ARGV[2])
if total == 0 then
  ttl = tonumber(ARGV[1])
  if left >= 0 and left <= ttl then return 0 end
elseif left > tonumber(ARGV[1]) then
  return 0
end
-- KEYS[5] is the fence: the lease holder's tail (tail.lua) follows the room's lifetime too
local keys = {unpack(KEYS)}
local tail = tail_of(KEYS[5])
if tail and redis.call('EXISTS', tail) == 1 then keys[#keys + 1] = tail end
for k = 1, #keys do redis.call('PEXPIRE', keys[k], ttl) end
return ttl
