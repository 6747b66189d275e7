local zset, rows, marks, prov = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, at, cut = ARGV[1], ARGV[2], ARGV[3]
local keep, max, cap, n = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local pcap = tonumber(ARGV[8])
local state = fresh(marks, id, tonumber(at), tonumber(cut), max)
if state ~= 'fresh' then return state end
for i = 0, n - 1 do
  local base = 9 + 5 * i
  local now = redis.call('HGET', rows, ARGV[base]) or ''
  if now ~= ARGV[base + 1] then return 'conflict' end
end
for i = 0, n - 1 do
  local base = 9 + 5 * i
  local pid = ARGV[base]
  if ARGV[base + 4] == '1' then
    redis.call('ZADD', zset, ARGV[base + 2], pid)
    redis.call('ZREM', prov, pid)
  else
    redis.call('ZREM', zset, pid)
    redis.call('ZADD', prov, at, pid)
  end
  redis.call('HSET', rows, pid, ARGV[base + 3])
end
if cap > 0 and redis.call('ZCARD', zset) > cap then
  local gone = redis.call('ZRANGE', zset, cap, -1)
  redis.call('ZREMRANGEBYRANK', zset, cap, -1)
  redis.call('HDEL', rows, unpack(gone))
end
if pcap > 0 and redis.call('ZCARD', prov) > pcap then
  local gone = redis.call('ZRANGE', prov, 0, -(pcap + 1))
  redis.call('ZREMRANGEBYRANK', prov, 0, -(pcap + 1))
  redis.call('HDEL', rows, unpack(gone))
end
mark(marks, id, at, cut, max, keep)
return 'applied'
