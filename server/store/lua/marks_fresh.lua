local function fresh(marks, id, at, cutoff, max)
  if redis.call('ZSCORE', marks, id) then return 'dup' end
  if at < cutoff then return 'stale' end
  if max > 0 and redis.call('ZCARD', marks) >= max then
    local low = redis.call('ZRANGE', marks, 0, 0, 'WITHSCORES')
    if low[2] and at <= tonumber(low[2]) then return 'stale' end
  end
  return 'fresh'
end
