-- KEYS: events fence ; ARGV: after
-- A client catching up: the lease holder's tail folded in (tail.lua), then the room's last
-- event number and the events after `after`, in one step. {last, false} when they cannot be
-- given: `after` is a number the room never reached (negative, or past its count) or some of
-- the events are gone (the stream is trimmed lazily: what lies past MAXLEN counts as gone).
fold(KEYS[2], false)
local last = top(KEYS[1])
local after = tonumber(ARGV[1])
if after < 0 or after > last or after < last - MAXLEN then return {last, false} end
return {last, redis.call('XRANGE', KEYS[1], (after + 1) .. '-0', '+')}
