-- KEYS: one deadline bucket ; ARGV: member lease_until [again_at]. A claimed deadline whose
-- handler ran: removed (or, with again_at, due again then), unless it was set anew meanwhile
-- (its score is no longer the lease: a new grace period, a re-armed clock) -- that one stays.
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not at or tonumber(at) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] then redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[1])
else redis.call('ZREM', KEYS[1], ARGV[1]) end
return 1
