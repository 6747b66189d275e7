"""Redis plumbing: the connection (one Redis or a cluster), the key map, the room store and its
Lua scripts, leases and fencing, pub/sub, the writes of one loop turn as one pipeline, the
applied-once marks, the server secret, and the private redis-server for `solrace serve`.

May import: `common` (and engine, protocol)."""
