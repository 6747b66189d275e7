-- KEYS: one deadline bucket ; ARGV: now limit lease_until. The due members, leased: each stays
-- in the bucket with its score moved to lease_until, so one caller gets it now and, should its
-- handler fail or its process die, whoever claims after lease_until gets it again.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], 'XX', ARGV[3], member) end
return due
