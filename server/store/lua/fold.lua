-- KEYS: fence ; fold the lease holder's tail into the seat logs and the room's stream (tail.lua):
-- the holder's own, every FOLD_EVERY events, and a reader's before it reads the stream.
fold(KEYS[1], false)
return 1
