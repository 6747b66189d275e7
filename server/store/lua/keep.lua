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
for k = 1, #KEYS do redis.call('PEXPIRE', KEYS[k], ttl) end
return ttl
