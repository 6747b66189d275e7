local stats, marks = KEYS[1], KEYS[2]
local id, at, cut = ARGV[1], ARGV[2], ARGV[3]
local keep, max, game, opts = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], ARGV[7]
local won, time, boarded = ARGV[8] == '1', ARGV[9], ARGV[10] == '1'
local state = fresh(marks, id, tonumber(at), tonumber(cut), max)
if state == 'fresh' then
  redis.call('HINCRBY', stats, game .. ':races', 1)
  if won then
    redis.call('HINCRBY', stats, game .. ':wins', 1)
    if boarded then redis.call('HINCRBY', stats, 'wins:' .. game .. ':' .. opts, 1) end
    local best = redis.call('HGET', stats, game .. ':best_time')
    if time ~= '' and (not best or tonumber(time) < tonumber(best)) then
      redis.call('HSET', stats, game .. ':best_time', time)
    end
  end
  mark(marks, id, at, cut, max, keep)
  if keep > 0 then redis.call('PEXPIRE', stats, keep) end
end
local wins = 0
if boarded then wins = tonumber(redis.call('HGET', stats, 'wins:' .. game .. ':' .. opts) or '0') end
return {state, wins}
