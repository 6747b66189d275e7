-- KEYS: meta events revs conn fence log0..logN ; ARGV: ver doc channel maxlen ttl flags origin nrev epoch (seat rev len)* events*
-- flags: 'c' clears the logs (a new round), 't' trims the stream to this commit's events (finished)
-- epoch: the writer's lease epoch (server/store/lease.py), 0 = written without the lease
-- A write without the lease (epoch 0) to a room with a fence bumps the fence's `sync`: the
-- lease holder's lean appends (`_OWNED`) check it, so its copy in memory is reloaded first.
-- (seat rev len): the commit stands only while each such seat's log is as the caller judged
-- it: its revision and, unless len is -1, its length (the lease holder's pushes leave the
-- revision as it was, so a revision alone no longer names the log's state). The events are
-- numbered after the stream's last (`top`, top.lua).
local epoch = tonumber(ARGV[9])
local fence = tonumber(redis.call('HGET', KEYS[5], 'epoch') or '0')
if epoch > 0 and fence ~= epoch then return {-5, fence} end
-- the lease holder's tail first (tail.lua): kept for the holder, deleted without the lease
-- (with `sync` moved below), and on a finish (the race's moves are all in; the holder makes
-- a new one at its next load)
local finish = string.find(ARGV[6], 't', 1, true)
fold(KEYS[5], (epoch == 0 and fence > 0) or finish ~= nil)
local ver = tonumber(redis.call('HGET', KEYS[1], 'ver') or '0')
if ver ~= tonumber(ARGV[1]) then return {-1, ver} end
local nrev = tonumber(ARGV[8])
for i = 0, nrev - 1 do
  local seat = ARGV[10 + 3 * i]
  local want = tonumber(ARGV[11 + 3 * i])
  local len = tonumber(ARGV[12 + 3 * i])
  local have = tonumber(redis.call('HGET', KEYS[3], seat) or '0')
  if have ~= want then return {-3, tonumber(seat), have} end
  if len >= 0 then
    local got = redis.call('LLEN', KEYS[6 + tonumber(seat)])
    if got ~= len then return {-3, tonumber(seat), have} end
  end
end
if epoch == 0 and fence > 0 then redis.call('HINCRBY', KEYS[5], 'sync', 1) end
redis.call('HSET', KEYS[1], 'doc', ARGV[2], 'ver', ver + 1)
if string.find(ARGV[6], 'c', 1, true) then
  for k = 6, #KEYS do redis.call('DEL', KEYS[k]) end
  redis.call('DEL', KEYS[3])
end
local out = {ver + 1}
local n = top(KEYS[2])
for i = 10 + 3 * nrev, #ARGV do
  n = n + 1
  redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[4], n .. '-0', 'd', ARGV[i])
  redis.call('PUBLISH', ARGV[3], 'e' .. ARGV[7] .. n .. ':' .. ARGV[i])
  out[#out + 1] = n
end
tail_past(KEYS[5], n)
if finish then
  redis.call('XTRIM', KEYS[2], 'MAXLEN', math.max(1, #ARGV - 9 - 3 * nrev))
end
local ttl = tonumber(ARGV[5])
if ttl > 0 then
  for k = 1, #KEYS do redis.call('PEXPIRE', KEYS[k], ttl) end
end
return out
