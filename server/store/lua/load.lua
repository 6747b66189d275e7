-- KEYS: meta revs events fence log0..logN ; ARGV: ver (as the caller read it with the document), epoch
-- One consistent cut of a room without MULTI (which redis-py runs in threads on a cluster),
-- with the fence's `sync` as of that cut (the lease holder's appends carry it: `_OWNED`) and
-- who listens (`here`). The lease holder's tail is folded in first (tail.lua), so the logs and
-- the stream hold every stored move; a caller that holds the lease (epoch, the fence's) gets
-- its tail for this `sync` made, for its native appends (`Store.append_native`).
local ver = tonumber(redis.call('HGET', KEYS[1], 'ver') or '0')
if ver ~= tonumber(ARGV[1]) then return {-1} end
fold(KEYS[4], false)
local last = top(KEYS[3])
local fence = redis.call('HMGET', KEYS[4], 'sync', 'epoch', 'here')
local epoch = tonumber(ARGV[2] or '0')
if epoch > 0 and tonumber(fence[2] or '0') == epoch then tail_open(KEYS[4], last) end
local out = {1, redis.call('HGETALL', KEYS[2]), last, fence[1] or '', fence[3] or false}
for k = 5, #KEYS do out[#out + 1] = redis.call('LRANGE', KEYS[k], 0, -1) end
return out
