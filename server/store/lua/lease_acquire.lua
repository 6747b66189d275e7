-- KEYS: lease fence conn here ; ARGV: owner ttl_ms keep_ms
-- -> {epoch, taken_over}: epoch 0 = another process holds the lease
-- An acquisition also writes into the fence who listens to the room (`here`, the origins
-- concatenated) and its spectators' count (`watching`): the store's scripts keep both there
-- from then on, and the lease holder's append reads them with the fence (lua/owned.lua).
local cur = redis.call('GET', KEYS[1])
if cur then
  local ep, who = string.match(cur, '^(%d+):(.*)$')
  if who == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
    redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]))
    return {tonumber(ep), 0}
  end
  return {0, 0}
end
-- a new epoch: the last holder's tail is folded in and deleted (tail.lua), its appends refused
if redis.call('EXISTS', KEYS[2]) == 1 then fold(KEYS[2], true) end
local prev = redis.call('HGET', KEYS[2], 'owner')
local released = redis.call('HGET', KEYS[2], 'released')
local ep = redis.call('HINCRBY', KEYS[2], 'epoch', 1)
redis.call('HINCRBY', KEYS[2], 'sync', 1)
redis.call('HSET', KEYS[2], 'owner', ARGV[1], 'released', '0',
  'here', table.concat(redis.call('SMEMBERS', KEYS[4])),
  'watching', tonumber(redis.call('HGET', KEYS[3], 'spectators') or '0'))
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]))
redis.call('SET', KEYS[1], ep .. ':' .. ARGV[1], 'PX', tonumber(ARGV[2]))
local took = 0
if prev and prev ~= ARGV[1] and released ~= '1' then took = 1 end
return {ep, took}
