-- The number of a room's last event: its stream's last entry, "<n>-0" (0: no event yet).
-- The stream is the counter (no `seq` key to INCR): the lease holder's lean append numbers
-- its event itself (owned.lua), every other writer takes the number after this one. A stream
-- is never emptied while its room lives (trimming keeps at least one entry), so its last
-- entry is its last number.
local function top(events)
  local last = redis.call('XREVRANGE', events, '+', '-', 'COUNT', 1)[1]
  if last then return tonumber(string.match(last[1], '^(%d+)')) end
  return 0
end
