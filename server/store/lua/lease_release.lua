-- KEYS: lease fence ; ARGV: owner
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
local ep, who = string.match(cur, '^(%d+):(.*)$')
if who ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[2], 'released', '1')
return 1
