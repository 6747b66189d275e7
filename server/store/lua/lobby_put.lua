-- KEYS: rows codes gone ; ARGV: code ver row now keep_ms
-- Writes the room's row (or, with an empty row, unlists it) unless a newer version is there.
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local have = tonumber(string.match(cur, '^(%d+):'))
  if have and have >= tonumber(ARGV[2]) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ':' .. ARGV[4] .. ':' .. ARGV[3])
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
else
  redis.call('ZADD', KEYS[2], 0, ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
end
local old = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', tonumber(ARGV[4]) - tonumber(ARGV[5]), 'LIMIT', 0, 20)
for _, c in ipairs(old) do
  redis.call('ZREM', KEYS[3], c)
  redis.call('HDEL', KEYS[1], c)
end
return 1
