-- KEYS: rows codes ; ARGV: after limit now keep_ms
-- Returns {next, code, row, code, row, ...}: next is the cursor of the following page ('' at
-- the end). A row not written for keep_ms belongs to a room that has expired: dropped.
local start = '-'
if ARGV[1] ~= '' then start = '(' .. ARGV[1] end
local limit = tonumber(ARGV[2])
local codes = redis.call('ZRANGEBYLEX', KEYS[2], start, '+', 'LIMIT', 0, limit + 1)
local nxt = ''
if #codes > limit then
  codes[#codes] = nil
  nxt = codes[#codes]
end
local out = {nxt}
local oldest = tonumber(ARGV[3]) - tonumber(ARGV[4])
for _, code in ipairs(codes) do
  local v = redis.call('HGET', KEYS[1], code)
  local at, row = 0, ''
  if v then
    local a = string.find(v, ':', 1, true)
    local b = a and string.find(v, ':', a + 1, true)
    if b then
      at = tonumber(string.sub(v, a + 1, b - 1)) or 0
      row = string.sub(v, b + 1)
    end
  end
  if row == '' or at < oldest then
    redis.call('ZREM', KEYS[2], code)
    if v and row ~= '' then redis.call('HDEL', KEYS[1], code) end
  else
    out[#out + 1] = code
    out[#out + 1] = row
  end
end
return out
