local start, count = tonumber(ARGV[1]), tonumber(ARGV[2])
local flat = redis.call('ZRANGE', KEYS[1], start, start + count - 1, 'WITHSCORES')
local members = {}
for i = 1, #flat, 2 do members[#members + 1] = flat[i] end
local rows = {}
if #members > 0 then rows = redis.call('HMGET', KEYS[2], unpack(members)) end
return {redis.call('ZCARD', KEYS[1]), flat, rows}
