local function mark(marks, id, at, cutoff, max, keep)
  redis.call('ZADD', marks, at, id)
  redis.call('ZREMRANGEBYSCORE', marks, '-inf', '(' .. cutoff)
  if max > 0 then redis.call('ZREMRANGEBYRANK', marks, 0, -(max + 1)) end
  if keep > 0 then redis.call('PEXPIRE', marks, keep) end
end
