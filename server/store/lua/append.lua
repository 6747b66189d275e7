-- KEYS: meta log revs events conn fence here ; ARGV: ver len rev seat op entry event board origin epoch
-- MAXLEN and TTL are the store's own, written in when the script is registered (`append_script`);
-- the room's channel is its meta key with 'pub' for 'meta' (fewer arguments to send per move);
-- the event's number follows the stream's last (`top`, top.lua).
-- The move is published only when another process listens to the room (`here`: the origins of
-- the processes subscribed to it): no process reads back and drops its own copies.
-- op 'push' appends entry; op 'pop' removes the last entry, which must equal entry.
-- The board is published only while the room has spectators; the reply carries their count.
-- epoch: the writer's lease epoch (server/store/lease.py), 0 = written without the lease
local epoch = tonumber(ARGV[10])
local fence = tonumber(redis.call('HGET', KEYS[6], 'epoch') or '0')
if epoch > 0 and fence ~= epoch then return {-5, fence} end
-- the lease holder's tail first (tail.lua): the holder's own, kept; without the lease, fenced
-- off (deleted, `sync` moved) when the checks below pass, else just folded
if epoch == 0 and fence > 0 then fold(KEYS[6], true) else fold(KEYS[6], false) end
local ver = tonumber(redis.call('HGET', KEYS[1], 'ver') or '0')
if ver ~= tonumber(ARGV[1]) then return {-1, ver} end
local len = redis.call('LLEN', KEYS[2])
if len ~= tonumber(ARGV[2]) then return {-2, len} end
local rev = tonumber(redis.call('HGET', KEYS[3], ARGV[4]) or '0')
if rev ~= tonumber(ARGV[3]) then return {-3, rev} end
if ARGV[5] == 'push' then
  redis.call('RPUSH', KEYS[2], ARGV[6])
  len = len + 1
else
  if redis.call('LINDEX', KEYS[2], -1) ~= ARGV[6] then return {-4, len} end
  redis.call('RPOP', KEYS[2])
  len = len - 1
end
if epoch == 0 and fence > 0 then redis.call('HINCRBY', KEYS[6], 'sync', 1) end
rev = redis.call('HINCRBY', KEYS[3], ARGV[4], 1)
local n = top(KEYS[4]) + 1
redis.call('XADD', KEYS[4], 'MAXLEN', MAXLEN, n .. '-0', 'd', ARGV[7])
tail_past(KEYS[6], n)
local channel = string.sub(KEYS[1], 1, -5) .. 'pub'
local others = redis.call('SCARD', KEYS[7]) - redis.call('SISMEMBER', KEYS[7], ARGV[9])
if others > 0 then redis.call('PUBLISH', channel, 'e' .. ARGV[9] .. n .. ':' .. ARGV[7]) end
local watching = tonumber(redis.call('HGET', KEYS[5], 'spectators') or '0')
if ARGV[8] ~= '' and watching > 0 and others > 0 then
  redis.call('PUBLISH', channel, 'b' .. ARGV[9] .. ARGV[8])
end
-- a seat's log and the revisions get the room's lifetime with the seat's first store of the
-- round (the lease holder's pushes leave the revision as it was: a log it began has length 1);
-- every commit of the room renews it (a move does not: the document would expire first)
if (rev == 1 or len == 1) and TTL > 0 then
  redis.call('PEXPIRE', KEYS[2], TTL)
  redis.call('PEXPIRE', KEYS[3], TTL)
end
return {len, rev, n, watching}
