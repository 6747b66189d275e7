local old = redis.call('ZSCORE', KEYS[1], ARGV[1])
local mode = ARGV[4]
if old and (mode == 'first' or (mode == 'best' and tonumber(old) <= tonumber(ARGV[2]))) then
  return {0, old}
end
if mode == 'add' then
  redis.call('ZINCRBY', KEYS[1], ARGV[2], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
local cap = tonumber(ARGV[6])
if cap > 0 and redis.call('ZCARD', KEYS[1]) > cap then
  local gone = redis.call('ZRANGE', KEYS[1], cap, -1)
  redis.call('ZREMRANGEBYRANK', KEYS[1], cap, -1)
  redis.call('HDEL', KEYS[2], unpack(gone))
end
local ttl = tonumber(ARGV[5])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
local now = redis.call('ZSCORE', KEYS[1], ARGV[1])
if now then return {1, now} end
return {0, ARGV[2]}
