local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
if not rank then return nil end
return {rank, redis.call('ZSCORE', KEYS[1], ARGV[1]), redis.call('HGET', KEYS[2], ARGV[1])}
