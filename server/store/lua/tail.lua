-- The lease holder's tail: `room:{C}:tail:<sync>`, a stream that only the holder whose copy
-- was loaded under the fence's counter `sync` writes, with one native command per move
-- (`XADD tail NOMKSTREAM <n>-0 s seat o op m entry d event`: Store.append_native). The key is
-- the fence: it exists only while that holder may write (load.lua makes it for the holder);
-- every other writer folds it into the seat logs and the room's stream first, and one that
-- writes without the lease (a takeover, a write without the lease, a lost answer's outcome,
-- a change in who listens) deletes it and moves `sync`: the stale holder's next XADD then
-- finds no key (NOMKSTREAM: nil) and is refused. Its entries' ids are the events' numbers:
-- a writer that numbers an event beside the holder's (a connection counted in) raises the
-- tail's last id past it (`tail_past`), so the holder's next XADD under an old number is
-- refused by the stream's own order and the holder reloads.
-- Needs MAXLEN and TTL (scripts.py `folding`).
local function tail_of(fence)
  local sync = redis.call('HGET', fence, 'sync')
  if not sync then return nil end
  return string.sub(fence, 1, -6) .. 'tail:' .. sync
end

-- Apply the tail's moves to the seat logs (a pop bumps the seat's revision) and its events to
-- the room's stream, in order, and empty it (the key stays, with its last id, unless `drop`).
local function fold(fence, drop)
  local tail = tail_of(fence)
  if not tail then return end
  local rows = redis.call('XRANGE', tail, '-', '+')
  if #rows > 0 then
    local room = string.sub(fence, 1, -6)
    local events, revs = room .. 'events', room .. 'revs'
    -- a seat's pushes go in one RPUSH (a pop of that seat sends them first: order is per seat)
    local pushes, seats = {}, {}
    local function push(seat)
      local entries = pushes[seat]
      if entries and #entries > 0 then
        local log = room .. 'log:' .. seat
        if redis.call('RPUSH', log, unpack(entries)) == #entries and TTL > 0 then
          redis.call('PEXPIRE', log, TTL)
        end
        pushes[seat] = {}
      end
    end
    for _, row in ipairs(rows) do
      local f = row[2]
      local seat = f[2]
      if f[4] == 'p' then
        if not pushes[seat] then
          pushes[seat] = {}
          seats[#seats + 1] = seat
        end
        local entries = pushes[seat]
        entries[#entries + 1] = f[6]
      else
        push(seat)
        redis.call('RPOP', room .. 'log:' .. seat)
        redis.call('HINCRBY', revs, seat, 1)
        if TTL > 0 then redis.call('PEXPIRE', revs, TTL) end
      end
      redis.pcall('XADD', events, row[1], 'd', f[8])
    end
    for _, seat in ipairs(seats) do push(seat) end
    redis.call('XTRIM', events, 'MAXLEN', MAXLEN)
    if not drop then
      redis.call('XTRIM', tail, 'MAXLEN', 0)
      if TTL > 0 then redis.call('PEXPIRE', tail, TTL) end
    end
  end
  if drop then redis.call('DEL', tail) end
end

-- Fold the tail and delete it, and move the fence's counter: the holder's copy is stale.
local function fence_off(fence)
  fold(fence, true)
  redis.call('HINCRBY', fence, 'sync', 1)
end

-- An event numbered n by another writer: the holder's tail refuses any number up to n.
local function tail_past(fence, n)
  local tail = tail_of(fence)
  if tail and n > 0 and redis.call('EXISTS', tail) == 1 then
    redis.pcall('XSETID', tail, n .. '-0')
  end
end

-- The holder's tail for the fence's current counter, made when missing, its last id just
-- below the next event's number (`after`: the room's last event).
local function tail_open(fence, after)
  local tail = tail_of(fence)
  if tail and redis.call('EXISTS', tail) == 0 then
    redis.call('XADD', tail, after .. '-1', 'h', '1')
    redis.call('XTRIM', tail, 'MAXLEN', 0)
    if TTL > 0 then redis.call('PEXPIRE', tail, TTL) end
  end
end
