-- KEYS: meta revs events fence log0..logN ; ARGV: ver (as the caller read it with the document)
-- One consistent cut of a room without MULTI (which redis-py runs in threads on a cluster),
-- with the fence's `sync` as of that cut (the lease holder's appends carry it: `_OWNED`).
local ver = tonumber(redis.call('HGET', KEYS[1], 'ver') or '0')
if ver ~= tonumber(ARGV[1]) then return {-1} end
local out = {1, redis.call('HGETALL', KEYS[2]), top(KEYS[3]),
  redis.call('HGET', KEYS[4], 'sync') or ''}
for k = 5, #KEYS do out[#out + 1] = redis.call('LRANGE', KEYS[k], 0, -1) end
return out
